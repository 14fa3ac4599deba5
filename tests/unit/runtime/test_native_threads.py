"""numpy's OpenBLAS runs on one thread in memstream's processes: its second thread spun
through the engine's small products, ~300 µs of CPU per input of the host's that Kafka and
PostgreSQL share, for no gain in time."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from streams.runtime.native_threads import (
    BLAS_THREADS_VARIABLE,
    OPENMP_THREADS_VARIABLE,
    single_threaded_blas,
)


def test_blas_defaults_to_one_thread() -> None:
    environ: dict[str, str] = {}

    single_threaded_blas(environ)

    assert environ == {BLAS_THREADS_VARIABLE: "1"}


def test_an_operator_s_own_thread_count_is_kept() -> None:
    environ = {BLAS_THREADS_VARIABLE: "4"}

    single_threaded_blas(environ)

    assert environ == {BLAS_THREADS_VARIABLE: "4"}


def test_an_operator_s_openmp_thread_count_is_not_overridden() -> None:
    """OpenBLAS reads OMP_NUM_THREADS too, and OPENBLAS_NUM_THREADS would win over it."""
    environ = {OPENMP_THREADS_VARIABLE: "2"}

    single_threaded_blas(environ)

    assert environ == {OPENMP_THREADS_VARIABLE: "2"}


def test_the_cli_sets_it_before_a_command_loads_numpy() -> None:
    """OpenBLAS reads the variable when numpy loads it: too late once numpy is imported."""
    probe = textwrap.dedent(
        """
        import os, sys
        import memstream.cli as cli

        def report(args):
            print(os.environ.get("OPENBLAS_NUM_THREADS"), "numpy" in sys.modules)
            return 0

        cli.cmd_worker = report
        sys.exit(cli.main(["worker"]))
        """
    )
    chosen = (BLAS_THREADS_VARIABLE, OPENMP_THREADS_VARIABLE)
    environ = {k: v for k, v in os.environ.items() if k not in chosen}

    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=environ, check=True
    )

    assert done.stdout.split() == ["1", "False"]
