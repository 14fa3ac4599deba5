"""Frozen, slotted dataclasses built by setting their slots, and read into dicts, for the
values the hot paths make by the thousand (a memory's copies in the engine, every record
the codec decodes, every memory the state changelog writes).

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` (about
100 ns a field: 6.6 µs to evolve a memory's 30), and ``cls(**datum)`` matches every key
against the parameter names by string comparison. A slot's descriptor sets it in about
half that. The functions are generated, one line per field, as ``dataclasses`` generates
``__init__``: a loop over (setter, name) pairs cost a third more.

Only for frozen, slotted dataclasses without ``__post_init__`` (any other class is refused
when the function is made), so nothing ``__init__`` would do is skipped.

A speedup, kept because the worker needs it: the reference paths are the standard library's
(:func:`reference_builder`, :func:`reference_copier`, :func:`reference_reader`), which the
tests hold these to. With the reference paths (and cavro for the ledger,
``streams.kafka.avro_speedups``) the worker's path without Kafka took 7-37 % more time per
input (``python -m bench.engine_growth``, alternating runs) and ``memstream bench``'s
worker/pass-through ratio was 0.69 against a 0.7 target (docs/benchmarks.md, "Speedups").

Part of the pure engine: no I/O, clock or randomness.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

T = TypeVar("T")
Convert = Callable[[Any], Any]


def _field_names(cls: type) -> list[str]:
    if (
        not dataclasses.is_dataclass(cls)
        or not hasattr(cls, "__slots__")
        or hasattr(cls, "__post_init__")
    ):
        raise TypeError(f"{cls.__name__} must be a slotted dataclass without __post_init__")
    return [f.name for f in dataclasses.fields(cls)]


def _generated(name: str, lines: list[str], namespace: dict[str, Any]) -> Any:
    exec("\n".join(lines), namespace)  # noqa: S102 - code made here from the field names
    return namespace[name]


def slot_builder(
    cls: type[T], convert: Mapping[str, Convert] | None = None
) -> Callable[[Mapping[str, Any]], T]:
    """A ``{field: value}`` → ``cls`` builder, converting the fields ``convert`` names. The
    mapping must hold every field (a missing one raises ``KeyError``)."""
    converters = convert or {}
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    lines = ["def build(datum):", "    obj = new(cls)"]
    for i, name in enumerate(_field_names(cls)):
        namespace[f"set{i}"] = getattr(cls, name).__set__
        value = f"datum[{name!r}]"
        if name in converters:
            namespace[f"convert{i}"] = converters[name]
            value = f"convert{i}({value})"
        lines.append(f"    set{i}(obj, {value})")
    lines.append("    return obj")
    return cast(Callable[[Mapping[str, Any]], T], _generated("build", lines, namespace))


def slot_copier(cls: type[T]) -> Callable[[T, Mapping[str, Any]], T]:
    """A ``(value, changes)`` → copy of ``value`` with ``changes`` function, as
    ``dataclasses.replace`` without its checks. A name that is not a field of ``cls``
    raises ``TypeError``."""
    names = _field_names(cls)
    setters = {name: getattr(cls, name).__set__ for name in names}
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls, "setters": setters}
    lines = ["def copy(value, changes):", "    obj = new(cls)"]
    for i, name in enumerate(names):
        namespace[f"set{i}"] = setters[name]
        lines.append(f"    set{i}(obj, value.{name})")
    lines += [
        "    for name, changed in changes.items():",
        "        setter = setters.get(name)",
        "        if setter is None:",
        "            raise TypeError(f'{cls.__name__} has no field {name!r}')",
        "        setter(obj, changed)",
        "    return obj",
    ]
    return cast(Callable[[T, Mapping[str, Any]], T], _generated("copy", lines, namespace))


def field_reader(cls: type[T]) -> Callable[[T], dict[str, Any]]:
    """A ``value`` → ``{field: value}`` function (shallow, unlike ``dataclasses.asdict``):
    one dict display, a third of the time of a comprehension over ``getattr``."""
    names = _field_names(cls)
    items = ", ".join(f"{name!r}: value.{name}" for name in names)
    lines = ["def read(value):", f"    return {{{items}}}"]
    return cast(Callable[[T], dict[str, Any]], _generated("read", lines, {}))


def reference_builder(
    cls: type[T], convert: Mapping[str, Convert] | None = None
) -> Callable[[Mapping[str, Any]], T]:
    """:func:`slot_builder`'s plain path: ``cls(**datum)`` after the conversions."""
    converters = convert or {}
    names = _field_names(cls)

    def build(datum: Mapping[str, Any]) -> T:
        return cls(**{n: converters[n](datum[n]) if n in converters else datum[n] for n in names})

    return build


def reference_copier(cls: type[T]) -> Callable[[T, Mapping[str, Any]], T]:
    """:func:`slot_copier`'s plain path: ``dataclasses.replace``."""
    _field_names(cls)
    return lambda value, changes: dataclasses.replace(value, **changes)  # type: ignore[type-var]


def reference_reader(cls: type[T]) -> Callable[[T], dict[str, Any]]:
    """:func:`field_reader`'s plain path: a comprehension over ``getattr``."""
    names = _field_names(cls)
    return lambda value: {name: getattr(value, name) for name in names}
