"""Recall's last step: the order of the memories a context holds, among a ranking's candidates.

Two things a ranking by relevance alone gets wrong, both fixed with one matrix product of the
candidates' embeddings (:func:`recall_order`):

**A stated change comes before what it changes.** "standup moved to 9:15" is less like a
question about standup than "we have standup at 10:30 sharp" is; when the judge did not read
the pair as one attribute, both are current and the stale time came first. A newer candidate
of the same speaker that states a change (``streams.engine.text.changes``) and is alike to an
older candidate (cosine ≥ :data:`CHANGE_MIN_SIMILARITY`), and is nearly as relevant to the
question (:data:`CHANGE_RELEVANCE_GAP`), takes the older one's place, and the older one follows
it. Nothing is archived or hidden on this cue: an unrelated "now" only moves a memory up by a
few places.

**A memory that repeats one already chosen gives its place to the next thing the question
needs.** A context is a budget of characters; ranked by relevance, its places went to one
fact said in several sessions and to a digest beside the observations it lists. Maximal
marginal relevance (Carbonell & Goldstein, SIGIR 1998) takes the memories one at a time, each
the best by

    (1 - diversity) * relevance - diversity * (its highest cosine to one already taken)

so after a correction is chosen, the statement it corrects, alike to it, falls back as well.

Relevance must be on the cosine scale for the two terms to be weighed against each other, and
a hybrid ranking's fused score is not (reciprocal ranks, ~1/60). So the order decides the
order and the similarities the scale: the memory at place i gets the i-th highest similarity
to the question among the candidates. With no repetition, the order stands.

numpy is imported when first used, so the CLI shows the default without loading it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

DEFAULT_DIVERSITY = 0.2
"""How much a memory's likeness to one already chosen costs it against its relevance. 0.1–0.3
answered alike on the recall-quality corpus (``docs/benchmarks.md``); at 0.4 memories that are
relevant because they are alike (one day's facts about one thing) pushed each other out."""
CHANGE_MIN_SIMILARITY = 0.6
"""How alike (cosine of the embeddings, day and speaker included) a stated change must be to an
older statement to go before it. In the recall-quality corpus's update questions whose stale
value came first, the correction and what it corrects were 0.61–0.90 alike; at 0.7 half of
them would have stayed behind."""
CHANGE_RELEVANCE_GAP = 0.05
"""How much less similar to the question a stated change may be than the statement it goes
before. Without this bound every "now" of a speaker went before her older, alike statements:
on corpus seeds 7 and 8 answers at 2,000 characters rose (0.83, 0.84) but the evidence in the
top five fell to 0.57 and 0.59 (0.69 before). Within 0.05 it stays (0.70, 0.72), and the stale
value still comes first less often (0.45 and 0.40 of the update questions, from 0.47, 0.57)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """What the order reads of one candidate, in the ranking's order."""

    similarity: float  # cosine to the question (0 without an embedding)
    vector: np.ndarray | None  # its embedding; None: it is alike to nothing
    speaker: str | None  # who said it; None: it changes nothing
    stated_at: float  # when it was said (any increasing unit)
    states_change: bool  # its words say something changed ("moved to", "now")


def recall_order(
    candidates: Sequence[Candidate], k: int, diversity: float = DEFAULT_DIVERSITY
) -> list[int]:
    """The positions of up to ``k`` of ``candidates`` (ranked, best first) in the order to
    return them: stated changes before what they change, then chosen by maximal marginal
    relevance (``diversity`` 0: only the changes move). Ties keep the ranking's order."""
    if not 0.0 <= diversity <= 1.0:
        raise ValueError(f"diversity must be between 0 and 1, not {diversity}")
    wanted = min(k, len(candidates))
    if wanted <= 0:
        return []
    alike = _cosines([c.vector for c in candidates])
    order = changes_first(candidates, alike)
    if diversity == 0.0 or wanted == 1:
        return order[:wanted]
    return [order[i] for i in diversified(candidates, order, alike, wanted, diversity)]


def changes_first(candidates: Sequence[Candidate], alike: np.ndarray) -> list[int]:
    """All positions, each newer stated change of the same speaker that is alike to a
    candidate and nearly as relevant placed just before it (the newest first), everything else
    in the ranking's order."""
    import numpy as np

    names: dict[str, int] = {}
    speaker = np.array(
        [-1 if c.speaker is None else names.setdefault(c.speaker, len(names)) for c in candidates]
    )
    said = np.array([c.stated_at for c in candidates], dtype=np.float64)
    asked = np.array([c.similarity for c in candidates], dtype=np.float64)
    changes = np.array([c.states_change for c in candidates], dtype=bool)
    same = (speaker[:, None] == speaker[None, :]) & (speaker[:, None] >= 0)
    # changed[i, j]: j is a newer stated change of what i says
    changed = same & changes[None, :] & (said[None, :] > said[:, None])
    changed &= alike >= CHANGE_MIN_SIMILARITY
    changed &= asked[None, :] >= asked[:, None] - CHANGE_RELEVANCE_GAP
    placed = np.zeros(len(candidates), dtype=bool)
    order: list[int] = []
    for i in range(len(candidates)):
        if placed[i]:
            continue
        for j in sorted(np.flatnonzero(changed[i] & ~placed), key=lambda j: -said[j]):
            order.append(int(j))
            placed[j] = True
        order.append(i)
        placed[i] = True
    return order


def diversified(
    candidates: Sequence[Candidate],
    order: Sequence[int],
    alike: np.ndarray,
    k: int,
    diversity: float,
) -> list[int]:
    """Indexes into ``order`` of the ``k`` chosen by maximal marginal relevance, the place in
    ``order`` giving the relevance (the i-th place: the i-th highest similarity)."""
    import numpy as np

    relevance = np.sort(np.array([c.similarity for c in candidates], dtype=np.float64))[::-1]
    among = alike[np.ix_(order, order)]
    redundancy = np.zeros(len(order))
    taken = np.zeros(len(order), dtype=bool)
    chosen: list[int] = []
    for _ in range(k):
        gain = (1.0 - diversity) * relevance - diversity * redundancy
        gain[taken] = -np.inf
        best = int(np.argmax(gain))  # the first of equal gains: the earlier place
        chosen.append(best)
        taken[best] = True
        redundancy = np.maximum(redundancy, among[best])
    return chosen


def _cosines(vectors: Sequence[np.ndarray | None]) -> np.ndarray:
    """Every pair's cosine; a candidate without a vector is alike to nothing (0)."""
    import numpy as np

    dim = next((len(v) for v in vectors if v is not None), 1)
    matrix = np.zeros((len(vectors), dim))
    for row, vector in enumerate(vectors):
        if vector is not None:
            norm = float(np.linalg.norm(vector))
            if norm:
                matrix[row] = np.asarray(vector, dtype=np.float64) / norm
    return matrix @ matrix.T
