"""Seed 002's Temporal Continuity Anchor (docs/consolidation.md, "the identity anchor").

After a cycle that wrote narratives, the user's anchor moves toward them:
``anchor = (1 - w) · current + w · mean(new narrative embeddings)`` (w = 0.1), and its cosine
distance from the origin anchor is measured: above 0.2 warns, above 0.4 is critical. The
origin is the first anchor and is never reset automatically; an operator resets it with
``memstream identity reset`` (an ``identity_reset`` request, :func:`reset_identity_origin`).
"""

from __future__ import annotations

import numpy as np

from streams.engine import ledger
from streams.engine.context import CycleContext
from streams.engine.model import Memory
from streams.engine.similarity import vector_of


def update_identity_anchor(ctx: CycleContext) -> None:
    rule = ctx.policy.identity
    if not rule.enabled:
        return
    narratives = [
        d.payload.narrative
        for d in ctx.decisions
        if isinstance(d.payload, ledger.SessionConsolidated)
    ]
    if not narratives:
        return
    new = _mean_direction(narratives, ctx.dim)
    identity = ctx.facets.identity
    if identity is None:
        anchor, origin = new, new
    else:
        current = np.frombuffer(identity.live, dtype="<f4").astype(np.float64)
        origin = np.frombuffer(identity.origin, dtype="<f4").astype(np.float64)
        anchor = (1 - rule.update_weight) * current + rule.update_weight * new
    drift = round(cosine_distance(anchor, origin), 6)
    level: ledger.DriftLevel = (
        "critical"
        if drift > rule.critical_drift
        else "warning"
        if drift > rule.warning_drift
        else "ok"
    )
    ctx.emit(
        "identity_drift",
        ctx.cycle_id,
        ledger.IdentityDriftMeasured(_packed(anchor), drift, level),
    )
    if level != "ok":
        ctx.warnings.append(f"identity drift {drift:.3f} from the origin anchor ({level})")


def reset_identity_origin(ctx: CycleContext) -> None:
    """The operator's explicit reset: the origin becomes the current anchor (drift 0)."""
    identity = ctx.facets.identity
    if identity is None:
        ctx.warnings.append("reset_identity_origin: the user has no identity anchor yet")
        return
    ctx.emit(
        "identity_reset",
        ctx.cycle_id,
        ledger.IdentityDriftMeasured(identity.live, 0.0, "ok", origin_reset=True),
    )


def cosine_distance(a: np.ndarray, b: np.ndarray) -> float:
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return 1.0 - float(np.dot(a, b)) / norms if norms else 0.0


def _mean_direction(memories: list[Memory], dim: int) -> np.ndarray:
    vectors = np.stack([vector_of(m, dim) for m in memories])
    mean = vectors.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm else mean


def _packed(vector: np.ndarray) -> bytes:
    return vector.astype("<f4").tobytes()
