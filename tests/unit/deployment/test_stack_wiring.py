"""The stacks start in an order that works and keep what must survive a restart.

compose: each process waits (with a condition, not merely "started") for the backends its
command uses, for the topics and for the migrations; the single broker is configured so that
consumer groups and transactions work. Kubernetes: the worker's local state is on a claim,
migrations run before the projector, and every container reads the shared ConfigMap.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

import pytest

from tests.unit.deployment.repo import (
    DATABASE_CLIENTS,
    KAFKA_CLIENTS,
    REPO,
    Problems,
    Repo,
    compose_settings,
    container_command,
    depends_on_of,
    env_entry,
    environment_of,
    host_of,
    mounts_of,
    name_of,
    pod_containers,
    resolve,
    topic_creators,
)

READY = ("service_healthy", "service_completed_successfully")


def check_compose_processes_wait_for_what_they_use(repo: Repo) -> Problems:
    """Without a condition a process crash-loops while Kafka or PostgreSQL boot, or reads a
    topic not created yet, or a table not migrated yet."""
    problems: Problems = []
    migrators = [n for n, (command, _) in repo.app_services().items() if command == "migrate"]
    for name, (command, settings) in compose_settings(repo, problems).items():
        deps = depends_on_of(repo.services[name])
        needs = set(topic_creators(repo)) if command in KAFKA_CLIENTS else set()
        if command in KAFKA_CLIENTS:
            needs.add(host_of(settings.kafka_bootstrap))
        if command in DATABASE_CLIENTS:
            needs.add(host_of(settings.database_url))
        if command in DATABASE_CLIENTS - {"migrate"}:
            needs |= set(migrators) or {"<a service running migrate>"}
        for backend in sorted(needs):
            if deps.get(backend) not in READY:
                problems.append(f"compose {name} must wait for {backend} with a condition")
        for creator in topic_creators(repo) if command in KAFKA_CLIENTS else ():
            broker = host_of(settings.kafka_bootstrap)
            if depends_on_of(repo.services[creator]).get(broker) != "service_healthy":
                problems.append(f"compose {creator} does not wait for a healthy {broker}")
    return sorted(set(problems))


def check_compose_backends_are_the_ones_configured(repo: Repo) -> Problems:
    """The apps' bootstrap is an address the broker advertises, and their database URL has
    the user, password and database the postgres service creates."""
    problems: Problems = []
    for name, (_, settings) in compose_settings(repo, problems).items():
        broker = environment_of(repo.services.get(host_of(settings.kafka_bootstrap), {}))
        advertised = broker.get("KAFKA_ADVERTISED_LISTENERS", "")
        if settings.kafka_bootstrap not in {a.split("://", 1)[-1] for a in advertised.split(",")}:
            problems.append(f"compose {name}: {settings.kafka_bootstrap} is not advertised")
        url = urlsplit(settings.database_url)
        pg = environment_of(repo.services.get(url.hostname or "", {}))
        expected = (pg.get("POSTGRES_USER"), pg.get("POSTGRES_PASSWORD"), pg.get("POSTGRES_DB"))
        if (url.username, url.password, url.path.lstrip("/")) != expected:
            problems.append(f"compose {name}: its database URL is not the postgres service's")
    return problems


def check_compose_single_broker_works(repo: Repo) -> Problems:
    """One node is broker and the sole KRaft voter, on a controller listener it opens; no
    replication factor or min ISR exceeds the one broker (groups and transactions would hang)."""
    problems: Problems = []
    for name, (_, settings) in list(compose_settings(repo, problems).items())[:1]:
        env = environment_of(repo.services[host_of(settings.kafka_bootstrap)])
        if set(env["KAFKA_PROCESS_ROLES"].split(",")) != {"broker", "controller"}:
            problems.append("the compose broker is not broker and controller")
        voter_id, _, voter = env["KAFKA_CONTROLLER_QUORUM_VOTERS"].partition("@")
        listeners = dict(i.split("://", 1) for i in env["KAFKA_LISTENERS"].split(",") if "://" in i)
        controller = listeners.get(env["KAFKA_CONTROLLER_LISTENER_NAMES"], "")
        if (
            voter_id != env["KAFKA_NODE_ID"]
            or voter.rsplit(":", 1)[-1] != controller.split(":")[-1]
        ):
            problems.append(f"the quorum voter {voter_id}@{voter} is not this node's controller")
        for variable, value in env.items():
            if variable.endswith(("_REPLICATION_FACTOR", "_MIN_ISR")) and int(value) > 1:
                problems.append(f"{variable}={value} on a single broker ({name}'s)")
    return problems


def check_compose_keeps_state_on_named_volumes(repo: Repo) -> Problems:
    """The worker's local state and PostgreSQL's data survive `docker compose down`. PostgreSQL
    18 images keep PGDATA in a versioned directory below /var/lib/postgresql, older ones in
    its data/ subdirectory."""
    problems: Problems = []
    for name, (command, settings) in compose_settings(repo, problems).items():
        volumes = {t for kind, _, t in mounts_of(repo.services[name]) if kind == "volume"}
        if command == "worker" and str(settings.worker_data_dir) not in volumes:
            problems.append(f"compose {name}: {settings.worker_data_dir} is not on a volume")
        database = repo.services.get(host_of(settings.database_url), {})
        major = int("".join(c for c in database.get("image", "pg0").split("pg")[-1] if c.isdigit()))
        pgdata = "/var/lib/postgresql" if major >= 18 else "/var/lib/postgresql/data"
        if pgdata not in {t for kind, _, t in mounts_of(database) if kind == "volume"}:
            problems.append(f"compose's PostgreSQL {major} keeps {pgdata} off a named volume")
    return problems


def check_worker_state_and_scale(repo: Repo) -> Problems:
    """A worker StatefulSet keeps its data dir on a claim, is governed by a headless Service,
    names its static group membership after the pod, and has no more pods than partitions."""
    problems = []
    for workload, container, command in repo.app_containers(init=False):
        if command != "worker":
            continue
        where, spec = name_of(workload), workload["spec"]
        if workload["kind"] != "StatefulSet":
            problems.append(f"{where}: the worker is not a StatefulSet")
            continue
        settings = resolve(repo.container_env(container))
        claims = {t["metadata"]["name"] for t in spec.get("volumeClaimTemplates", [])}
        mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
        if mounts.get(str(settings.worker_data_dir)) not in claims:
            problems.append(f"{where}: {settings.worker_data_dir} is not on a claim")
        service = repo.find("Service", spec.get("serviceName", ""))
        if service is None or service["spec"].get("clusterIP") != "None":
            problems.append(f"{where}: not governed by a headless Service")
        instance = (env_entry(container, "MEMSTREAM_INSTANCE_ID") or {}).get("valueFrom", {})
        if instance.get("fieldRef", {}).get("fieldPath") != "metadata.name":
            problems.append(f"{where}: MEMSTREAM_INSTANCE_ID is not the pod's name")
        if not 1 <= spec["replicas"] <= settings.partitions:
            problems.append(f"{where}: {spec['replicas']} replicas for {settings.partitions}")
    return problems


def check_k8s_containers_are_configured_and_migrated(repo: Repo) -> Problems:
    """Every app container reads the shared ConfigMap; a pod running the projector migrates in
    an init container first; containers that connect as the owner read the URL from the
    Secret CloudNativePG writes (test_access_control keeps it out of the ConfigMap)."""
    configmap = repo.only("ConfigMap")
    problems = []
    secret = {"name": f"{repo.only('Cluster')['metadata']['name']}-app", "key": "uri"}
    for workload, container, command in repo.app_containers():
        where = f"{name_of(workload)}/{container['name']}"
        refs = [
            e["configMapRef"]["name"] for e in container.get("envFrom", []) if "configMapRef" in e
        ]
        if configmap["metadata"]["name"] not in refs:
            problems.append(f"{where} does not read the ConfigMap")
        if command in ("project", "migrate"):
            url = (env_entry(container, "MEMSTREAM_DATABASE_URL") or {}).get("valueFrom", {})
            if url.get("secretKeyRef") != secret:
                problems.append(f"{where}: MEMSTREAM_DATABASE_URL is not from {secret}")
        inits = pod_containers(workload, init=True)[len(pod_containers(workload)) :]
        if command == "project" and "migrate" not in {container_command(c) for c in inits}:
            problems.append(f"{where}: no init container migrates before the projector")
    return problems


def check_operators_run_kraft_and_pgvector(repo: Repo) -> Problems:
    """Strimzi runs Kafka without ZooKeeper on node pools of this cluster that hold both roles;
    CloudNativePG's image or bootstrap provides the vector extension the migrations need."""
    kafka = repo.only("Kafka")
    problems = [] if "zookeeper" not in kafka["spec"] else ["the Kafka cluster uses ZooKeeper"]
    roles = set()
    for pool in repo.objects("KafkaNodePool"):
        if pool["metadata"]["labels"].get("strimzi.io/cluster") != kafka["metadata"]["name"]:
            problems.append(f"{name_of(pool)} belongs to another cluster")
        roles |= set(pool["spec"]["roles"])
    if roles != {"controller", "broker"}:
        problems.append(f"the node pools' roles are {sorted(roles)}")
    cluster = repo.only("Cluster")["spec"]
    sql = cluster.get("bootstrap", {}).get("initdb", {}).get("postInitApplicationSQL", [])
    if not any("create extension" in s.lower() and "vector" in s for s in sql):
        problems.append("CloudNativePG's bootstrap does not create the vector extension")
    return problems


def check_k8s_replication_fits_the_brokers(repo: Repo) -> Problems:
    """No replication factor exceeds the brokers, and min ISR leaves a replica to lose."""
    brokers = sum(
        p["spec"]["replicas"]
        for p in repo.objects("KafkaNodePool")
        if "broker" in p["spec"]["roles"]
    )
    config = repo.only("Kafka")["spec"]["kafka"].get("config", {})
    factors = {k: v for k, v in config.items() if k.endswith("replication.factor")}
    factors |= {name_of(t): t["spec"].get("replicas", brokers) for t in repo.objects("KafkaTopic")}
    problems = [
        f"{k}: {v} replicas on {brokers} brokers" for k, v in factors.items() if v > brokers
    ]
    isr = [config.get("min.insync.replicas", 1), config.get("transaction.state.log.min.isr", 1)]
    isr += [
        t["spec"].get("config", {}).get("min.insync.replicas", 1)
        for t in repo.objects("KafkaTopic")
    ]
    if max(isr) >= min(factors.values(), default=brokers):
        problems.append(f"min ISR {max(isr)} leaves no replica to lose")
    return problems


CHECKS: list[Callable[[Repo], Problems]] = [
    check_compose_processes_wait_for_what_they_use,
    check_compose_backends_are_the_ones_configured,
    check_compose_single_broker_works,
    check_compose_keeps_state_on_named_volumes,
    check_worker_state_and_scale,
    check_k8s_containers_are_configured_and_migrated,
    check_operators_run_kraft_and_pgvector,
    check_k8s_replication_fits_the_brokers,
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
def test_the_repository_passes(check: Callable[[Repo], Problems]) -> None:
    assert check(REPO) == []
