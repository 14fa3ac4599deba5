"""``python -m bench.recall_quality``: does consolidated memory answer questions better than
the raw transcript? (issue 30, "The benchmark").

A generated corpus of long two-person conversations (``corpus``: 20+ sessions over months,
phatic talk, lower-case facts, relative dates, third parties, corrections) with single-hop,
multi-hop, temporal and update questions, each with its evidence turns and gold answer,
derived from the facts' records and never from the engine's text functions. The corpus is fed
to the pure engine as memstream input (``feed``), once per built-in profile (``systems``),
and every question is answered twice (``rankings``): by plain cosine over the active
memories, and by the project's own recall on PostgreSQL. ``scoring`` says what counts as an
answer and as found evidence; ``report`` writes ``bench/results/recall_quality-*.md``.

Module map: ``when`` (relative dates → absolute), ``phrases`` (what people say), ``corpus``
(the generator), ``feed`` (corpus → ``MemoryEvent``), ``embeddings`` (MiniLM, cached),
``systems`` (raw and each profile: active memories, lineage, cost), ``rankings`` (cosine and
recall), ``scoring`` (pure scoring), ``run`` (the phases), ``report``.

None of these modules may import ``streams.engine.text`` or ``streams.engine.judge``: a
benchmark that grades the writers with the writers' own functions proves nothing.
"""
