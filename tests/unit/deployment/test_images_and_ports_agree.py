"""Compose, Kubernetes, the image and the settings module agree with one another.

The same process is described in four places (the settings' defaults, the Dockerfile, compose and
the k8s manifests): versions, commands, variable names, ports and topics must be the same in
each, and where a file names a port, something must listen there.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from streams.config.settings import Settings
from tests.unit.deployment.repo import (
    REPO,
    Problems,
    Repo,
    cli_commands,
    compose_settings,
    container_ports,
    environment_of,
    healthcheck_urls,
    host_of,
    name_of,
    pod_containers,
    pod_labels,
    probe_paths,
    published_ports,
    resolve,
    selects,
    served_ports,
    topic_creators,
    try_resolve,
    variables_the_code_reads,
)

# Where Kafka, PostgreSQL and the Schema Registry are, and each instance's own id: the only
# settings compose and Kubernetes may set differently.
WHERE = {
    "MEMSTREAM_KAFKA_BOOTSTRAP",
    "MEMSTREAM_DATABASE_URL",
    "MEMSTREAM_SCHEMA_REGISTRY_URL",
    "MEMSTREAM_INSTANCE_ID",
}


def major_minor(version: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\d+", version)[:2])


def check_backend_versions_agree(repo: Repo) -> Problems:
    """Developers test against compose's Kafka and PostgreSQL: the clusters run the same
    release lines, and the topics are created by the broker's own image."""
    problems: Problems = []
    resolved = compose_settings(repo, problems)
    if not resolved:
        return problems or ["no compose service runs the repository's image"]
    _, settings = next(iter(resolved.values()))
    broker = repo.services[host_of(settings.kafka_bootstrap)]
    database = repo.services[host_of(settings.database_url)]
    strimzi = str(repo.only("Kafka")["spec"]["kafka"]["version"])
    if major_minor(broker["image"].split(":")[1]) != major_minor(strimzi):
        problems.append(f"compose runs {broker['image']}, Strimzi Kafka {strimzi}")
    for name in topic_creators(repo):
        if repo.services[name]["image"] != broker["image"]:
            problems.append(f"{name} runs {repo.services[name]['image']}, not {broker['image']}")
    cnpg = repo.only("Cluster")["spec"].get("imageName", "")
    compose_pg = re.search(r"pg(\d+)", database["image"].split(":")[1])
    cnpg_pg = re.search(r":(\d+)", cnpg)
    if not (compose_pg and cnpg_pg and compose_pg[1] == cnpg_pg[1]):
        problems.append(f"compose runs {database['image']}, CloudNativePG {cnpg}")
    if "pgvector" not in database["image"]:
        problems.append(f"compose's {database['image']} is no pgvector image (migrations need it)")
    return problems


def check_repository_image_is_one_and_versioned(repo: Repo) -> Problems:
    """Every app process runs the one image built from this checkout; on Kubernetes kustomize
    tags it with the package's version."""
    problems = []
    images = {service.get("image") for _, service in repo.app_services().values()}
    if len(images) != 1:
        problems.append(f"compose's app services run several images: {images}")
    for name, (_, service) in repo.app_services().items():
        build = service["build"]
        if (build.get("context", ".") if isinstance(build, dict) else build) not in (".", "./"):
            problems.append(f"compose {name} does not build the repository root")
    for workload, container, _ in repo.app_containers():
        if ":" in container["image"]:
            problems.append(f"{name_of(workload)} pins {container['image']} past kustomize")
    version = repo.pyproject["project"]["version"]
    for image in repo.kustomization.get("images", []):
        if str(image.get("newTag")) != version:
            problems.append(f"kustomize tags {image['name']} {image.get('newTag')}, not {version}")
    if not repo.app_containers():
        problems.append("no k8s container runs the image the kustomization names")
    return problems


def check_commands_exist_and_agree(repo: Repo) -> Problems:
    """Compose and Kubernetes run the same memstream commands, each one the CLI has."""
    in_compose = {command for command, _ in repo.app_services().values()}
    in_k8s = {command for _, _, command in repo.app_containers()}
    problems = [
        f"{c} is no memstream command" for c in sorted((in_compose | in_k8s) - cli_commands())
    ]
    if in_compose != in_k8s:
        problems.append(f"compose runs {sorted(in_compose)}, Kubernetes {sorted(in_k8s)}")
    return problems


def check_variables_are_settings_that_parse(repo: Repo) -> Problems:
    """A misspelt MEMSTREAM_* variable is silently ignored by the app, and a malformed one
    stops it at start: catch both here."""
    named = {f"compose {n}": environment_of(s) for n, s in repo.services.items()}
    named |= {name_of(c): c.get("data", {}) for c in repo.objects("ConfigMap")}
    for workload in repo.workloads():
        for container in pod_containers(workload, init=True):
            named[f"{name_of(workload)}/{container['name']}"] = {
                e["name"]: "" for e in container.get("env", [])
            }
    problems = [
        f"{where} sets {variable}, which the code does not read"
        for where, env in named.items()
        for variable in sorted(env)
        if variable.startswith("MEMSTREAM_") and variable not in variables_the_code_reads()
    ]
    compose_settings(repo, problems)
    for workload, container, _ in repo.app_containers():
        try_resolve(repo.container_env(container), name_of(workload), problems)
    return problems


def check_probe(where: str, declared: dict[str, int], port: object, path: str) -> Problems:
    """A probe must hit a declared port, on a path that port answers without a token."""
    names = [n for n, number in declared.items() if port in (n, number)]
    if not names:
        return [f"{where}: probes port {port}, which is not declared"]
    if path not in probe_paths().get(names[0], frozenset()):
        return [f"{where}: probes {path} on its {names[0]} port, which does not answer it"]
    return []


def check_compose_ports_agree(repo: Repo) -> Problems:
    """Each compose app service publishes, health-checks and is scraped on the ports its
    settings make it listen on, which are the code's defaults."""
    problems: Problems = []
    targets = {
        target
        for job in repo.yaml(repo.prometheus_config)["scrape_configs"]
        for static in job.get("static_configs", [])
        for target in static.get("targets", [])
    }
    for name, (command, settings) in compose_settings(repo, problems).items():
        served = served_ports(settings, command)
        if served != served_ports(Settings(), command):
            problems.append(f"compose {name} moves its ports off the defaults: {served}")
        declared = {port_name: p for port_name, ports in served.items() for p in ports}
        for port in set(declared.values()) - published_ports(repo.services[name]):
            problems.append(f"compose {name} listens on {port} but does not publish it")
        for port, path in healthcheck_urls(repo.services[name]):
            problems += check_probe(f"compose {name} healthcheck", declared, port, path)
        for port in served.get("metrics", set()):
            if f"{name}:{port}" not in targets:
                problems.append(f"Prometheus does not scrape {name}:{port}")
    return problems


def check_k8s_ports_agree(repo: Repo) -> Problems:
    """Each app container declares exactly the ports its settings make it listen on (the code's
    defaults), names them as the Services and probes expect, and probes answered paths."""
    problems: Problems = []
    for workload, container, command in repo.app_containers(init=False):
        where = f"{name_of(workload)}/{container['name']}"
        try:
            settings = resolve(repo.container_env(container))
        except ValueError as error:
            problems.append(f"{where}: {error}")
            continue
        served = served_ports(settings, command)
        if served != served_ports(Settings(), command):
            problems.append(f"{where} moves its ports off the defaults: {served}")
        declared = container_ports(container)
        for port_name, port in declared.items():
            if port not in served.get(port_name, set()):
                problems.append(f"{where}: port {port_name}={port}, it listens on {served}")
        listening = {p for ports in served.values() for p in ports}
        for port in listening - set(declared.values()):
            problems.append(f"{where} listens on {port}, which it does not declare")
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            http = container.get(probe, {}).get("httpGet")
            if http:
                problems += check_probe(f"{where} {probe}", declared, http["port"], http["path"])
    return problems


def check_every_metrics_port_is_scraped(repo: Repo) -> Problems:
    """Each pod with a metrics port is scraped by a ServiceMonitor, through a Service in front of
    it, by a port name that Service has and that leads to the metrics port."""
    problems = []
    for workload in repo.workloads():
        declared = {n: p for c in pod_containers(workload) for n, p in container_ports(c).items()}
        scraped = set()
        for monitor in repo.objects("ServiceMonitor"):
            for service in repo.objects("Service"):
                labels = service["metadata"].get("labels", {})
                if not (
                    selects(monitor["spec"]["selector"]["matchLabels"], labels)
                    and selects(service["spec"]["selector"], pod_labels(workload))
                ):
                    continue
                by_name = {p["name"]: p for p in service["spec"]["ports"]}
                for endpoint in monitor["spec"]["endpoints"]:
                    port = by_name.get(endpoint["port"])
                    if port is None or endpoint.get("path", "/metrics") != "/metrics":
                        problems.append(f"{name_of(monitor)}: no {endpoint['port']} /metrics")
                        continue
                    target = port.get("targetPort", port["port"])
                    scraped.add(declared.get(target, target))
        if "metrics" in declared and declared["metrics"] not in scraped:
            problems.append(f"{name_of(workload)}: nothing scrapes port {declared['metrics']}")
    return problems


def check_shared_settings_agree(repo: Repo) -> Problems:
    """The same app is configured the same way in compose and on Kubernetes, apart from where
    Kafka and PostgreSQL are and each instance's own id."""
    envs = [environment_of(service) for _, service in repo.app_services().values()]
    shared = dict(set.intersection(*(set(env.items()) for env in envs))) if envs else {}
    compose_env = {k: v for k, v in shared.items() if k.startswith("MEMSTREAM_") and k not in WHERE}
    k8s_env = {k: str(v) for k, v in repo.only("ConfigMap")["data"].items() if k not in WHERE}
    return [
        f"{name}: compose {compose_env.get(name)!r}, ConfigMap {k8s_env.get(name)!r}"
        for name in sorted(set(compose_env) | set(k8s_env))
        if compose_env.get(name) != k8s_env.get(name)
    ]


def check_topics_are_the_settings_topics(repo: Repo) -> Problems:
    """compose's topics script and the KafkaTopics create exactly the topics the settings name,
    with the partitions the settings say (the worker's tables are partitioned alike)."""
    problems: Problems = []
    for name, (_, settings) in list(compose_settings(repo, problems).items())[:1]:
        wanted = {settings.events_topic, settings.ledger_topic, settings.deadletter_topic}
        created: dict[str, set[str]] = {}
        for script in topic_creators(repo).values():
            for line in script.splitlines():
                topic = re.search(r"--topic[ =](\S+)", line)
                if "--create" in line and topic:
                    partitions = re.search(r"--partitions[ =](\d+)", line)
                    created.setdefault(topic[1], set()).add(partitions[1] if partitions else "")
        if set(created) != wanted:
            problems.append(f"compose creates {sorted(created)}, {name} uses {sorted(wanted)}")
        problems += [
            f"compose creates {topic} with {sorted(counts)} partitions, not {settings.partitions}"
            for topic, counts in created.items()
            if counts != {str(settings.partitions)}
        ]
    settings = resolve(repo.only("ConfigMap")["data"])
    wanted = {settings.events_topic, settings.ledger_topic, settings.deadletter_topic}
    topics = {
        t["spec"].get("topicName", t["metadata"]["name"]): t for t in repo.objects("KafkaTopic")
    }
    if set(topics) != wanted:
        problems.append(f"KafkaTopics are {sorted(topics)}, the ConfigMap uses {sorted(wanted)}")
    problems += [
        f"KafkaTopic {name} has {topic['spec']['partitions']} partitions, not {settings.partitions}"
        for name, topic in topics.items()
        if topic["spec"]["partitions"] != settings.partitions
    ]
    return problems


CHECKS: list[Callable[[Repo], Problems]] = [
    check_backend_versions_agree,
    check_repository_image_is_one_and_versioned,
    check_commands_exist_and_agree,
    check_variables_are_settings_that_parse,
    check_compose_ports_agree,
    check_k8s_ports_agree,
    check_every_metrics_port_is_scraped,
    check_shared_settings_agree,
    check_topics_are_the_settings_topics,
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
def test_the_repository_passes(check: Callable[[Repo], Problems]) -> None:
    assert check(REPO) == []


def copy_of_the_repository(tmp_path: Path) -> Repo:
    for name in ("docker-compose.yml", "Dockerfile", "pyproject.toml"):
        shutil.copy(REPO.root / name, tmp_path / name)
    shutil.copytree(REPO.k8s_dir, tmp_path / "k8s")
    shutil.copytree(REPO.root / "deploy", tmp_path / "deploy")
    return Repo(tmp_path)


def test_the_copy_of_the_repository_passes_too(tmp_path: Path) -> None:
    """So the failures below come from the edits they make, not from the copying."""
    copy = copy_of_the_repository(tmp_path)
    assert [check(copy) for check in CHECKS] == [[] for _ in CHECKS]


def test_a_container_port_moved_away_from_its_listener_is_reported(tmp_path: Path) -> None:
    copy = copy_of_the_repository(tmp_path)
    worker = copy.k8s_dir / "worker.yaml"
    worker.write_text(worker.read_text().replace("containerPort: 9101", "containerPort: 9111"))

    assert check_k8s_ports_agree(copy) == [
        "StatefulSet memstream-worker/worker: port metrics=9111, it listens on {'metrics': {9101}}",
        "StatefulSet memstream-worker/worker listens on 9101, which it does not declare",
    ]


def test_a_prometheus_target_on_the_wrong_port_is_reported(tmp_path: Path) -> None:
    copy = copy_of_the_repository(tmp_path)
    config = copy.prometheus_config
    config.write_text(config.read_text().replace('"projector:9102"', '"projector:9100"'))

    assert check_compose_ports_agree(copy) == ["Prometheus does not scrape projector:9102"]


def test_a_settings_variable_misspelt_in_the_configmap_is_reported(tmp_path: Path) -> None:
    copy = copy_of_the_repository(tmp_path)
    configmap = copy.k8s_dir / "configmap.yaml"
    configmap.write_text(configmap.read_text().replace("MEMSTREAM_HOT_USERS", "MEMSTREAM_HOT_USER"))

    assert check_variables_are_settings_that_parse(copy) == [
        "ConfigMap memstream-config sets MEMSTREAM_HOT_USER, which the code does not read"
    ]
