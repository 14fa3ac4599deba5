"""How the worker and the projector run Python's cyclic garbage collector.

Both processes allocate many small, mostly acyclic objects per input (decoded records,
memories, decisions) that reference counting frees at once, while the long-lived heap (the
modules, Faust, the Kafka clients, the hot users' state) only grows. With the interpreter's
default thresholds a young collection runs every 700 net allocations and every few hundred
of those a full collection walks the whole heap: on the bench's workload the worker spent
about 8 % of its engine time in the collector, and each full collection (100+ ms with a
large heap) stalls every input queued behind it.

So, once at start-up: the objects that exist then (code, configuration, clients) are frozen
out of collection altogether, and young collections run every 50,000 net allocations. Cyclic
garbage is still collected, only in larger batches; the memory this can hold back is a few
batches' worth of short-lived objects.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000  # net allocations between young collections (default 700)
MIDDLE_THRESHOLD = 20  # young collections between middle ones (default 10)
OLD_THRESHOLD = 10  # middle collections before a full one is considered (default 10)


def tune_collector() -> None:
    """Freeze what start-up allocated and collect in larger batches (see the module doc)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, OLD_THRESHOLD)
