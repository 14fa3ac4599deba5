"""The supervisor of several worker or projector processes (streams/runtime/supervisor.py): what
each process is told, and that the processes start, stop and end together. Real child
processes (short Python programs standing in for ``memstream worker``/``project``); no Kafka
or PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest

from memstream.stack.ports import free_port_range, free_port_ranges, port_is_free
from memstream.waiting import wait_until
from projections.projector_processes import PROJECTOR, run_projector_processes
from streams.config.settings import Settings, SettingsError
from streams.runtime import worker_processes
from streams.runtime.supervisor import ProcessPlan, Supervisor
from tests.support import process_running

# Stands in for a worker or projector process: stops cleanly on SIGTERM, and says it is ready
# for it by creating a file named by its pid in the directory given as its argument.
WAITER = (
    "import os, signal, sys; signal.signal(signal.SIGTERM, lambda *_: sys.exit(0)); "
    "open(os.path.join(sys.argv[1], str(os.getpid())), 'w').close(); signal.pause()"
)
# A supervisor of two processes that only wait, writing their pids to the file named by its
# argument.
SUPERVISOR = """
import os, signal, subprocess, sys
from streams.config.settings import Settings
from streams.runtime.supervisor import ProcessPlan, Supervisor, die_with_parent

def spawn(plan):
    child = subprocess.Popen(
        [sys.executable, "-c", "import signal; signal.pause()"],
        preexec_fn=die_with_parent(os.getpid()),
    )
    with open(sys.argv[1], "a") as pids:
        pids.write(f"{child.pid}\\n")
    return child

Supervisor("worker", [ProcessPlan(k, Settings()) for k in range(2)], spawn).run()
"""


def _python(code: str, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code, *args], stdin=subprocess.DEVNULL)


def test_each_process_is_one_projector_with_its_own_instance_id_and_metrics_port():
    settings = Settings(
        projector_processes=3, instance_id="projector-0", projector_metrics_port=9102
    )
    plans = PROJECTOR.process_plans(settings)
    assert [p.index for p in plans] == [0, 1, 2]
    assert [p.settings.instance_id for p in plans] == [
        "projector-0-0",
        "projector-0-1",
        "projector-0-2",
    ]
    assert [p.settings.projector_metrics_port for p in plans] == [9102, 9103, 9104]
    assert {p.settings.projector_processes for p in plans} == {1}
    # everything else is the instance's: one group, one ledger, one database
    assert {p.settings.projector_group for p in plans} == {settings.projector_group}
    assert {p.settings.database_url for p in plans} == {settings.database_url}


def test_without_an_instance_id_the_processes_join_dynamically_and_port_0_stays_any_port():
    plans = PROJECTOR.process_plans(Settings(projector_processes=2, projector_metrics_port=0))
    assert [p.settings.instance_id for p in plans] == ["", ""]
    assert [p.settings.projector_metrics_port for p in plans] == [0, 0]


def test_each_process_is_one_worker_with_its_own_local_store_instance_id_and_metrics_port(
    tmp_path,
):
    settings = Settings(
        worker_processes=2,
        instance_id="worker-1",
        worker_metrics_port=9101,
        worker_data_dir=tmp_path / "worker",
    )
    plans = worker_processes.process_plans(settings)
    assert [p.index for p in plans] == [0, 1]
    assert [p.settings.instance_id for p in plans] == ["worker-1-0", "worker-1-1"]
    assert [p.settings.worker_metrics_port for p in plans] == [9101, 9102]
    # two processes never open one RocksDB directory
    assert [p.settings.worker_data_dir for p in plans] == [
        tmp_path / "worker" / "process-0",
        tmp_path / "worker" / "process-1",
    ]
    assert {p.settings.worker_processes for p in plans} == {1}
    # one group, one input, one ledger, one state changelog
    assert {p.settings.app_id for p in plans} == {settings.app_id}
    assert {p.settings.topic_prefix for p in plans} == {settings.topic_prefix}


def test_metrics_ports_past_the_last_port_stop_the_start_with_what_to_change():
    settings = Settings(projector_processes=3, projector_metrics_port=65_534)
    with pytest.raises(SystemExit, match="ports 65534-65536, past 65535; lower MEMSTREAM_PROJ"):
        run_projector_processes(settings)
    settings = Settings(worker_processes=2, worker_metrics_port=65_535)
    with pytest.raises(SystemExit, match="ports 65535-65536, past 65535; lower MEMSTREAM_WORK"):
        worker_processes.run_worker_processes(settings)


@pytest.mark.parametrize("raw", ["0", "65", "two"])
@pytest.mark.parametrize(
    "variable", ["MEMSTREAM_PROJECTOR_PROCESSES", "MEMSTREAM_WORKER_PROCESSES"]
)
def test_a_process_count_out_of_range_is_a_configuration_error_naming_the_variable(raw, variable):
    with pytest.raises(SettingsError, match=variable):
        Settings.from_env({variable: raw, "MEMSTREAM_STATE_DIR": "/nonexistent"})


def test_one_process_ending_unasked_stops_the_others_and_gives_its_exit_code(tmp_path):
    codes = {0: WAITER, 1: "import sys; sys.exit(3)", 2: WAITER}
    started: dict[int, subprocess.Popen[bytes]] = {}

    def spawn(plan: ProcessPlan) -> subprocess.Popen[bytes]:
        started[plan.index] = _python(codes[plan.index], str(tmp_path))
        return started[plan.index]

    assert Supervisor("projector", [ProcessPlan(k, Settings()) for k in codes], spawn).run() == 3
    # the waiters never end by themselves: they were sent SIGTERM (clean exit, or killed by
    # it before their handler was in place), never SIGKILLed after the stop timeout
    assert {started[0].returncode, started[2].returncode} <= {0, -signal.SIGTERM}


def test_sigterm_to_the_supervisor_stops_every_process_and_exits_cleanly(tmp_path):
    started: list[subprocess.Popen[bytes]] = []

    def spawn(plan: ProcessPlan) -> subprocess.Popen[bytes]:
        started.append(_python(WAITER, str(tmp_path)))
        return started[-1]

    def terminate_when_ready() -> None:
        wait_until(lambda: len(list(tmp_path.iterdir())) == 2, timeout=30, what="both ready")
        os.kill(os.getpid(), signal.SIGTERM)

    terminator = threading.Thread(target=terminate_when_ready)
    terminator.start()
    try:
        assert (
            Supervisor("projector", [ProcessPlan(k, Settings()) for k in range(2)], spawn).run()
            == 0
        )
    finally:
        terminator.join()
    assert [child.returncode for child in started] == [0, 0]


def test_a_killed_supervisor_takes_its_processes_with_it(tmp_path):
    """SIGKILL cannot be forwarded: the processes are arranged to die with their parent."""
    pids = tmp_path / "pids"
    program = tmp_path / "supervise.py"
    program.write_text(SUPERVISOR)
    supervisor = subprocess.Popen([sys.executable, str(program), str(pids)], cwd=os.getcwd())

    def both_started() -> list[int] | None:
        started = [int(pid) for pid in pids.read_text().split()] if pids.exists() else []
        return started if len(started) == 2 else None

    children = wait_until(both_started, timeout=30, what="the supervisor's two processes")
    supervisor.kill()
    supervisor.wait(10)
    wait_until(
        lambda: not any(process_running(pid) for pid in children),
        timeout=10,
        what="the processes to die with their supervisor",
    )


def test_a_port_range_for_a_roles_processes_is_free_and_clear_of_the_ports_avoided():
    first = free_port_range(3)
    assert all(port_is_free(port) for port in range(first, first + 3))
    second = free_port_range(3, avoid=range(first, first + 3))
    assert not set(range(second, second + 3)) & set(range(first, first + 3))


def test_the_port_ranges_of_the_roles_are_free_and_disjoint():
    firsts = free_port_ranges(3, 2)
    runs = [set(range(first, first + 3)) for first in firsts]
    assert len(runs) == 2 and not runs[0] & runs[1]
    assert all(port_is_free(port) for run in runs for port in run)
