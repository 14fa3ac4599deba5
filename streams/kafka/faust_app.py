"""The worker's Faust application and its topics of raw bytes: one configuration, shared with
the benchmark's pass-through baseline (``bench/passthrough.py``) so the two are measured on
the same footing."""

from __future__ import annotations

import faust

from streams.config.settings import Settings
from streams.kafka.fetch_wait import bound_fetch_wait


def faust_app(settings: Settings, app_id: str) -> faust.App:
    """The Faust configuration of the worker, shared with the benchmark's pass-through
    baseline so the two are measured on the same footing. ``broker_credentials`` carries the
    Kafka security settings (SASL/TLS) to every aiokafka client Faust makes; a configured
    ``instance_id`` makes the worker a static group member, so a restart takes its
    partitions back at once instead of after the session timeout; the consumer's fetch wait
    is bounded (``streams/kafka/fetch_wait.py``); the producer's record batches hold
    ``producer_batch_bytes`` (a batch of inputs sends its ~2 KB records at once, and at
    Faust's 16 KiB each full batch made the next send wait for the broker)."""
    from streams.config.kafka_security import faust_credentials

    app = faust.App(
        app_id,
        broker=f"kafka://{settings.kafka_bootstrap}",
        broker_credentials=faust_credentials(settings),
        store="memory://",
        datadir=str(settings.worker_data_dir / app_id),
        processing_guarantee="exactly_once",
        topic_partitions=settings.partitions,
        topic_replication_factor=1,
        broker_commit_interval=settings.commit_interval_seconds,
        consumer_auto_offset_reset="earliest",
        consumer_group_instance_id=settings.instance_id or None,
        broker_session_timeout=settings.session_timeout_seconds,
        web_enabled=False,
        producer_max_batch_size=settings.producer_batch_bytes,
    )
    bound_fetch_wait(app, settings.worker_fetch_wait_ms)
    return app


def raw_topic(app: faust.App, name: str, settings: Settings) -> faust.TopicT:
    """A topic of raw bytes: records are our own Avro single-object encoding."""
    return app.topic(
        name, partitions=settings.partitions, key_serializer="raw", value_serializer="raw"
    )
