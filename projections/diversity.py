"""Recall's last step: the memories a context holds, chosen so that they say different things.

A context is a budget of characters. Ranked by relevance alone, its places go to memories
that say one thing several times: one fact restated over sessions, a digest beside the
observations it lists, five alike remarks about the gym. Maximal marginal relevance
(Carbonell & Goldstein, SIGIR 1998) takes the memories one at a time, each the best by

    (1 - diversity) * relevance - diversity * (its highest cosine to one already taken)

so a memory that repeats a chosen one gives its place to the next thing the question needs.
On the recall-quality corpus this is what answers questions that need two facts from two
sessions (``docs/benchmarks.md``). ``diversity = 0`` is the ranking's own order.

Relevance must be on the cosine scale for the two terms to be weighed against each other, and
a hybrid ranking's fused score is not (reciprocal ranks, ~1/60). So the ranking decides the
order and the similarities decide the scale: the memory at place i gets the i-th highest
similarity to the question among the candidates. The trade-off then means the same thing for
either ranking, and with no repetition among the candidates the order is the ranking's.

Pure numpy, no I/O: one matrix product compares the candidates with each other. numpy is
imported when first used, so the CLI shows the default without loading it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

DEFAULT_DIVERSITY = 0.2
"""How much a memory's likeness to one already chosen costs it against its relevance. 0.15–0.25
answered alike on the recall-quality corpus (``docs/benchmarks.md``); past 0.3 memories that
are relevant because they are alike (a fact and the question it answers) start to push each
other out."""


def diversified_order(
    similarities: Sequence[float],
    vectors: Sequence[np.ndarray | None],
    k: int,
    diversity: float = DEFAULT_DIVERSITY,
) -> list[int]:
    """The positions of up to ``k`` candidates in the order to return them.

    ``similarities``: each candidate's cosine to the question, and ``vectors`` its embedding
    (None when it has none: it repeats nothing), both in the ranking's order, best first.
    Ties go to the candidate the ranking put first."""
    if not 0.0 <= diversity <= 1.0:
        raise ValueError(f"diversity must be between 0 and 1, not {diversity}")
    count = len(similarities)
    if len(vectors) != count:
        raise ValueError("one vector (or None) per candidate")
    wanted = min(k, count)
    if diversity == 0.0 or wanted <= 1:
        return list(range(wanted))
    import numpy as np

    relevance = np.sort(np.asarray(similarities, dtype=np.float64))[::-1]
    alike = _cosines(vectors)
    redundancy = np.zeros(count)
    taken = np.zeros(count, dtype=bool)
    order: list[int] = []
    for _ in range(wanted):
        gain = (1.0 - diversity) * relevance - diversity * redundancy
        gain[taken] = -np.inf
        chosen = int(np.argmax(gain))  # the first of equal gains: the ranking's
        order.append(chosen)
        taken[chosen] = True
        redundancy = np.maximum(redundancy, alike[chosen])
    return order


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
