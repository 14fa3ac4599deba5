"""Avro binary writers generated from a schema: one straight-line function per record type,
reading the fields of the engine's dataclasses directly.

cavro writes a ledger record in 15-24 µs, and the codec first copies the dataclasses into
dicts for it (3-4 µs more); the ledger's encoding was 6 % of a worker's time on the bench.
The generated writer takes a third of that (``python -m bench.ledger_encoding``).

A speedup, kept because the worker needs it, with cavro as its reference: the codec's
:func:`~streams.kafka.codec.frame_with_cavro` is the plain path, what the tests hold every
payload's bytes to and what writes anything this writer declines. Measured with both
speedups off (docs/benchmarks.md, "Speedups"), the worker/pass-through ratio was 0.69
against a 0.7 target.

It writes only what it is sure cavro writes byte for byte: each value is checked to be of
the exact Python type its Avro type is written from (``float`` for a double, ``int`` in range
for an int or long, ``str``, ``bytes``, ``True``/``False``, ``tuple``/``list``, ``dict``, a
known enum symbol, a known record class), and anything else raises :class:`NotWritable`. The
codec then encodes that value with cavro, which writes it or names what is wrong with it: a
value the writer declines is never written differently, only more slowly.

The generated code mirrors the Avro spec's binary encoding: zig-zag varints for int, long,
lengths, union branches and enum indices; IEEE little-endian doubles; arrays and maps as
one block of items followed by an empty block (cavro's layout, checked in the tests).
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Mapping
from typing import Any

INT_RANGE = (-(2**31), 2**31)
LONG_RANGE = (-(2**63), 2**63)
_SMALL = tuple(bytes([n]) for n in range(128))
"""A zig-zag value below 128 as a varint: one byte, the value itself."""
_DOUBLES = {count: struct.Struct("<" + "d" * count).pack for count in range(1, 9)}


class NotWritable(ValueError):
    """A value the generated writer does not write; cavro decides what it means."""


def _not_writable(where: str) -> NotWritable:
    return NotWritable(f"{where}: not a value this writer is sure of")


def varint(number: int) -> bytes:
    """The zig-zag varint of a long (the caller has checked its range)."""
    zigzag = (number << 1) ^ (number >> 63)
    if zigzag < 128:
        return _SMALL[zigzag]
    out = bytearray()
    while zigzag > 127:
        out.append((zigzag & 0x7F) | 0x80)
        zigzag >>= 7
    out.append(zigzag)
    return bytes(out)


recent_varint = functools.lru_cache(maxsize=4096)(varint)
""":func:`varint`, remembered: a ledger record repeats its times (an event's time is its
memory's ``created_at`` and ``valid_at``; a promotion repeats the store's), and a time takes
0.5 µs to write against under 0.1 to look up."""


Writer = Callable[[Any], bytes]


def record_writer(
    schema: Mapping[str, Any], classes: Mapping[str, type], prefix: bytes = b""
) -> Writer:
    """A function writing an instance of the record ``schema`` describes as Avro binary,
    after ``prefix`` (a frame's header).

    ``schema``: the record with every named type inlined at its first use (as
    ``fastavro.schema.load_schema`` expands it) and referred to by full name after that.
    ``classes``: full Avro name → the Python class each record type is written from, for
    every record type in the schema; a union of records dispatches on the value's class.
    Raises ``ValueError`` for a schema it cannot write (a type it does not support, a
    record type without a class)."""
    generator = _Generator(classes)
    entry = generator.record(schema, namespace="")
    namespace = generator.namespace
    exec("\n".join(generator.lines), namespace)  # noqa: S102 - code generated from the schema
    for table in generator.dispatch_tables:  # the functions exist now
        for cls, (branch, function) in table.items():
            table[cls] = (branch, namespace[function])
    write_record = namespace[entry]

    def write(value: Any) -> bytes:
        out = bytearray(prefix)
        try:
            write_record(value, out)
        except UnicodeEncodeError as exc:  # a lone surrogate: cavro has its own rule for it
            raise NotWritable(f"a string UTF-8 cannot encode: {exc}") from None
        return bytes(out)

    return write


class _Generator:
    """Emits one function per record type, each appending to a ``bytearray`` named ``out``."""

    def __init__(self, classes: Mapping[str, type]) -> None:
        self.classes = dict(classes)
        self.lines: list[str] = []
        self.namespace: dict[str, Any] = {
            "NotWritable": NotWritable,
            "not_writable": _not_writable,
            "varint": varint,
            "recent_varint": recent_varint,
            "SMALL": _SMALL,
            "INT_LOW": INT_RANGE[0],
            "INT_HIGH": INT_RANGE[1],
            "LONG_LOW": LONG_RANGE[0],
            "LONG_HIGH": LONG_RANGE[1],
        }
        self.functions: dict[str, str] = {}  # full record name -> its function's name
        self.named: dict[str, Any] = {}  # full name -> the schema of every named type
        self.dispatch_tables: list[dict[type, tuple[bytes, Any]]] = []
        self.counter = 0

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    # --- named types ---------------------------------------------------------------------

    def full_name(self, node: Mapping[str, Any], namespace: str) -> str:
        name = str(node["name"])
        if "." in name:
            return name
        space = node.get("namespace", namespace)
        return f"{space}.{name}" if space else name

    def resolve(self, node: Any, namespace: str) -> Any:
        """A reference by name → the named type's schema (registered on first sight)."""
        if isinstance(node, str) and node not in _PRIMITIVES:
            full = node if "." in node or not namespace else f"{namespace}.{node}"
            if full not in self.named:
                raise ValueError(f"unknown type {node!r}")
            return self.named[full]
        if isinstance(node, dict) and node.get("type") in ("record", "enum", "fixed"):
            self.named.setdefault(self.full_name(node, namespace), node)
        return node

    def record(self, node: Mapping[str, Any], namespace: str) -> str:
        """The name of the function writing this record type (generated on first use)."""
        full = self.full_name(node, namespace)
        self.named.setdefault(full, node)
        if full in self.functions:
            return self.functions[full]
        if full not in self.classes:
            raise ValueError(f"no class given for the record type {full}")
        function = self.fresh("write_")
        self.functions[full] = function
        own_space = full.rpartition(".")[0]
        body: list[str] = []
        fields = list(node["fields"])
        index = 0
        while index < len(fields):
            run = self._double_run(fields, index, own_space)
            if len(run) > 1:
                body += self._doubles(run)
                index += len(run)
                continue
            field = fields[index]
            value = self.fresh("v")
            body.append(f"{value} = o.{field['name']}")
            body += self.value(field["type"], value, own_space, f"{full}.{field['name']}")
            index += 1
        self.lines.append(f"def {function}(o, out):")
        self.lines += ["    " + line for line in body] or ["    pass"]
        return function

    def _double_run(self, fields: list[Any], start: int, namespace: str) -> list[str]:
        """The names of the consecutive plain double fields from ``start`` (at most 8)."""
        names: list[str] = []
        for field in fields[start : start + 8]:
            if self.resolve(field["type"], namespace) != "double":
                break
            names.append(str(field["name"]))
        return names

    def _doubles(self, names: list[str]) -> list[str]:
        """Consecutive doubles packed in one call."""
        pack = self.fresh("pack_doubles")
        self.namespace[pack] = _DOUBLES[len(names)]
        values = [self.fresh("v") for _ in names]
        lines = [f"{v} = o.{name}" for v, name in zip(values, names, strict=True)]
        checks = " or ".join(f"type({v}) is not float" for v in values)
        lines += [f"if {checks}:", f"    raise not_writable({', '.join(names)!r})"]
        lines.append(f"out += {pack}({', '.join(values)})")
        return lines

    # --- values --------------------------------------------------------------------------

    def value(self, node: Any, v: str, namespace: str, where: str) -> list[str]:
        """Lines writing the Python value named ``v`` as Avro type ``node``."""
        node = self.resolve(node, namespace)
        if isinstance(node, list):
            return self.union(node, v, namespace, where)
        kind = node if isinstance(node, str) else node["type"]
        if kind in _PRIMITIVES and isinstance(node, dict) and set(node) - {"type", "logicalType"}:
            raise ValueError(f"{where}: unsupported attributes on {kind}")
        fail = f"raise not_writable({where!r})"
        if kind == "null":
            return [f"if {v} is not None:", f"    {fail}"]
        if kind == "boolean":
            return [
                f"if {v} is True:",
                "    out += b'\\x01'",
                f"elif {v} is False:",
                "    out += b'\\x00'",
                "else:",
                f"    {fail}",
            ]
        if kind in ("int", "long"):
            low, high = ("INT_LOW", "INT_HIGH") if kind == "int" else ("LONG_LOW", "LONG_HIGH")
            return [
                f"if type({v}) is not int or not {low} <= {v} < {high}:",
                f"    {fail}",
                f"if 0 <= {v} < 64:",
                f"    out += SMALL[{v} << 1]",
                "else:",
                f"    out += recent_varint({v})",
            ]
        if kind == "double":
            pack = self.fresh("pack_doubles")
            self.namespace[pack] = _DOUBLES[1]
            return [f"if type({v}) is not float:", f"    {fail}", f"out += {pack}({v})"]
        if kind == "string":
            encoded = self.fresh("b")
            return [
                f"if type({v}) is not str:",
                f"    {fail}",
                f"{encoded} = {v}.encode()",
                *self._length_prefixed(encoded),
            ]
        if kind == "bytes":
            return [f"if type({v}) is not bytes:", f"    {fail}", *self._length_prefixed(v)]
        if kind == "enum":
            return self.enum(node, v, namespace, fail)
        if kind == "array":
            return self.array(node, v, namespace, where, fail)
        if kind == "map":
            return self.map(node, v, namespace, where, fail)
        if kind == "record":
            function = self.record(node, namespace)
            cls = self.fresh("cls")
            self.namespace[cls] = self.classes[self.full_name(node, namespace)]
            return [f"if type({v}) is not {cls}:", f"    {fail}", f"{function}({v}, out)"]
        raise ValueError(f"{where}: the writer does not support Avro type {kind!r}")

    def _length_prefixed(self, b: str) -> list[str]:
        return [
            f"if len({b}) < 64:",
            f"    out += SMALL[len({b}) << 1]",
            "else:",
            f"    out += varint(len({b}))",
            f"out += {b}",
        ]

    def enum(self, node: Mapping[str, Any], v: str, namespace: str, fail: str) -> list[str]:
        symbols = self.fresh("symbols")
        self.namespace[symbols] = {symbol: varint(i) for i, symbol in enumerate(node["symbols"])}
        index = self.fresh("i")
        return [
            f"{index} = {symbols}.get({v}) if type({v}) is str else None",
            f"if {index} is None:",
            f"    {fail}",
            f"out += {index}",
        ]

    def array(
        self, node: Mapping[str, Any], v: str, namespace: str, where: str, fail: str
    ) -> list[str]:
        item = self.fresh("item")
        return [
            f"if type({v}) is not tuple and type({v}) is not list:",
            f"    {fail}",
            f"if {v}:",
            f"    out += varint(len({v}))",
            f"    for {item} in {v}:",
            *("        " + line for line in self.value(node["items"], item, namespace, where)),
            "out += b'\\x00'",
        ]

    def map(
        self, node: Mapping[str, Any], v: str, namespace: str, where: str, fail: str
    ) -> list[str]:
        key, item = self.fresh("key"), self.fresh("item")
        return [
            f"if type({v}) is not dict:",
            f"    {fail}",
            f"if {v}:",
            f"    out += varint(len({v}))",
            f"    for {key}, {item} in {v}.items():",
            *("        " + line for line in self.value("string", key, namespace, where)),
            *("        " + line for line in self.value(node["values"], item, namespace, where)),
            "out += b'\\x00'",
        ]

    def union(self, branches: list[Any], v: str, namespace: str, where: str) -> list[str]:
        """``[null, T]`` tests for None; a union of records dispatches on the value's class.
        Any other union is not supported."""
        resolved = [self.resolve(b, namespace) for b in branches]
        if len(resolved) == 2 and "null" in resolved:
            null_index = resolved.index("null")
            other = resolved[1 - null_index]
            return [
                f"if {v} is None:",
                f"    out += SMALL[{null_index << 1}]",
                "else:",
                f"    out += SMALL[{(1 - null_index) << 1}]",
                *("    " + line for line in self.value(other, v, namespace, where)),
            ]
        if all(isinstance(b, dict) and b.get("type") == "record" for b in resolved):
            dispatch = self.fresh("dispatch")
            table: dict[type, tuple[bytes, Any]] = {}  # class -> (branch, function name)
            for i, branch in enumerate(resolved):
                full = self.full_name(branch, namespace)
                function = self.record(branch, namespace)
                if full not in self.classes:
                    raise ValueError(f"{where}: no class given for the record type {full}")
                table[self.classes[full]] = (varint(i), function)
            self.namespace[dispatch] = table
            self.dispatch_tables.append(table)
            chosen = self.fresh("branch")
            return [
                f"{chosen} = {dispatch}.get(type({v}))",
                f"if {chosen} is None:",
                f"    raise not_writable({where!r})",
                f"out += {chosen}[0]",
                f"{chosen}[1]({v}, out)",
            ]
        raise ValueError(f"{where}: the writer supports [null, T] and unions of records only")


_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
