"""memstream's processes run numpy's OpenBLAS on one thread.

OpenBLAS starts a thread per core and shares every matrix product between them. The
products a consolidation cycle makes are small (a user's new memories against their live
ones), and the second thread spins while it waits for work: on the bench workload the pure
engine took 707-741 µs of CPU per input with the default and 410-414 µs with one thread, at
the same wall time. That CPU is the host's, which the worker shares with Kafka and
PostgreSQL. The decisions are the same either way (their digests are unchanged).

OpenBLAS reads the variable once, when numpy loads it, so the CLI sets it before any
command imports numpy. An operator's own thread count is kept: ``OPENBLAS_NUM_THREADS``, or
``OMP_NUM_THREADS``, which OpenBLAS also reads (and which ``OPENBLAS_NUM_THREADS`` would
override). numpy built on another BLAS (MKL, Accelerate) is not affected.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

BLAS_THREADS_VARIABLE = "OPENBLAS_NUM_THREADS"
OPENMP_THREADS_VARIABLE = "OMP_NUM_THREADS"


def single_threaded_blas(environ: MutableMapping[str, str] = os.environ) -> None:
    """Default OpenBLAS to one thread for this process and the ones it starts, unless the
    operator chose a thread count."""
    if BLAS_THREADS_VARIABLE not in environ and OPENMP_THREADS_VARIABLE not in environ:
        environ[BLAS_THREADS_VARIABLE] = "1"
