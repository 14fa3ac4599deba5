"""The baseline for worker throughput: a bare Faust agent that forwards records unchanged.

Run as ``python -m bench.passthrough`` with the ``MEMSTREAM_*`` settings of a benchmark
pipeline. It reads ``<prefix>memory.events`` and sends every record (key, value, headers) to
``<prefix>memory.consolidation`` (same partition) with the worker's Faust configuration —
exactly_once, the same commit interval, partitions and in-memory store — but no decoding,
state or logic, so
the worker/pass-through ratio is the cost of memstream's own work.
"""

from __future__ import annotations

import faust
from faust.worker import Worker as FaustWorker

from streams.config.settings import Settings
from streams.kafka.faust_app import faust_app, raw_topic


def passthrough_group(settings: Settings) -> str:
    """The pass-through's Faust app id, which is its consumer group."""
    return f"{settings.app_id}-passthrough"


def build_app(settings: Settings) -> faust.App:
    app = faust_app(settings, passthrough_group(settings))
    source = raw_topic(app, settings.events_topic, settings)
    target = raw_topic(app, settings.ledger_topic, settings)

    @app.agent(source, name="passthrough")
    async def passthrough(stream: faust.StreamT) -> None:
        async for event in stream.events():
            message = event.message
            await target.send(
                key=message.key,
                value=message.value,
                headers=message.headers,
                partition=message.partition,  # as the worker: output co-partitioned with input
            )

    return app


def main() -> None:
    settings = Settings.from_env()
    settings.worker_data_dir.mkdir(parents=True, exist_ok=True)
    app = build_app(settings)
    print(
        f"bench pass-through: {settings.events_topic} -> {settings.ledger_topic} "
        f"(exactly_once, commit interval {settings.commit_interval_seconds} s)",
        flush=True,
    )
    FaustWorker(app, loglevel="INFO").execute_from_commandline()


if __name__ == "__main__":
    main()
