"""A memory's text fields in one value, so its texts are sealed and opened in one operation.

Sealed field by field, a memory's texts cost one seal each on the way out and one opening
each on the way in (content, speaker, each metadata value, each trigger), each with its own
nonce, base64 and associated data: the projector spent more on that than on AES-GCM itself
(docs/benchmarks.md, "Sealing cost"). The envelope puts them in one plaintext, sealed once
into the memory's ``content`` (``ms3:`` with the user's key, ``ms4:`` with a memory's), the
other text fields left empty in the clear record. The embedding stays a sealed value of its
own in its bytes field: in the envelope it would go through base64 in a text, which costs
more (~5 µs for 384 floats each way) than the seal it saves.

The layout is plain bytes any language reads without a library (docs/analytics.md, "The
encrypted envelope")::

    flags (1: bit 0 a speaker) ‖ metadata pairs M (4) ‖ triggers T (4)
    ‖ the byte length of each text (4 each, big-endian): content, [speaker],
      M × (key, value), T × trigger
    ‖ the texts, UTF-8, one after another

Pure: no keys, no I/O.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

_HEAD = struct.Struct(">BII")
_SPEAKER = 1


@dataclass(slots=True)
class Texts:
    """A memory's text fields, as the envelope carries them."""

    content: str
    speaker: str | None
    metadata: dict[str, str]
    trigger_conditions: tuple[str, ...]


def pack(fields: Texts) -> bytes:
    """``fields`` as one value (the layout in the module doc)."""
    texts = [fields.content]
    flags = 0
    if fields.speaker is not None:
        flags |= _SPEAKER
        texts.append(fields.speaker)
    for key, value in fields.metadata.items():
        texts.append(key)
        texts.append(value)
    texts.extend(fields.trigger_conditions)
    pairs, triggers = len(fields.metadata), len(fields.trigger_conditions)
    encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
    lengths = struct.pack(f">{len(encoded)}I", *map(len, encoded))
    return _HEAD.pack(flags, pairs, triggers) + lengths + b"".join(encoded)


def unpack(raw: bytes) -> Texts:
    """The fields :func:`pack` packed; ``ValueError`` when ``raw`` is not such a value (it
    opened, so it was sealed as one: only a writer's bug gets here)."""
    try:
        flags, pairs, triggers = _HEAD.unpack_from(raw)
    except struct.error as exc:
        raise ValueError(f"not a memory's envelope: {exc}") from None
    count = 1 + (flags & _SPEAKER) + 2 * pairs + triggers
    at = _HEAD.size + 4 * count
    if at > len(raw):
        raise ValueError("not a memory's envelope: more texts than its bytes can hold")
    lengths = struct.unpack_from(f">{count}I", raw, _HEAD.size)
    texts = []
    for length in lengths:
        texts.append(raw[at : at + length].decode("utf-8", "surrogatepass"))
        at += length
    if at != len(raw):
        raise ValueError("not a memory's envelope: its lengths do not add up")
    speaker = texts[1] if flags & _SPEAKER else None
    first = 1 + (flags & _SPEAKER)
    end = first + 2 * pairs
    metadata = dict(zip(texts[first:end:2], texts[first + 1 : end : 2], strict=True))
    return Texts(texts[0], speaker, metadata, tuple(texts[end:]))
