"""The built-in contradiction judge: deterministic and explainable (docs/consolidation.md,
"contradictions"; seeds 001, 003).

``judge_contradiction(first, second)`` decides whether two short memory statements ("Project
uses PostgreSQL", "standup is at 9am") contradict each other, how confident it is, which cue
fired and why, in words that name the conflicting parts.

Method, one module per step:

* :mod:`.normalise`: one spelling for what people write many ways (contractions, multi-word
  names, "is a big fan of" → "likes", clock times, money and magnitudes, dates, a leading
  "Correction:").
* :mod:`.quantities` and :mod:`.words`: amounts, periods and dates read as values ("a year and
  a half", "every 2 weeks", "june 5"); every word's comparison key (synonyms, verb and plural
  endings, antonyms folded with a flip mark).
* :mod:`.parse`: a statement as clauses (subject, relation, value, polarity, tense), with
  corrections ("X, not Y": Y is the replaced value), updates ("was moved to", "now", "switched
  from A to B", "has a new phone number: X": present claims), the perfect ("I've never used
  X": the verb is "use") and roles ("I use Helix as my main editor": my main editor is Helix);
  updates as people state them ("Ana took over as team lead", "the launch slipped to October
  3rd", "we went with a different vet", "Actually, ...", "these days", "as of March") and
  what is not one ("also", "too", "might take over", a question).
* :mod:`.values`: two values of one attribute compared slot by slot: same, related (synonym,
  refinement, part of, the same amount), exclusive (and of which kind), or unknown.
* :mod:`.attributes`: subjects as compared ("my neighbour Tariq" is Tariq, "my weekly
  one-on-one" is my one-on-one), whether two clauses state one attribute, how many values it
  holds.
* :mod:`.rules`: the verdict, with the guards against false alarms (same subject and
  attribute, single-valued attributes only, same time, contexts); :mod:`.inferences`, the
  conflicts implied rather than stated (one diet at a time, a duty taken over).
* :mod:`.lexicons`: the word lists, JSON files in ``lexicons/`` loaded once.
* :mod:`.keys`: ``attribute_keys(text)``, the (subject, single-valued attribute) keys a
  statement makes a claim about, for blocking: two statements that contradict by giving one
  attribute two values share a key ("Bruno's phone number is ..." / "Bruno has a new phone
  number: ..." → ``bruno|phone number``), so the engine can index facts by them.

``confidence`` is the judge's confidence that the pair contradicts: above 0.7 exactly when
``contradicts`` is true, at most 0.4 otherwise. The verdict and confidence are symmetric in the
arguments (only the wording of the explanation follows the argument order).

This package never does I/O beyond reading its own data files, reads no clock, uses no
randomness, does not log, touch the network or load a model: it is part of the pure engine,
standard library only, and the same inputs always give the same Judgement. ``parse``,
``judge_contradiction`` and ``attribute_keys`` memoise their answers (bounded
``functools.lru_cache``), which changes no result.
"""

from __future__ import annotations

from .judgement import Judgement
from .keys import attribute_keys
from .verdicts import judge_contradiction

__all__ = ["Judgement", "attribute_keys", "judge_contradiction"]
