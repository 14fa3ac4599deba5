"""The shape of the code, checked: every module name says one thing.

A name that occurs twice (``metrics.py`` in the worker and in the projector) makes a newcomer,
a stack trace and a ``grep`` ask "which one?". The pure engine (``streams/engine/``) is left
out: its own repeats (``salience.py`` beside ``rules/salience.py``, ``judge/rules.py`` beside
``rules/``) are for a change of the engine itself.
"""

from __future__ import annotations

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
    places = module_names(ROOT, NAMED_TREES, skip=ENGINE)

    assert len(places) > 60  # the walk found the modules (it would pass on an empty tree)
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
