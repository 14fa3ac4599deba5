"""Security (issue 10): memstream against a SASL_SSL-only broker with ACLs, per-user isolation
in PostgreSQL through the reader role, and what /metrics exposes.

All tests share one secure local stack (`memstream up --secure`: SCRAM-SHA-512 over TLS,
StandardAuthorizer) started for this module; the Kafka ones also share one pipeline run on
it: the real `memstream worker` and `memstream project` processes. The row-level security
tests use that stack's PostgreSQL: rows written by the table owner, as the projector writes
them, read back as a login role that is a member of ``memstream_reader`` and holds the
database's reader key (the tricks of an attacker without the key: test_isolation.py).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import psycopg
import pytest
from confluent_kafka import Consumer, KafkaError
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)
from prometheus_client.parser import text_string_to_metric_families
from psycopg.conninfo import make_conninfo

from memstream.processes import start_command
from memstream.stack import LocalStack, StackError, StackInfo
from memstream.stack.ports import pick_port
from memstream.stack.secure import SecureFiles
from memstream.waiting import wait_until
from projections import grants, queries
from projections.grants import GrantKey
from projections.reader import MemoryReader
from projections.schema import LAYER_TABLES, ensure_database, migrate
from streams.config.kafka_security import confluent_config
from streams.config.settings import Settings
from streams.kafka import codec
from tests.support import Pipeline
from tests.workloads import BASE_TIME, DIM

pytestmark = pytest.mark.integration

USERS = ("alice", "bob", "carol")


def unit_vector(index: int) -> bytes:
    values = [0.0] * DIM
    values[index] = 1.0
    return codec.pack_embedding(values)


# ---- the secure stack and one pipeline run on it --------------------------------------------


@dataclass
class SecureStack:
    local: LocalStack
    info: StackInfo
    up_progress: list[str]

    @property
    def files(self) -> SecureFiles:
        return self.local.secure_files

    def secrets(self) -> list[str]:
        return [p.read_text().strip() for p in self.files.secrets_dir.glob("*.password")]

    def reader_key(self) -> GrantKey:
        """The stack database's reader key, which `memstream up` exported for local tools."""
        return GrantKey.from_file(self.local.layout.reader_grant_key_file)


@pytest.fixture(scope="module")
def secure_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureStack]:
    state_dir = tmp_path_factory.mktemp("secure-stack")
    settings = Settings.from_env(
        {"MEMSTREAM_STATE_DIR": str(state_dir), "MEMSTREAM_PARTITIONS": "4"}
    )
    local = LocalStack(settings)
    progress: list[str] = []
    info = local.up(progress=progress.append, secure=True)
    try:
        yield SecureStack(local, info, progress)
    finally:
        local.down(progress=lambda _message: None)


@dataclass
class SecureRun:
    pipeline: Pipeline
    contents: dict[str, list[str]] = field(default_factory=dict)  # user -> memory contents


@pytest.fixture(scope="module")
def secure_run(
    secure_stack: SecureStack, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SecureRun]:
    """Three users' memories published → worker → ledger → projector, all over SASL_SSL."""
    pipeline = Pipeline.create(secure_stack.info, tmp_path_factory.mktemp("secure-pipeline"))
    run = SecureRun(pipeline)
    try:
        pipeline.start_all()
        for u, user in enumerate(USERS):
            run.contents[user] = [f"{user} secret note {i}" for i in range(3)]
            for i, content in enumerate(run.contents[user]):
                pipeline.publisher.write(
                    user,
                    content,
                    memory_id=f"{user}-m{i}",
                    embedding=unit_vector(10 * u + i),
                    occurred_at=BASE_TIME + i,
                )
        pipeline.publisher.flush()
        total = sum(len(c) for c in run.contents.values())
        wait_until(
            lambda: pipeline.scalar("SELECT count(*) FROM working_memories") >= total,
            timeout=120,
            what=f"{total} memories projected over SASL_SSL",
            describe=pipeline.logs,
        )
        yield run
    finally:
        pipeline.close()


def test_the_whole_pipeline_runs_against_the_sasl_ssl_broker(secure_run: SecureRun) -> None:
    """Given a broker that accepts only SCRAM over TLS and denies what no ACL allows,
    when services publish and the worker and projector run with the stack's settings,
    then every memory reaches PostgreSQL, authenticated as the memstream principal."""
    pipeline = secure_run.pipeline

    rows = pipeline.query("SELECT user_id, content FROM working_memories")

    assert sorted(rows) == sorted(
        (user, content) for user, contents in secure_run.contents.items() for content in contents
    )
    assert pipeline.settings.kafka_security_protocol == "SASL_SSL"
    assert "Authenticated as memstream via SCRAM-SHA-512" in pipeline.processes["worker"].log_tail(
        10_000
    )


def test_a_client_with_a_wrong_password_is_refused_with_a_clear_error(
    secure_run: SecureRun, tmp_path: Path
) -> None:
    """Given the memstream user with a wrong password in its password file,
    when the worker starts,
    then it exits at once saying whose credentials were refused and which variable to fix,
    without printing the password."""
    wrong = tmp_path / "wrong.password"
    wrong.write_text("definitely-not-the-password\n")
    settings = secure_run.pipeline.settings.with_overrides(
        kafka_password_file=str(wrong), worker_metrics_port=pick_port(None)[0]
    )

    worker = start_command("worker-wrong-password", ["worker"], settings, tmp_path / "logs")
    wait_until(lambda: not worker.alive(), timeout=60, what="the worker to give up")
    output = worker.log_tail(200)

    assert worker.popen.returncode == 2, output
    assert "refused the SCRAM-SHA-512 credentials of user 'memstream'" in output
    assert "MEMSTREAM_KAFKA_PASSWORD_FILE" in output
    assert "definitely-not-the-password" not in output


def test_a_principal_without_acls_cannot_read_the_ledger(
    secure_stack: SecureStack, secure_run: SecureRun, tmp_path: Path
) -> None:
    """Given a user that authenticates and may use its own consumer group, but was granted
    nothing on memstream's topics,
    when it subscribes to the ledger,
    then the broker refuses it (topic authorization) and it receives no record."""
    password = tmp_path / "outsider.password"
    password.write_text("outsider-password-0123456789")
    secure_stack.local.add_kafka_user("outsider", password.read_text())
    group = f"outsider-{uuid.uuid4().hex[:6]}"
    admin = AdminClient(confluent_config(secure_stack.local.admin_settings(), report_errors=False))
    grant = AclBinding(
        ResourceType.GROUP,
        group,
        ResourcePatternType.LITERAL,
        "User:outsider",
        "*",
        AclOperation.READ,
        AclPermissionType.ALLOW,
    )
    for future in admin.create_acls([grant]).values():
        future.result(timeout=30)
    outsider = secure_run.pipeline.settings.with_overrides(
        kafka_username="outsider", kafka_password_file=str(password)
    )
    consumer = Consumer(
        {
            **confluent_config(outsider, report_errors=False),
            "group.id": group,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([outsider.ledger_topic])
    received: list[bytes | None] = []
    errors: list[int] = []

    def refused() -> bool:
        for message in consumer.consume(100, 0.5):
            error = message.error()
            if error is None:
                received.append(message.value())
            else:
                errors.append(error.code())
        return KafkaError.TOPIC_AUTHORIZATION_FAILED in errors

    try:
        wait_until(refused, timeout=60, interval=0, what="the broker to refuse the outsider")
    finally:
        consumer.close()

    assert received == []


def test_no_secret_appears_in_output_logs_or_stack_env(
    secure_stack: SecureStack, secure_run: SecureRun
) -> None:
    """Given a secure stack and a pipeline that ran on it,
    when `memstream up` is run again and every log is read,
    then no password and no reader key appears in its output, stack.env, stack.json, the
    broker's or the processes' logs or command lines; secrets are 0600 files in a 0700
    directory."""
    state_dir = secure_stack.info.state_dir
    again = subprocess.run(
        [sys.executable, "-m", "memstream.cli", "up"],
        env={**os.environ, "MEMSTREAM_STATE_DIR": str(state_dir), "MEMSTREAM_PARTITIONS": "4"},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    assert f"MEMSTREAM_KAFKA_PASSWORD_FILE='{secure_stack.files.app_password_file}'" in (
        again.stdout
    )
    texts = {
        "up stdout": again.stdout,
        "up stderr": again.stderr,
        "first up": "\n".join(secure_stack.up_progress),
        "stack.env": (state_dir / "stack.env").read_text(),
        "stack.json": (state_dir / "stack.json").read_text(),
        "broker cmdline": " ".join(psutil.Process(secure_stack.info.kafka_pid).cmdline()),
    }
    kafka_logs = state_dir / "kafka" / "logs"
    for log in [*kafka_logs.iterdir(), *(secure_run.pipeline.workdir / "logs").glob("*.log")]:
        texts[str(log)] = log.read_text(errors="replace")
    secrets = secure_stack.secrets()
    reader_key = secure_stack.reader_key()

    leaks = [
        (name, s[:4])
        for name, text in texts.items()
        for s in [*secrets, reader_key.secret.hex(), reader_key.to_text()]
        if s in text
    ]

    assert len(secrets) == 3
    assert leaks == []
    assert stat.S_IMODE(secure_stack.files.secrets_dir.stat().st_mode) == 0o700
    for path in [*secure_stack.files.secrets_dir.iterdir(), state_dir / "kafka/server.properties"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_a_secure_stack_stays_secure(secure_stack: SecureStack) -> None:
    """Given a running secure stack, when `up` is asked for a plaintext broker in its state dir,
    then it refuses, and says how to get one instead."""
    with pytest.raises(StackError, match="another MEMSTREAM_STATE_DIR"):
        secure_stack.local.up(progress=lambda _message: None, secure=False)

    assert secure_stack.local.status().running


def test_metrics_listen_on_loopback_by_default(secure_run: SecureRun) -> None:
    """Given the worker and projector started without MEMSTREAM_METRICS_BIND,
    then their /metrics sockets listen on 127.0.0.1 only."""
    pipeline = secure_run.pipeline
    ports = {
        "worker": pipeline.settings.worker_metrics_port,
        "projector": pipeline.settings.projector_metrics_port,
    }

    for name, port in ports.items():
        listening = {
            c.laddr.ip
            for c in psutil.Process(pipeline.processes[name].pid).net_connections("tcp")
            if c.status == psutil.CONN_LISTEN and c.laddr.port == port
        }
        assert listening == {"127.0.0.1"}, (name, listening)


def test_metric_labels_carry_no_user_ids_or_content_after_a_multi_user_run(
    secure_run: SecureRun,
) -> None:
    """Given three users' memories processed, when both /metrics endpoints are scraped,
    then no label value names a user, a memory id or any content."""
    pipeline = secure_run.pipeline
    forbidden = {*USERS}
    for user, contents in secure_run.contents.items():
        forbidden |= set(contents) | {f"{user}-m{i}" for i in range(len(contents))}

    values = set()
    for port in (pipeline.settings.worker_metrics_port, pipeline.settings.projector_metrics_port):
        values |= label_values(port)

    assert values, "the scrape returned no labelled samples"
    assert [v for v in values if any(f in v for f in forbidden)] == []


def test_the_reader_role_sees_only_the_named_users_pipeline_memories(
    secure_run: SecureRun, reader_role: str
) -> None:
    """Given memories projected from the ledger for three users,
    when alice recalls with bob's embedding through the reader role,
    then only alice's memories come back, though bob's match exactly."""
    owner_url = secure_run.pipeline.settings.database_url
    url = make_conninfo(owner_url, user=reader_role)
    with psycopg.connect(owner_url) as owner:
        key = grants.current_key(owner)

    with MemoryReader.connect(url, grant_key=key) as reader:
        near = reader.nearest("alice", unit_vector(10), k=10)  # bob's first memory

    assert {m.memory_id for m in near} == {"alice-m0", "alice-m1", "alice-m2"}


def label_values(port: int) -> set[str]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return {
        value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        for value in sample.labels.values()
    }


# ---- row-level security ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def reader_role(secure_stack: SecureStack) -> Iterator[str]:
    """A login role of the cluster that is a member of memstream_reader, as a service gets."""
    with member_role(secure_stack.info.database_url, "memstream_reader") as name:
        yield name


@contextmanager
def member_role(server_url: str, group: str) -> Iterator[str]:
    """A new login role in ``group`` (roles belong to the cluster: dropped afterwards)."""
    name = f"svc_{group.removeprefix('memstream_')}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{name}" LOGIN IN ROLE {group}')
    try:
        yield name
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f'DROP ROLE "{name}"')


@dataclass
class Models:
    """A fresh read-model database written by its owner, URLs to read it as roles, and its
    reader key (which a service reading as memstream_reader is given)."""

    owner_url: str
    reader_url: str
    projector_url: str
    key: GrantKey


@pytest.fixture
def models(secure_stack: SecureStack) -> Iterator[Models]:
    """A fresh database on the module's stack, migrated by its owner (as `memstream migrate`
    runs), with one login role in each of memstream_reader and memstream_projector."""
    server = secure_stack.info.database_url
    dbname = f"rls_{uuid.uuid4().hex[:10]}"
    owner = ensure_database(server, dbname)
    migrate(owner, DIM)
    with psycopg.connect(owner) as conn:
        key = grants.current_key(conn)
    with (
        member_role(server, "memstream_reader") as reader,
        member_role(server, "memstream_projector") as projector,
    ):
        yield Models(
            owner, make_conninfo(owner, user=reader), make_conninfo(owner, user=projector), key
        )


MEMORY_INSERT = (
    "INSERT INTO {table} (user_id, memory_id, version, kind, content, importance, confidence, "
    "emotional_salience, valence, priority, scope, created_by, consent, created_at, embedding) "
    "VALUES (%s, %s, 1, 'fact', %s, 0.5, 0.5, 0, 0, 'normal', 'agent', 'user', false, "
    "to_timestamp(1790000000), %s::vector)"
)
LINK_INSERT = (
    "INSERT INTO memory_links (user_id, source_id, target_id, link_type, confidence, "
    "created_at, event_id) VALUES (%s, %s, %s, %s, 0.9, to_timestamp(1790000000), %s)"
)


def vector_text(index: int) -> str:
    values = ["0"] * DIM
    values[index] = "1"
    return "[" + ",".join(values) + "]"


def write_two_users(owner_url: str) -> None:
    """alice and bob each have semantic facts m1, m2 (the same ids: ids are per user) linked by
    a contradiction and a lineage link; bob's m9 equals the query vector used below."""
    with psycopg.connect(owner_url) as conn:
        for user, offset in (("alice", 0), ("bob", 50)):
            for i in (1, 2):
                conn.execute(
                    MEMORY_INSERT.format(table=LAYER_TABLES["semantic"]),
                    (user, f"m{i}", f"{user}'s fact {i}", vector_text(offset + i)),
                )
            conn.execute(LINK_INSERT, (user, "m2", "m1", "contradicts", f"{user}-e1"))
            conn.execute(LINK_INSERT, (user, "m1", "m0", "derived_from", f"{user}-e2"))
        conn.execute(
            MEMORY_INSERT.format(table=LAYER_TABLES["working"]),
            ("bob", "m9", "bob's nearest memory", vector_text(99)),
        )


def test_recall_returns_only_the_named_users_memories_even_when_others_are_nearer(
    models: Models,
) -> None:
    """Given bob's memory equal to the query and alice's far from it,
    when alice recalls through the reader role,
    then she gets her own memories and none of bob's."""
    write_two_users(models.owner_url)

    with MemoryReader.connect(models.reader_url, grant_key=models.key) as reader:
        near = reader.nearest("alice", unit_vector(99), k=10)

    assert sorted((m.memory_id, m.content) for m in near) == [
        ("m1", "alice's fact 1"),
        ("m2", "alice's fact 2"),
    ]


def test_a_query_for_another_user_inside_a_users_scope_returns_nothing(models: Models) -> None:
    """Given the reader scoped to alice, when a query asks for bob's rows by his user_id,
    then row-level security returns none of them: the filter in the query is not the guard."""
    write_two_users(models.owner_url)

    with (
        MemoryReader.connect(models.reader_url, grant_key=models.key) as reader,
        reader.as_user("alice") as conn,
    ):
        bobs_recall = queries.nearest_memories(conn, "bob", unit_vector(99), k=10)
        bobs_links = queries.contradictions(conn, "bob")
        any_row = conn.execute(
            "SELECT count(*) FROM semantic_facts WHERE user_id = 'bob'"
        ).fetchone()

    assert bobs_recall == []
    assert bobs_links == []
    assert any_row == (0,)


def test_contradictions_are_only_the_named_users(models: Models) -> None:
    write_two_users(models.owner_url)

    with MemoryReader.connect(models.reader_url, grant_key=models.key) as reader:
        links = reader.contradictions("alice")

    assert [(lk.source_id, lk.target_id, lk.link_type) for lk in links] == [
        ("m2", "m1", "contradicts")
    ]


def test_lineage_is_only_the_named_users_though_memory_ids_coincide(models: Models) -> None:
    """Given alice and bob both with a memory m1 and links around it,
    when alice asks for m1's lineage, then she gets her two links, not bob's."""
    write_two_users(models.owner_url)

    with MemoryReader.connect(models.reader_url, grant_key=models.key) as reader:
        links = reader.lineage("alice", "m1")

    assert sorted((lk.source_id, lk.target_id) for lk in links) == [("m1", "m0"), ("m2", "m1")]
    with psycopg.connect(models.owner_url) as owner:
        everyones = owner.execute(
            "SELECT count(*) FROM memory_links WHERE source_id = 'm1' OR target_id = 'm1'"
        ).fetchone()
    assert everyones == (4,)


def test_a_query_without_a_grant_returns_nothing_rather_than_everything(
    models: Models,
) -> None:
    """Given rows of two users, when the reader role queries without a grant for a user,
    then every user-keyed table reads as empty."""
    write_two_users(models.owner_url)

    with psycopg.connect(models.reader_url, autocommit=True) as conn:
        counts = {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()
            for table in (*LAYER_TABLES.values(), "memory_links", "consolidation_log")
        }

    assert set(counts.values()) == {(0,)}


def test_the_named_user_ends_with_the_call(models: Models) -> None:
    """Given a reader connection used for alice, when the same connection queries afterwards
    without a grant (a pooled connection's next caller), then it sees nothing."""
    write_two_users(models.owner_url)

    with MemoryReader.connect(models.reader_url, grant_key=models.key) as reader:
        assert reader.contradictions("alice")
        after = reader.conn.execute("SELECT count(*) FROM memory_links").fetchone()

    assert after == (0,)


def test_the_reader_role_cannot_write_or_read_unkeyed_tables(models: Models) -> None:
    with psycopg.connect(models.reader_url, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                MEMORY_INSERT.format(table="semantic_facts"),
                ("alice", "forged", "forged", vector_text(1)),
            )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT * FROM projection_offsets")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT * FROM memstream_grant_keys")


def test_the_projector_role_writes_and_reads_every_users_rows(models: Models) -> None:
    with psycopg.connect(models.projector_url) as conn:
        for user in ("alice", "bob"):
            conn.execute(
                MEMORY_INSERT.format(table="semantic_facts"), (user, "p1", "x", vector_text(1))
            )
        seen = conn.execute("SELECT count(DISTINCT user_id) FROM semantic_facts").fetchone()

    assert seen == (2,)


def test_the_projector_role_cannot_read_the_reader_keys(models: Models) -> None:
    """It writes every user's rows, but holding its credential is not holding the key that
    opens every reader's."""
    with (
        psycopg.connect(models.projector_url) as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
    ):
        conn.execute("SELECT secret FROM memstream_grant_keys")


def test_every_table_keyed_by_user_has_row_level_security_and_a_reader_policy(
    models: Models,
) -> None:
    """Given all migrations applied, every table with a user_id column (including those of
    later migrations) is guarded; a table added without a policy fails here."""
    with psycopg.connect(models.owner_url) as conn:
        unguarded = conn.execute(
            "SELECT c.relname FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema() "
            "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'user_id' "
            "WHERE c.relkind IN ('r', 'p') AND NOT (c.relrowsecurity AND EXISTS ("
            "  SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid "
            "  AND p.polname = 'memstream_reader_own_rows'))"
        ).fetchall()

    assert unguarded == []
