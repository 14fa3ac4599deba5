"""What a forget does to what was made from the forgotten memory (docs/consolidation.md,
"forgetting").

A user who asks to forget something must not hear it again, so a forget reaches every memory
made from the forgotten one, directly or not (the walk of ``streams.engine.lineage``), and
takes the forgotten words out of each, in the order they were made (a summary after the
narrative it summarizes). What happens to each follows from how it was made:

* a copy (promotion, aging, scope) goes with its source; a copy of a memory the forget
  rewrote takes its source's new content;
* a statement about a group (pattern, insight, procedure, extracted fact) is forgotten;
* a memory a deterministic writer made from several (observation, narrative or digest,
  summary, behavioural profile) is written again, same id, next version, from the sources
  that remain: consolidation compresses, it does not forget what is still true. With no
  source left, or when the writer makes nothing of them (an observation of a question whose
  answer was forgotten), it is forgotten, and the remaining sources it carried (archived
  into it) come back to active memory, as they were written;
* a merge survivor keeps its own content and loses its ``supersedes`` link.

The ledger holds the outcome, never a reason to recompute it: a ``MemoryForgotten`` for
each memory forgotten, a ``MemoryStored`` (next version) for each one written again or
brought back, so a replay of the ledger reaches the same state and read models without
running a writer. The writers are the rules' own, deterministic, with the deployment's
policy and embedder.

Pure: no I/O, no clock; ids derive from the forget's input event (``ingest``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from streams.engine import ledger
from streams.engine.context import Embed
from streams.engine.embedder import hashing_embedding
from streams.engine.lineage import (
    SOURCE_KEYS,
    Derivation,
    derivations_of,
    descendants,
    listed,
    sources_of,
    without_sources,
)
from streams.engine.model import CLAIM, Memory
from streams.engine.passing_index import PASSING
from streams.engine.policy import Policy
from streams.engine.rules.narratives import digest_of, narrate
from streams.engine.rules.observations import named_speaker, turn_of
from streams.engine.similarity import mean_embedding
from streams.engine.text.budget import content_bytes
from streams.engine.text.observation import own_words, stated_part, write_observations
from streams.engine.text.profile import SupersessionMemo, write_profile
from streams.engine.text.summary import write_summary
from streams.engine.user_state import OBSERVED, SUMMARIZED_INTO, MemoryRecord, UserView
from streams.engine.validation import DEFAULT_MAX_CONTENT_BYTES

FORGOTTEN = "forgotten"
REDERIVED = "rederived"  # written again from the sources that remain
RELINKED = "relinked"  # a survivor without its link to a forgotten memory
REACTIVATED = "reactivated"  # a source back in active memory: what carried it is forgotten


@dataclass(frozen=True)
class Rewriting:
    """What writing a derived memory again needs besides the state: the policy whose writers
    made it, the embedding width and embedder, and the content limit."""

    policy: Policy = field(default_factory=Policy)
    dim: int = 384
    embed: Embed | None = None
    max_content_bytes: int = DEFAULT_MAX_CONTENT_BYTES

    def embedding(self, text: str) -> bytes:
        if self.embed is None:
            return hashing_embedding(text, self.dim)
        vectors = self.embed([text])
        if len(vectors) != 1:
            raise ValueError(f"the embedder returned {len(vectors)} vectors for 1")
        return vectors[0]


@dataclass(frozen=True, slots=True)
class Outcome:
    """One change the forget makes: ``action`` names it in the decision's id."""

    action: str
    subject: str
    payload: ledger.LedgerPayload


def forget_with_lineage(
    view: UserView, forgotten: MemoryRecord, reason: str, rewriting: Rewriting
) -> list[Outcome]:
    """Everything forgetting ``forgotten`` changes, in the order to apply it."""
    return _Cascade(view, rewriting).run(forgotten, reason)


class _Cascade:
    def __init__(self, view: UserView, rewriting: Rewriting) -> None:
        self.view = view
        self.rewriting = rewriting
        self.changed: dict[str, MemoryRecord] = {}  # what this forget has written so far
        self.forgotten: set[str] = set()
        self.rewritten: set[str] = set()  # content written again
        self.outcomes: list[Outcome] = []

    def record(self, memory_id: str) -> MemoryRecord | None:
        return self.changed.get(memory_id) or self.view.memory(memory_id)

    def run(self, root: MemoryRecord, reason: str) -> list[Outcome]:
        roots = [root, *self._moved_from(root)]
        for record in roots:
            self._forget(record, reason)
        index = self.view.lineage_index()
        order = descendants(
            [r.memory.memory_id for r in roots],
            index.derived,
            lambda m: sources_of(self._original(m).memory),
        )
        why = f"derived from forgotten memory {root.memory.memory_id}"
        for memory_id in order:
            derived = self.record(memory_id)
            if derived is not None and not derived.forgotten:
                self._follow(derived, why)
        return self.outcomes

    def _original(self, memory_id: str) -> MemoryRecord:
        record = self.view.memory(memory_id)
        assert record is not None  # the index lists only records the state holds
        return record

    def _moved_from(self, record: MemoryRecord) -> list[MemoryRecord]:
        """The memories ``record`` is the moved copy of (a working memory promoted away lives
        on as its copy): the same memory before its move, forgotten with it."""
        found: list[MemoryRecord] = []
        current = record
        while len(found) < 8:
            source_id = current.memory.metadata.get("promoted_from")
            source = self.record(source_id) if source_id else None
            if (
                source is None
                or source.forgotten
                or source.memory.status != "promoted"
                or source.memory.metadata.get("promoted_to") != current.memory.memory_id
            ):
                break
            found.append(source)
            current = source
        return found

    # -- what happens to one derived memory ------------------------------------------------

    def _follow(self, record: MemoryRecord, why: str) -> None:
        memory = record.memory
        gone: set[Derivation] = set()
        rewritten: set[Derivation] = set()
        for source in sources_of(memory):
            if source in self.forgotten:
                gone |= derivations_of(memory, source)
            elif source in self.rewritten:
                rewritten |= derivations_of(memory, source)
        if not (gone or rewritten):
            return  # made from a memory the forget left as it was (a survivor's relink)
        if "evidence" in gone | rewritten or "copy" in gone:
            self._forget(record, why, cascaded=True)
        elif "copy" in rewritten:
            self._copy_again(record)
        elif "rewrite" in gone | rewritten:
            self._write_again(record, why)
        elif gone:  # a link only: the survivor keeps its content
            relinked = memory.evolve(metadata=without_sources(memory, self.forgotten))
            self._store(RELINKED, record, relinked, content_changed=False)

    def _copy_again(self, record: MemoryRecord) -> None:
        memory = record.memory
        copied = [
            s
            for key, kind in SOURCE_KEYS.items()
            if kind == "copy"
            for s in listed(memory, key)
            if s in self.rewritten
        ]
        source = self.record(copied[0])
        assert source is not None
        again = memory.evolve(
            content=source.memory.content,
            embedding=source.memory.embedding,
            metadata=without_sources(memory, self.forgotten),
        )
        self._store(REDERIVED, record, again, content_changed=True)

    def _write_again(self, record: MemoryRecord, why: str) -> None:
        memory = record.memory
        key = max(
            (k for k, kind in SOURCE_KEYS.items() if kind == "rewrite" and listed(memory, k)),
            key=lambda k: any(
                s in self.forgotten or s in self.rewritten for s in listed(memory, k)
            ),
        )
        remaining = [
            r
            for r in (self.record(s) for s in listed(memory, key) if s not in self.forgotten)
            if r is not None and not r.forgotten
        ]
        again = WRITERS[key](self, memory, remaining) if remaining else None
        if again is None or content_bytes(again.content) > self.rewriting.max_content_bytes:
            self._forget(record, why, cascaded=True)
            return
        self._store(REDERIVED, record, again, content_changed=True)

    # -- the writers, again ----------------------------------------------------------------

    def _metadata(self, memory: Memory, *dropped: str) -> dict[str, str]:
        """``memory``'s metadata without the forgotten sources (nor the ``dropped`` keys): what
        a writer's own keys are laid over."""
        kept = without_sources(memory, self.forgotten)
        return {k: v for k, v in kept.items() if k not in dropped}

    def _observation(self, memory: Memory, remaining: list[MemoryRecord]) -> Memory | None:
        """An observation of the turns that remain (of a question and its answer, one), when
        the observation writer makes exactly one of them.

        A reply to an assistant whose answer is forgotten keeps the reply's own words as the
        observation holds them: written again from the reply's turn alone, with no assistant
        left in the turns, the writer would put them in the third person, trimmed as between
        people, and state again what a correction took out (it knows nothing of one)."""
        chosen = sorted(remaining, key=lambda r: r.memory.age_order)
        replying = listed(memory, "derived_from")[-1:]
        own = own_words(memory.content)
        if own != memory.content and [r.memory.memory_id for r in chosen] == list(replying):
            return self._observed(memory, own, replying, memory.speaker, passing=False)
        written = write_observations(
            [turn_of(r.memory) for r in chosen], self.rewriting.policy.max_memory_chars
        )
        if len(written) != 1:
            return None
        observation = written[0]
        by_id = {r.memory.memory_id: r.memory for r in chosen}
        stated = by_id[observation.source_ids[-1]]
        speaker = stated.speaker or named_speaker(observation.speaker)
        return self._observed(
            memory, observation.content, observation.source_ids, speaker, observation.passing
        )

    def _observed(
        self,
        memory: Memory,
        content: str,
        source_ids: Sequence[str],
        speaker: str | None,
        passing: bool,
    ) -> Memory:
        """``memory`` written again as an observation of ``content`` from ``source_ids``."""
        metadata = self._metadata(memory, PASSING)
        metadata["derived_from"] = ",".join(source_ids)
        metadata[CLAIM] = stated_part(content)
        if passing:
            metadata[PASSING] = "1"
        return memory.evolve(
            content=content,
            embedding=self.rewriting.embedding(content),
            speaker=speaker,
            metadata=metadata,
        )

    def _narrative(self, memory: Memory, remaining: list[MemoryRecord]) -> Memory | None:
        """A session's narrative (or digest, when observations carry its facts) of the
        members that remain."""
        chosen = sorted(remaining, key=lambda r: r.memory.age_order)
        parents = {"parents": ",".join(r.memory.memory_id for r in chosen)}
        count = {"source_count": str(len(chosen))}
        if "topics" in memory.metadata or "observations" in memory.metadata:
            digest = digest_of(chosen, self.rewriting.policy.max_memory_chars)
            return memory.evolve(
                content=digest.content,
                embedding=self.rewriting.embedding(digest.content),
                metadata={
                    **self._metadata(memory),
                    **parents,
                    **count,
                    "topics": ",".join(digest.topics),
                },
            )
        narrative, details = narrate(chosen, self.rewriting.policy.sessions.priority_kinds)
        return memory.evolve(
            content=narrative.content,
            embedding=mean_embedding([r.memory for r in chosen], self.rewriting.dim),
            metadata={**self._metadata(memory), **parents, **count, **details},
        )

    def _summary(self, memory: Memory, remaining: list[MemoryRecord]) -> Memory | None:
        content = write_summary(
            [r.memory.content for r in remaining], self.rewriting.policy.summaries.chunk_size
        )
        return memory.evolve(
            content=content,
            embedding=self.rewriting.embedding(content),
            metadata={
                **self._metadata(memory),
                "source_episode_ids": ",".join(r.memory.memory_id for r in remaining),
                "episode_count": str(len(remaining)),
            },
        )

    def _profile(self, memory: Memory, remaining: list[MemoryRecord]) -> Memory | None:
        content = write_profile([r.memory.content for r in remaining], SupersessionMemo())
        if not content.strip():
            return None
        return memory.evolve(
            content=content,
            embedding=mean_embedding([r.memory for r in remaining], self.rewriting.dim),
            metadata={
                **self._metadata(memory),
                "source_semantic_ids": ",".join(r.memory.memory_id for r in remaining),
                "source_count": str(len(remaining)),
            },
        )

    # -- ledger ------------------------------------------------------------------------------

    def _forget(self, record: MemoryRecord, why: str, cascaded: bool = False) -> None:
        memory = record.memory
        current = self.record(memory.memory_id) or record
        tombstone = ledger.MemoryForgotten(memory.memory_id, memory.layer, current.version + 1, why)
        self.outcomes.append(Outcome(FORGOTTEN, memory.memory_id, tombstone))
        self.changed[memory.memory_id] = MemoryRecord(
            memory.evolve(content="", metadata={}), tombstone.version, forgotten=True
        )
        self.forgotten.add(memory.memory_id)
        if cascaded:
            self._bring_back_what_it_carried(memory)

    def _bring_back_what_it_carried(self, carrier: Memory) -> None:
        """The sources a forgotten derived memory carried (archived into it) that are not
        forgotten: active again, as they were written, so no fact still true leaves active
        memory with it."""
        for source_id in sources_of(carrier):
            source = self.record(source_id)
            if (
                source is None
                or source.forgotten
                or source.memory.status != "archived"
                or source.memory.metadata.get(SUMMARIZED_INTO) != carrier.memory_id
            ):
                continue
            metadata = {
                k: v
                for k, v in source.memory.metadata.items()
                if k not in (SUMMARIZED_INTO, OBSERVED)
            }
            back = source.memory.evolve(status="active", metadata=metadata)
            self._store(REACTIVATED, source, back, content_changed=False)

    def _store(
        self, action: str, record: MemoryRecord, memory: Memory, *, content_changed: bool
    ) -> None:
        current = self.record(memory.memory_id) or record
        stored = ledger.MemoryStored(memory, current.version + 1)
        self.outcomes.append(Outcome(action, memory.memory_id, stored))
        self.changed[memory.memory_id] = MemoryRecord(memory, stored.version)
        if content_changed and memory.content != record.memory.content:
            self.rewritten.add(memory.memory_id)


WRITERS: dict[str, Callable[[_Cascade, Memory, list[MemoryRecord]], Memory | None]] = {
    "derived_from": _Cascade._observation,
    "parents": _Cascade._narrative,
    "source_episode_ids": _Cascade._summary,
    "source_semantic_ids": _Cascade._profile,
}
"""The rewrite key a memory lists its sources under → the writer that makes it again."""
