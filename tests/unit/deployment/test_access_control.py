"""Who may reach and do what on Kubernetes (issue 10): Kafka listeners, users and ACLs, the
credentials' Secrets, the network policies and PostgreSQL's roles.

Resource names are derived from the settings each workload runs with (topics, consumer groups,
transactional ids), so an ACL cannot silently drift from the process it is for.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from streams.config.settings import Settings
from tests.unit.deployment.repo import (
    KAFKA_CLIENTS,
    REPO,
    Problems,
    Repo,
    compose_settings,
    container_ports,
    env_entry,
    name_of,
    pod_containers,
    pod_labels,
    pod_spec,
    resolve,
    served_ports,
)

Access = tuple[str, str, str]  # (resource type, name, operation)
FORBIDDEN_OPERATIONS = {"All", "Delete", "Alter", "AlterConfigs"}
LOOPBACK = ("127.", "localhost", "::1")


def kafka_access(settings: Settings, command: str) -> tuple[list[Access], list[Access]]:
    """What a command's Kafka user must be allowed, and must not be: the worker reads input,
    writes ticks, writes and replays the ledger and dead-letters transactionally; the
    projector reads the ledger and dead-letters; the API only publishes input."""
    events, ledger, dead = settings.events_topic, settings.ledger_topic, settings.deadletter_topic
    if command == "worker":
        group, txn = settings.app_id, f"{settings.app_id}-0-3"
        allowed = [
            ("topic", events, "Read"),
            ("topic", events, "Write"),
            ("topic", ledger, "Write"),
        ]
        allowed += [("topic", ledger, "Read"), ("topic", dead, "Write"), ("group", group, "Read")]
        allowed += [("transactionalId", txn, "Write"), ("cluster", "", "IdempotentWrite")]
        return allowed, []
    if command == "project":
        allowed = [("topic", ledger, "Read"), ("topic", dead, "Write")]
        allowed += [("group", settings.projector_group, "Read")]
        return allowed, [("topic", events, "Read"), ("topic", ledger, "Write")]
    if command == "serve":
        return [("topic", events, "Write")], [("topic", events, "Read"), ("topic", ledger, "Read")]
    return [], []


def allows(user: dict[str, Any], kind: str, name: str, operation: str) -> bool:
    for rule in user["spec"]["authorization"]["acls"]:
        resource = rule["resource"]
        granted = resource.get("name", "")
        if resource.get("patternType", "literal") == "literal":
            matches = name == granted or granted == "*"
        else:
            matches = name.startswith(granted)
        operations = rule.get("operations") or [rule["operation"]]
        if resource["type"] == kind and matches and {operation, "All"} & set(operations):
            return True
    return False


def secure_listeners(repo: Repo) -> list[dict[str, Any]]:
    return [
        listener
        for listener in repo.only("Kafka")["spec"]["kafka"]["listeners"]
        if listener.get("tls") is True and listener.get("authentication", {}).get("type")
    ]


def check_kafka_admits_only_authenticated_tls_clients(repo: Repo) -> Problems:
    """No plaintext or anonymous listener; whatever no ACL allows is denied; the user operator
    turns KafkaUsers into credentials; no user may delete, alter or do everything."""
    kafka = repo.only("Kafka")
    problems = [
        f"listener {listener['name']} lacks TLS or authentication"
        for listener in kafka["spec"]["kafka"]["listeners"]
        if listener not in secure_listeners(repo)
    ]
    if kafka["spec"]["kafka"].get("authorization", {}).get("type") != "simple":
        problems.append("the Kafka cluster does not authorize by ACLs")
    if "userOperator" not in kafka["spec"].get("entityOperator", {}):
        problems.append("no user operator creates the KafkaUsers' credentials")
    kinds = {listener["authentication"]["type"] for listener in secure_listeners(repo)}
    for user in repo.objects("KafkaUser"):
        if user["metadata"]["labels"].get("strimzi.io/cluster") != kafka["metadata"]["name"]:
            problems.append(f"{name_of(user)} belongs to another cluster")
        if user["spec"]["authentication"]["type"] not in kinds:
            problems.append(f"{name_of(user)} authenticates in a way no listener accepts")
        if user["spec"]["authorization"]["type"] != "simple":
            problems.append(f"{name_of(user)} is not authorized by ACLs")
        for rule in user["spec"]["authorization"]["acls"]:
            operations = set(rule.get("operations") or [rule["operation"]])
            if operations & FORBIDDEN_OPERATIONS:
                problems.append(f"{name_of(user)} may {sorted(operations & FORBIDDEN_OPERATIONS)}")
    return problems


def check_each_client_connects_as_a_user_allowed_what_it_does(repo: Repo) -> Problems:
    """A Kafka client workload uses the secure listener as its own KafkaUser, whose ACLs allow
    what its command does (names from its settings) and no more; the password and the CA are
    files from the Secrets Strimzi writes, mounted as volumes."""
    problems = []
    cluster = repo.only("Kafka")["metadata"]["name"]
    listener = secure_listeners(repo)[0] if secure_listeners(repo) else {}
    mechanism = str(listener.get("authentication", {}).get("type", "")).upper()
    users = {user["metadata"]["name"]: user for user in repo.objects("KafkaUser")}
    for workload, container, command in repo.app_containers(init=False):
        if command not in KAFKA_CLIENTS:
            continue
        where, settings = name_of(workload), resolve(repo.container_env(container))
        security = (settings.kafka_security_protocol, settings.kafka_sasl_mechanism)
        if security != ("SASL_SSL", mechanism):
            problems.append(f"{where}: not SASL_SSL with {mechanism}")
        if settings.kafka_bootstrap != f"{cluster}-kafka-bootstrap:{listener.get('port')}":
            problems.append(f"{where}: {settings.kafka_bootstrap} is not the secure bootstrap")
        user = users.get(settings.kafka_username)
        if user is None:
            problems.append(f"{where}: {settings.kafka_username!r} is no KafkaUser")
            continue
        allowed, denied = kafka_access(settings, command)
        problems += [
            f"{where}: {user['metadata']['name']} may not {a}"
            for a in allowed
            if not allows(user, *a)
        ]
        problems += [
            f"{where}: {user['metadata']['name']} may {a}" for a in denied if allows(user, *a)
        ]
        mounted = {
            "password file": (settings.kafka_password_file, user["metadata"]["name"], "password"),
            "CA file": (settings.kafka_ssl_ca_file, f"{cluster}-cluster-ca-cert", "ca.crt"),
        }
        for what, (path, secret, key) in mounted.items():
            if secret_file(workload, container, path) != (secret, key):
                problems.append(f"{where}: its {what} is not key {key} of the Secret {secret}")
    return problems


def secret_file(workload: dict[str, Any], container: dict[str, Any], path: str) -> Any:
    """(Secret name, key) of the file at ``path`` in a container, or None."""
    mounts = {m["mountPath"].rstrip("/"): m["name"] for m in container.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in pod_spec(workload).get("volumes", [])}
    secret = volumes.get(mounts.get(str(Path(path).parent), ""), {}).get("secret")
    if not path or secret is None:
        return None
    keys = [i["key"] for i in secret.get("items", []) if i["path"] == Path(path).name]
    return (secret["secretName"], keys[0] if keys else Path(path).name)


def check_no_secret_is_a_plain_value(repo: Repo) -> Problems:
    """Credentials come from Secrets: a ConfigMap or an env value is readable by anyone who
    may read the workload."""
    problems = []
    for configmap in repo.objects("ConfigMap"):
        leaked = {"MEMSTREAM_KAFKA_PASSWORD", "MEMSTREAM_DATABASE_URL"} & set(configmap["data"])
        problems += [f"{name_of(configmap)} holds {name}" for name in sorted(leaked)]
    for workload in repo.workloads():
        for container in pod_containers(workload, init=True):
            for name in ("MEMSTREAM_KAFKA_PASSWORD", "PGPASSWORD"):
                if "value" in (env_entry(container, name) or {}):
                    problems.append(f"{name_of(workload)}/{container['name']}: {name} in plain")
            for entry in container.get("env", []):
                if "value" in entry and urlsplit(str(entry["value"])).password:
                    problems.append(f"{name_of(workload)}: {entry['name']} holds a password")
    return problems


def check_containers_listen_where_scrapers_and_probes_reach(repo: Repo) -> Problems:
    """The default bind address is loopback; in containers the kubelet and Prometheus come
    from outside, so every port a process serves listens on all interfaces."""
    problems: Problems = []
    resolved = [
        (f"compose {name}", command, settings)
        for name, (command, settings) in compose_settings(repo, problems).items()
    ]
    resolved += [
        (name_of(w), command, resolve(repo.container_env(c)))
        for w, c, command in repo.app_containers(init=False)
    ]
    for where, command, settings in resolved:
        served = served_ports(settings, command)
        if "metrics" in served and settings.metrics_bind.startswith(LOOPBACK):
            problems.append(f"{where}: /metrics on {settings.metrics_bind}")
        if "http" in served and settings.http_bind.startswith(LOOPBACK):
            problems.append(f"{where}: the API on {settings.http_bind}")
    return problems


def policy_selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    ok = all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())
    for expression in selector.get("matchExpressions", []):
        if expression["operator"] != "In":
            raise AssertionError(f"unsupported selector operator {expression['operator']}")
        ok = ok and labels.get(expression["key"]) in expression["values"]
    return ok


def check_network_policies_admit_only_selected_peers(repo: Repo) -> Problems:
    """With /metrics on every interface, each app pod is selected by a policy whose ingress
    rules all name peers and admit them only on its metrics port, or on the http port of a pod
    that serves one (the API takes its clients' requests there)."""
    problems = []
    policies = repo.objects("NetworkPolicy")
    for workload in repo.workloads():
        served = {n for c in pod_containers(workload) for n in container_ports(c)}
        selecting = [
            p for p in policies if policy_selects(p["spec"]["podSelector"], pod_labels(workload))
        ]
        if not selecting:
            problems.append(f"no NetworkPolicy selects {name_of(workload)}")
        for policy in selecting:
            if "Ingress" not in policy["spec"]["policyTypes"]:
                problems.append(f"{name_of(policy)} does not restrict ingress")
            for rule in policy["spec"].get("ingress", []):
                ports = {p["port"] for p in rule.get("ports", [])}
                if not rule.get("from"):
                    problems.append(f"{name_of(policy)}: an ingress rule admits everyone")
                if ports not in ({"metrics"}, {"http"} & served):
                    problems.append(
                        f"{name_of(policy)} opens {sorted(ports)} of {name_of(workload)}"
                    )
    return problems


def check_database_roles_are_the_migrations_and_the_api_login(repo: Repo) -> Problems:
    """The application user may not create roles, so CloudNativePG declares every role the
    migrations grant to, without login; the API reads as a login of its own, a member of the
    reader role, whose password is the Secret its container reads."""
    migrations = sorted((repo.root / "projections" / "migrations").glob("*.sql"))
    granted = set()
    for path in migrations:
        for names in re.findall(
            r"\bTO\s+(memstream_\w+(?:\s*,\s*memstream_\w+)*)", path.read_text()
        ):
            granted |= {name.strip() for name in names.split(",")}
    roles = {r["name"]: r for r in repo.only("Cluster")["spec"].get("managed", {}).get("roles", [])}
    problems = [] if granted else ["no migration grants to a memstream_ role"]
    for name in sorted(granted):
        role = roles.get(name, {})
        if role.get("ensure", "present") != "present" or role.get("login") is not False:
            problems.append(f"role {name} is not a managed present role without login")
    for workload, container, command in repo.app_containers(init=False):
        if command != "serve":
            continue
        login = urlsplit(resolve(repo.container_env(container)).http_database_url).username
        role = roles.get(login or "", {})
        password = (env_entry(container, "PGPASSWORD") or {}).get("valueFrom", {})
        secret = password.get("secretKeyRef", {}).get("name")
        if role.get("login") is not True or not set(role.get("inRoles", [])) & granted:
            problems.append(f"{name_of(workload)}: {login} is not a managed reader login")
        if role.get("passwordSecret", {}).get("name") != secret:
            problems.append(f"{name_of(workload)}: PGPASSWORD is not {login}'s password Secret")
    return problems


CHECKS: list[Callable[[Repo], Problems]] = [
    check_kafka_admits_only_authenticated_tls_clients,
    check_each_client_connects_as_a_user_allowed_what_it_does,
    check_no_secret_is_a_plain_value,
    check_containers_listen_where_scrapers_and_probes_reach,
    check_network_policies_admit_only_selected_peers,
    check_database_roles_are_the_migrations_and_the_api_login,
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
def test_the_repository_passes(check: Callable[[Repo], Problems]) -> None:
    assert check(REPO) == []


def test_every_kafka_client_command_is_checked_against_its_acls() -> None:
    """The ACL check above only covers commands kafka_access knows: a new client command
    needs its entry, or its user's ACLs would go unchecked."""
    settings = Settings()
    assert all(kafka_access(settings, command)[0] for command in KAFKA_CLIENTS)
