"""memstream: consolidate AI-agent memory in the stream (Kafka + Faust + PostgreSQL/pgvector).

Services import :class:`MemoryPublisher` from here; everything else is wiring for the CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["MemoryPublisher"]
__version__ = "0.1.0"

if TYPE_CHECKING:
    from memstream.publisher import MemoryPublisher


def __getattr__(name: str) -> Any:
    # Imported lazily so `import memstream` (settings, CLI help) does not load confluent-kafka.
    if name == "MemoryPublisher":
        from memstream.publisher import MemoryPublisher

        return MemoryPublisher
    raise AttributeError(name)
