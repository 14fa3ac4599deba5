"""What a bench cleanup may remove: only a bench run's own names (``bench`` + its 8-hex run
id + a separator) and working files (its logs stay), and with a run id only that run's."""

from __future__ import annotations

from pathlib import Path

from bench.cleanup import bench_names, remove_work_files

NAMES = [
    "bench0a1b2c3d-worker.memory.events",  # a run's topic
    "bench0a1b2c3d-worker-worker",  # its Faust app id (consumer group)
    "bench0a1b2c3d_projector",  # its database
    "bench99887766-e2e.memory.consolidation",  # another run's topic
    "memory.events",  # the stack's own topics
    "benchmarks.memory.events",  # a prefix that only starts with "bench"
    "bench0a1b2c3d",  # no separator: not a run's object
    "bench0A1B2C3D-worker.memory.events",  # upper-case hex is not a run id
    "t_0a1b2c3d4e",  # a test database
]


def test_every_bench_run_s_objects_and_nothing_else() -> None:
    assert bench_names(NAMES) == [
        "bench0a1b2c3d-worker-worker",
        "bench0a1b2c3d-worker.memory.events",
        "bench0a1b2c3d_projector",
        "bench99887766-e2e.memory.consolidation",
    ]


def test_one_run_s_objects() -> None:
    assert bench_names(NAMES, "99887766") == ["bench99887766-e2e.memory.consolidation"]


def a_bench_dir(root: Path) -> Path:
    for path in (
        "0a1b2c3d/logs/e2e-worker.log",
        "0a1b2c3d/e2e/worker-data/store",
        "99887766/logs/worker.log",
        "99887766/users1000/worker-data/store",
        "not-a-run/keep-me",
    ):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("x")
    return root


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_a_run_s_working_files_go_and_its_logs_stay(tmp_path: Path) -> None:
    bench_dir = a_bench_dir(tmp_path)

    assert remove_work_files(bench_dir, "0a1b2c3d") == 1

    assert files_under(bench_dir) == {
        "0a1b2c3d/logs/e2e-worker.log",
        "99887766/logs/worker.log",
        "99887766/users1000/worker-data/store",
        "not-a-run/keep-me",
    }


def test_a_clean_removes_every_run_s_working_files_and_nothing_else(tmp_path: Path) -> None:
    bench_dir = a_bench_dir(tmp_path)

    remove_work_files(bench_dir)

    assert files_under(bench_dir) == {
        "0a1b2c3d/logs/e2e-worker.log",
        "99887766/logs/worker.log",
        "not-a-run/keep-me",
    }
