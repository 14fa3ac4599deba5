"""The shape of the code, checked: the layers, the pure engine's boundary, and module names.

- Layers (``[tool.importlinter]`` in pyproject.toml): ``memstream`` (CLI, HTTP API, stack,
  demo) on top, then ``projections``, then ``streams``; a lower layer never imports a higher
  one, so configuration reaches the worker and the projector as values.
- ``streams/engine/`` imports nothing of the project outside itself and nothing that does I/O,
  reads the clock or draws random numbers: the same inputs always give the same decisions.
  ``streams/config/`` (the settings every process shares) imports nothing else of the project.
- No module name occurs twice across ``streams/``, ``projections/``, ``memstream/``: a name
  that repeats (``metrics.py`` in the worker and in the projector) makes a newcomer, a stack
  trace and a ``grep`` ask "which one?". The engine is left out: its own repeats
  (``salience.py`` beside ``rules/decay.py``, ``judge/rules.py`` beside ``rules/``) are for
  a change of the engine itself.

Each check is also shown failing on a small tree with a deliberately wrong import or name.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAMED_TREES = ("streams", "projections", "memstream")
ENGINE = ROOT / "streams" / "engine"
NOT_NAMES = {"__init__", "__main__"}


def module_names(root: Path, trees: tuple[str, ...], skip: Path | None) -> dict[str, list[str]]:
    """Each module and package name under ``trees`` → where it occurs (paths from ``root``)."""
    places: dict[str, list[str]] = defaultdict(list)
    for tree in trees:
        for path in sorted((root / tree).rglob("*.py")):
            if skip is not None and path.is_relative_to(skip):
                continue
            if path.stem not in NOT_NAMES:
                places[path.stem].append(str(path.relative_to(root)))
            elif path.stem == "__init__" and path.parent != root / tree:
                places[path.parent.name].append(str(path.parent.relative_to(root)) + "/")
    return places


def repeated(places: dict[str, list[str]]) -> dict[str, list[str]]:
    return {name: where for name, where in places.items() if len(where) > 1}


def test_no_module_name_occurs_twice_across_streams_projections_and_memstream() -> None:
    places = module_names(ROOT, NAMED_TREES, skip=None)

    assert len(places) > 100  # the walk found the modules (it would pass on an empty tree)
    assert repeated(places) == {}, "rename so each name says what the module is"


def test_no_module_outside_the_engine_takes_an_engine_module_name() -> None:
    # `streams.state` the package is the worker's state tables; engine modules are files
    outside = {
        name
        for name, where in module_names(ROOT, NAMED_TREES, skip=ENGINE).items()
        if any(w.endswith(".py") for w in where)
    }
    engine = {path.stem for path in ENGINE.rglob("*.py")} - NOT_NAMES

    assert len(engine) > 40
    assert outside & engine == set()


def test_the_name_check_finds_a_repeat(tmp_path: Path) -> None:
    # Given a tree where two packages each hold a metrics.py, and a folder named like a module
    for path in ("a/metrics.py", "a/sub/__init__.py", "b/metrics.py", "b/sub.py", "b/x.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")

    # When
    found = repeated(module_names(tmp_path, ("a", "b"), skip=None))

    # Then
    assert found == {"metrics": ["a/metrics.py", "b/metrics.py"], "sub": ["a/sub/", "b/sub.py"]}


PROJECT = {"streams", "projections", "memstream", "bench", "schemas", "tests"}
# What would make the engine impure: I/O, the clock, randomness, logging, the stream runtime.
IMPURE = {
    "faust", "aiokafka", "confluent_kafka", "psycopg", "psycopg_pool", "prometheus_client",
    "asyncio", "time", "random", "secrets", "logging", "os", "socket", "subprocess",
    "threading", "multiprocessing", "urllib", "http", "shutil", "signal",
}  # fmt: skip


def imports_of(path: Path, package: str) -> set[str]:
    """The absolute names a module imports (relative imports resolved against ``package``,
    the dotted name of the package that holds the file)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                found.add(node.module or "")
                continue
            parts = package.split(".")
            base = parts[: len(parts) - node.level + 1] if node.level <= len(parts) else []
            found.add(".".join([*base, node.module] if node.module else base) or ".")
    return found


def boundary_breaches(root: Path, package: str, forbidden: set[str]) -> dict[str, set[str]]:
    """Each module of ``package`` (under ``root``) → what it imports of the project outside
    ``package``, or of ``forbidden``."""
    breaches: dict[str, set[str]] = {}
    folder = root / package.replace(".", "/")
    for path in sorted(folder.rglob("*.py")):
        holder = ".".join(path.parent.relative_to(root).parts)
        wrong = {
            name
            for name in imports_of(path, holder)
            if name.split(".")[0] in forbidden
            or (
                name.split(".")[0] in PROJECT | {"."}
                and name != package
                and not name.startswith(package + ".")
            )
        }
        if wrong:
            breaches[str(path.relative_to(root))] = wrong
    return breaches


def test_the_engine_imports_nothing_of_the_project_outside_itself_and_nothing_impure() -> None:
    modules = list(ENGINE.rglob("*.py"))

    breaches = boundary_breaches(ROOT, "streams.engine", IMPURE)

    assert len(modules) > 60  # all of streams/engine/: rules/, judge/, text/ too
    assert breaches == {}


def test_the_shared_configuration_imports_nothing_else_of_the_project() -> None:
    assert (ROOT / "streams" / "config" / "settings.py").exists()

    assert boundary_breaches(ROOT, "streams.config", set()) == {}


def test_the_engine_boundary_check_finds_a_wrong_import(tmp_path: Path) -> None:
    # Given an engine whose rule reaches out to the worker, the clock and past its package
    rules = tmp_path / "streams" / "engine" / "rules"
    rules.mkdir(parents=True)
    (rules / "ok.py").write_text("from ..model import Memory\nimport math\n")
    (rules / "bad.py").write_text(
        "import time\nfrom streams.state.hot_users import UserStates\nfrom ...app import x\n"
    )

    # When
    breaches = boundary_breaches(tmp_path, "streams.engine", IMPURE)

    # Then
    assert breaches == {
        "streams/engine/rules/bad.py": {"time", "streams.state.hot_users", "streams.app"}
    }


LINT_IMPORTS = (
    "import sys; from importlinter.cli import lint_imports; "
    "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True))"
)


def lint_imports(folder: Path, path: str = "") -> subprocess.CompletedProcess[str]:
    """import-linter over ``folder``'s pyproject.toml, in its own process: in this one it
    reconfigures logging, which other tests capture."""
    return subprocess.run(
        [sys.executable, "-c", LINT_IMPORTS],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": path} if path else None,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_layers_contract_holds() -> None:
    run = lint_imports(ROOT)

    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 kept, 0 broken" in run.stdout


def test_the_layers_contract_fails_on_a_wrong_import(tmp_path: Path) -> None:
    # Given the project's contract over three packages where the worker imports the CLI
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for package in ("memstream", "projections", "streams"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "memstream" / "cli.py").write_text("import streams.worker\n")
    (tmp_path / "streams" / "worker.py").write_text("from memstream.cli import main\n")

    # When
    run = lint_imports(tmp_path, path=str(tmp_path))

    # Then
    assert run.returncode == 1, run.stdout + run.stderr
    assert "BROKEN" in run.stdout
    assert "streams.worker -> memstream.cli" in run.stdout
