"""Structural checks of the deployment files: Dockerfile, docker compose, Prometheus, Grafana
and the Kubernetes (kustomize) manifests.

No docker engine or cluster is needed: the files are parsed with PyYAML / json and checked for
the things that break a deployment silently (a dangling reference, a missing mounted file, a
Service selecting no pod, a dashboard querying a metric nobody exports). These tests must never
start a container or open a connection.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML is in the test extra: pip install -e '.[test]'")

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
COMPOSE_FILE = ROOT / "docker-compose.yml"
PROMETHEUS_CONFIG = ROOT / "deploy" / "prometheus" / "prometheus.yml"
GRAFANA_DATASOURCES = (
    ROOT / "deploy" / "grafana" / "provisioning" / "datasources" / "prometheus.yml"
)
GRAFANA_DASHBOARD_PROVIDER = (
    ROOT / "deploy" / "grafana" / "provisioning" / "dashboards" / "memstream.yml"
)
GRAFANA_DASHBOARD = ROOT / "deploy" / "grafana" / "dashboards" / "memstream.json"
K8S_DIR = ROOT / "k8s"
KUSTOMIZATION = K8S_DIR / "kustomization.yaml"

TOPICS = ("memory.events", "memory.consolidation", "memory.deadletter")
PARTITIONS = 12
APP_SERVICES = {"worker": ("worker", 9101), "projector": ("project", 9102)}
# Named in the deployment brief but not (yet) a field of streams.config.settings.Settings.
SETTINGS_NOT_IN_SETTINGS_CLASS = {"MEMSTREAM_PROFILE"}


# ---- loading helpers ------------------------------------------------------------------------


def load_yaml(path: Path) -> Any:
    assert path.is_file(), f"{path.relative_to(ROOT)} is missing"
    return yaml.safe_load(path.read_text())


def load_yaml_documents(path: Path) -> list[dict[str, Any]]:
    assert path.is_file(), f"{path.relative_to(ROOT)} is missing"
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load_yaml(COMPOSE_FILE)


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return compose["services"]


def environment_of(service: dict[str, Any]) -> dict[str, str]:
    """A compose service's environment as a dict, whichever of the two syntaxes it uses."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        pairs = (item.partition("=") for item in env)
        return {name: value for name, _, value in pairs}
    return {name: "" if value is None else str(value) for name, value in env.items()}


def depends_on_of(service: dict[str, Any]) -> dict[str, str | None]:
    """Target service -> its condition (None for the short list syntax)."""
    deps = service.get("depends_on") or {}
    if isinstance(deps, list):
        return dict.fromkeys(deps)
    return {name: (spec or {}).get("condition") for name, spec in deps.items()}


def mounts_of(service: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(type, source, target) of every volume entry: type is "bind" or "volume"."""
    mounts = []
    for entry in service.get("volumes") or []:
        if isinstance(entry, dict):
            mounts.append((entry["type"], str(entry.get("source", "")), entry["target"]))
            continue
        source, _, rest = entry.partition(":")
        target = rest.split(":")[0] if rest else source
        kind = "bind" if source.startswith((".", "/", "~")) else "volume"
        mounts.append((kind, source, target))
    return mounts


def command_text(service: dict[str, Any]) -> str:
    parts = []
    for key in ("entrypoint", "command"):
        value = service.get(key)
        if isinstance(value, list):
            parts.extend(str(item) for item in value)
        elif value:
            parts.append(str(value))
    return "\n".join(parts)


def command_words(service: dict[str, Any]) -> list[str]:
    value = service.get("command")
    return [str(v) for v in value] if isinstance(value, list) else str(value or "").split()


def bind_target_of(service: dict[str, Any], host_path: Path) -> str | None:
    for kind, source, target in mounts_of(service):
        if kind == "bind" and (ROOT / source).resolve() == host_path.resolve():
            return target
    return None


def kustomization() -> dict[str, Any]:
    return load_yaml(KUSTOMIZATION)


def k8s_resource_files() -> list[Path]:
    return [K8S_DIR / name for name in kustomization().get("resources", [])]


def k8s_objects() -> list[dict[str, Any]]:
    """Every object of the listed resource files (a missing file is reported by its own test)."""
    objects = []
    for path in k8s_resource_files():
        if path.is_file():
            objects.extend(load_yaml_documents(path))
    return objects


def find_objects(kind: str) -> list[dict[str, Any]]:
    return [obj for obj in k8s_objects() if obj.get("kind") == kind]


def find_object(kind: str, name: str) -> dict[str, Any]:
    matches = [obj for obj in find_objects(kind) if obj["metadata"]["name"] == name]
    assert len(matches) == 1, f"expected exactly one {kind} {name!r}, found {len(matches)}"
    return matches[0]


def only_object(kind: str) -> dict[str, Any]:
    matches = find_objects(kind)
    assert len(matches) == 1, f"expected exactly one {kind}, found {len(matches)}"
    return matches[0]


def workloads() -> list[dict[str, Any]]:
    return [obj for obj in k8s_objects() if obj.get("kind") in ("Deployment", "StatefulSet")]


def pod_containers(workload: dict[str, Any], *, init: bool = False) -> list[dict[str, Any]]:
    spec = workload["spec"]["template"]["spec"]
    return list(spec.get("containers", [])) + (list(spec.get("initContainers", [])) if init else [])


def pod_labels(workload: dict[str, Any]) -> dict[str, str]:
    return workload["spec"]["template"]["metadata"].get("labels", {})


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(key) == value for key, value in selector.items())


def configmap_data() -> dict[str, str]:
    return only_object("ConfigMap")["data"]


def env_var(container: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((e for e in container.get("env", []) if e["name"] == name), None)


# ---- Dockerfile -----------------------------------------------------------------------------


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    assert DOCKERFILE.is_file(), "Dockerfile is missing"
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    result = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, args = line.partition(" ")
            result.append((word.upper(), args.strip()))
    return result


def test_dockerfile_builds_on_python_3_11_slim() -> None:
    """Given the Dockerfile, every stage starts from python:3.11-slim."""
    bases = [args.split()[0] for word, args in dockerfile_instructions() if word == "FROM"]
    assert bases, "the Dockerfile has no FROM"
    assert all(base == "python:3.11-slim" for base in bases), bases


def test_dockerfile_installs_the_package_from_the_repository() -> None:
    runs = [args for word, args in dockerfile_instructions() if word == "RUN"]
    assert any(re.search(r"\bpip install (?:\S+ )*\.(?:\s|$)", run) for run in runs), runs


def test_dockerfile_entrypoint_is_the_memstream_console_script() -> None:
    entrypoints = [args for word, args in dockerfile_instructions() if word == "ENTRYPOINT"]
    assert entrypoints, "the Dockerfile has no ENTRYPOINT"
    assert json.loads(entrypoints[-1]) == ["memstream"]


def test_dockerfile_installs_no_java() -> None:
    """The image talks to an external Kafka: no JRE belongs in it."""
    runs = " ".join(args for word, args in dockerfile_instructions() if word == "RUN")
    assert not re.search(r"(?i)\b(openjdk|default-jre|temurin|java)\b", runs)


def dockerignore_excludes(path: str) -> bool:
    """Whether .dockerignore keeps ``path`` out of the build context (last match wins)."""
    excluded = False
    for raw in DOCKERIGNORE.read_text().splitlines():
        pattern = raw.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negate = pattern.startswith("!")
        pattern = pattern.lstrip("!").strip("/")
        candidates = {pattern, pattern.removeprefix("**/")}
        parts = path.split("/")
        prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        suffixes = ["/".join(parts[i:]) for i in range(len(parts))]
        hit = any(fnmatch.fnmatch(p, c) for c in candidates for p in prefixes)
        if pattern.startswith("**/"):
            hit = hit or any(fnmatch.fnmatch(s, c) for c in candidates for s in suffixes)
        if hit:
            excluded = not negate
    return excluded


@pytest.mark.parametrize(
    "path",
    [
        "pyproject.toml",
        "README.md",
        "streams/config/settings.py",
        "streams/app.py",
        "projections/migrations/001_read_models.sql",
        "schemas/memory_event.avsc",
    ],
)
def test_dockerignore_keeps_what_pip_install_needs(path: str) -> None:
    assert not dockerignore_excludes(path), f".dockerignore drops {path}"


@pytest.mark.parametrize("path", [".git/HEAD", ".venv/bin/python", "memstream/__pycache__/x.pyc"])
def test_dockerignore_keeps_local_state_out_of_the_image(path: str) -> None:
    assert dockerignore_excludes(path), f".dockerignore lets {path} into the build context"


# ---- docker compose -------------------------------------------------------------------------


def test_compose_declares_the_whole_stack(services: dict[str, Any]) -> None:
    required = {"kafka", "topics", "postgres", "worker", "projector", "prometheus", "grafana"}
    assert required <= set(services), f"missing services: {required - set(services)}"


def test_kafka_image_is_apache_kafka_4_1(services: dict[str, Any]) -> None:
    assert re.fullmatch(r"apache/kafka:4\.1\.\d+", services["kafka"]["image"])


def test_kafka_runs_as_a_single_kraft_broker_and_controller(services: dict[str, Any]) -> None:
    """Given the kafka service, its env makes node 1 broker and the sole controller voter, on a
    controller listener it actually opens."""
    env = environment_of(services["kafka"])
    assert set(env["KAFKA_PROCESS_ROLES"].split(",")) == {"broker", "controller"}
    node_id = env["KAFKA_NODE_ID"]
    voter_id, _, voter_address = env["KAFKA_CONTROLLER_QUORUM_VOTERS"].partition("@")
    assert voter_id == node_id
    controller = env["KAFKA_CONTROLLER_LISTENER_NAMES"]
    listeners = dict(
        item.split("://", 1) for item in env["KAFKA_LISTENERS"].split(",") if "://" in item
    )
    assert controller in listeners, f"controller listener {controller} is not in KAFKA_LISTENERS"
    assert voter_address.rsplit(":", 1)[1] == listeners[controller].rsplit(":", 1)[1]


@pytest.mark.parametrize(
    "variable",
    ["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR"],
)
def test_kafka_internal_topics_have_one_replica(services: dict[str, Any], variable: str) -> None:
    """A single broker cannot host 3 replicas: consumer groups and transactions would hang."""
    assert environment_of(services["kafka"]).get(variable) == "1"


def test_kafka_advertises_the_bootstrap_address_the_apps_use(services: dict[str, Any]) -> None:
    bootstrap = environment_of(services["worker"])["MEMSTREAM_KAFKA_BOOTSTRAP"]
    advertised = environment_of(services["kafka"])["KAFKA_ADVERTISED_LISTENERS"]
    addresses = {item.split("://", 1)[1] for item in advertised.split(",")}
    assert bootstrap in addresses, f"{bootstrap} is not advertised ({advertised})"


def test_postgres_image_is_pgvector_pg18(services: dict[str, Any]) -> None:
    assert services["postgres"]["image"] == "pgvector/pgvector:pg18"


def test_postgres_keeps_its_data_on_a_named_volume(services: dict[str, Any]) -> None:
    """PostgreSQL 18 images keep PGDATA below /var/lib/postgresql (a versioned directory)."""
    assert ("volume", "/var/lib/postgresql") in {
        (kind, target) for kind, _, target in mounts_of(services["postgres"])
    }


def test_postgres_healthcheck_uses_pg_isready(services: dict[str, Any]) -> None:
    test = services["postgres"]["healthcheck"]["test"]
    assert "pg_isready" in (" ".join(test) if isinstance(test, list) else test)


def test_database_url_matches_the_postgres_service(services: dict[str, Any]) -> None:
    """Given the apps' MEMSTREAM_DATABASE_URL, its user, password, database and host are those
    the postgres service is started with."""
    url = urlsplit(environment_of(services["projector"])["MEMSTREAM_DATABASE_URL"])
    pg = environment_of(services["postgres"])
    assert url.scheme in ("postgresql", "postgres")
    assert url.hostname == "postgres"
    assert url.username == pg["POSTGRES_USER"]
    assert url.password == pg["POSTGRES_PASSWORD"]
    assert url.path.lstrip("/") == pg["POSTGRES_DB"]


@pytest.mark.parametrize("topic", TOPICS)
def test_topics_service_creates_each_topic_with_12_partitions(
    services: dict[str, Any], topic: str
) -> None:
    lines = command_text(services["topics"]).splitlines()
    creating = [
        line
        for line in lines
        if "--create" in line and re.search(rf"--topic[ =]{re.escape(topic)}(\s|$)", line)
    ]
    assert creating, f"no --create command for {topic}"
    assert all(re.search(rf"--partitions[ =]{PARTITIONS}\b", line) for line in creating)


def test_topics_service_waits_for_a_healthy_broker(services: dict[str, Any]) -> None:
    assert depends_on_of(services["topics"]).get("kafka") == "service_healthy"


@pytest.mark.parametrize("name", sorted(APP_SERVICES))
def test_app_service_builds_the_repository_image(services: dict[str, Any], name: str) -> None:
    build = services[name].get("build")
    context = build.get("context") if isinstance(build, dict) else build
    assert context in (".", "./"), f"{name} does not build from the repository root"


@pytest.mark.parametrize("name", sorted(APP_SERVICES))
def test_app_service_runs_its_memstream_command(services: dict[str, Any], name: str) -> None:
    expected_command, _ = APP_SERVICES[name]
    assert command_words(services[name])[:1] == [expected_command]


@pytest.mark.parametrize(
    ("name", "required"),
    [("worker", {"kafka"}), ("projector", {"kafka", "postgres"})],
)
def test_app_service_waits_for_its_backends(
    services: dict[str, Any], name: str, required: set[str]
) -> None:
    """Given an app service, it depends on each backend with a condition (not merely started
    first), so it does not crash-loop while Kafka or PostgreSQL boot."""
    deps = depends_on_of(services[name])
    for backend in required:
        assert deps.get(backend) in ("service_healthy", "service_completed_successfully"), (
            f"{name} must wait for {backend} with a condition, has {deps.get(backend)!r}"
        )


@pytest.mark.parametrize("name", sorted(APP_SERVICES))
def test_app_service_waits_for_the_topics(services: dict[str, Any], name: str) -> None:
    assert depends_on_of(services[name]).get("topics") == "service_completed_successfully"


@pytest.mark.parametrize("name", sorted(APP_SERVICES))
def test_app_service_is_configured_for_kafka_and_postgres(
    services: dict[str, Any], name: str
) -> None:
    env = environment_of(services[name])
    assert env.get("MEMSTREAM_KAFKA_BOOTSTRAP")
    assert env.get("MEMSTREAM_DATABASE_URL")


def test_projector_starts_after_the_migrations(services: dict[str, Any]) -> None:
    """Given the projector, `memstream migrate` has completed before it starts: either a
    one-shot service it waits for, or a step of its own command."""
    if "migrate" in command_text(services["projector"]).split():
        return
    migrators = [
        dep
        for dep, condition in depends_on_of(services["projector"]).items()
        if condition == "service_completed_successfully"
        and command_words(services[dep])[:1] == ["migrate"]
    ]
    assert migrators, "nothing runs `memstream migrate` before the projector"
    for migrator in migrators:
        assert depends_on_of(services[migrator]).get("postgres") == "service_healthy"


def test_worker_keeps_its_table_state_on_a_named_volume(services: dict[str, Any]) -> None:
    data_dir = environment_of(services["worker"])["MEMSTREAM_WORKER_DATA_DIR"]
    assert ("volume", data_dir) in {
        (kind, target) for kind, _, target in mounts_of(services["worker"])
    }


@pytest.mark.parametrize("name", sorted(APP_SERVICES))
def test_app_metrics_port_is_the_documented_one(services: dict[str, Any], name: str) -> None:
    _, port = APP_SERVICES[name]
    variable = f"MEMSTREAM_{name.upper()}_METRICS_PORT"
    assert environment_of(services[name]).get(variable, str(port)) == str(port)


def known_setting_names() -> set[str]:
    from streams.config.settings import Settings

    return set(Settings().as_env()) | SETTINGS_NOT_IN_SETTINGS_CLASS


def test_compose_sets_only_settings_the_app_reads(services: dict[str, Any]) -> None:
    """A misspelt MEMSTREAM_* variable is silently ignored by the app: catch it here."""
    used = {
        name
        for service in services.values()
        for name in environment_of(service)
        if name.startswith("MEMSTREAM_")
    }
    assert used, "no service sets any MEMSTREAM_ variable"
    assert used <= known_setting_names(), f"unknown settings: {used - known_setting_names()}"


def test_every_depends_on_target_is_a_service(services: dict[str, Any]) -> None:
    for name, service in services.items():
        for target in depends_on_of(service):
            assert target in services, f"{name} depends on undefined service {target}"


def test_every_named_volume_is_declared(compose: dict[str, Any]) -> None:
    declared = set(compose.get("volumes") or {})
    for name, service in compose["services"].items():
        for kind, source, _ in mounts_of(service):
            if kind == "volume" and source:
                assert source in declared, f"{name} uses undeclared volume {source}"


def test_every_host_file_mounted_exists_in_the_repository(services: dict[str, Any]) -> None:
    binds = [
        (name, source)
        for name, service in services.items()
        for kind, source, _ in mounts_of(service)
        if kind == "bind"
    ]
    assert binds, "expected the Prometheus and Grafana configuration to be bind-mounted"
    for name, source in binds:
        assert (ROOT / source).exists(), f"{name} mounts {source}, which is not in the repository"


def test_every_build_context_has_a_dockerfile(services: dict[str, Any]) -> None:
    for name, service in services.items():
        build = service.get("build")
        if build is None:
            continue
        context = build.get("context", ".") if isinstance(build, dict) else build
        dockerfile = (
            build.get("dockerfile", "Dockerfile") if isinstance(build, dict) else "Dockerfile"
        )
        assert (ROOT / context / dockerfile).is_file(), f"{name}: no {dockerfile} in {context}"


# ---- Prometheus -----------------------------------------------------------------------------


def scrape_targets() -> set[str]:
    config = load_yaml(PROMETHEUS_CONFIG)
    return {
        target
        for job in config["scrape_configs"]
        for static in job.get("static_configs", [])
        for target in static.get("targets", [])
    }


@pytest.mark.parametrize("name", sorted(APP_SERVICES))
def test_prometheus_scrapes_each_app_on_its_metrics_port(name: str) -> None:
    _, port = APP_SERVICES[name]
    assert f"{name}:{port}" in scrape_targets()


def test_prometheus_container_loads_the_repository_config(services: dict[str, Any]) -> None:
    """Given the prometheus service, the repository's prometheus.yml is mounted where its
    --config.file flag (or the image default) looks for it."""
    prometheus = services["prometheus"]
    flags = [arg for arg in command_words(prometheus) if arg.startswith("--config.file=")]
    expected = flags[-1].split("=", 1)[1] if flags else "/etc/prometheus/prometheus.yml"
    assert bind_target_of(prometheus, PROMETHEUS_CONFIG) == expected


# ---- Grafana --------------------------------------------------------------------------------


def test_grafana_datasource_points_at_the_prometheus_service(services: dict[str, Any]) -> None:
    datasources = load_yaml(GRAFANA_DATASOURCES)["datasources"]
    prometheus = [ds for ds in datasources if ds["type"] == "prometheus"]
    assert prometheus, "no prometheus data source is provisioned"
    url = urlsplit(prometheus[0]["url"])
    assert url.hostname in services and "prometheus" in services[url.hostname]["image"]
    assert url.port == 9090


def test_grafana_loads_the_provisioning_directory(services: dict[str, Any]) -> None:
    provisioning = GRAFANA_DATASOURCES.parents[1]
    assert bind_target_of(services["grafana"], provisioning) == "/etc/grafana/provisioning"


def test_grafana_dashboard_provider_reads_the_mounted_dashboards(services: dict[str, Any]) -> None:
    """Given the dashboard provider, its path is where compose mounts deploy/grafana/dashboards,
    so the memstream dashboard actually shows up."""
    providers = load_yaml(GRAFANA_DASHBOARD_PROVIDER)["providers"]
    paths = {provider["options"]["path"] for provider in providers}
    assert bind_target_of(services["grafana"], GRAFANA_DASHBOARD.parent) in paths


# ---- Grafana dashboard ----------------------------------------------------------------------

PROMQL_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool"}
PROMQL_KEYWORDS |= {"and", "or", "unless", "offset", "inf", "nan"}


def promql_metric_names(expr: str) -> set[str]:
    """The metric names an expression selects (functions, labels and keywords left out)."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', "", expr)  # string literals
    expr = re.sub(r"\$\{?\w+\}?", "", expr)  # Grafana variables
    expr = re.sub(r"\{[^}]*\}", "", expr)  # label matchers
    expr = re.sub(r"\[[^\]]*\]", "", expr)  # range selectors
    expr = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)
    expr = re.sub(r"(?<![\w:])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?", "", expr)  # numbers
    names = set()
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", expr):
        is_function = expr[match.end() :].lstrip().startswith("(")
        if not is_function and match.group().lower() not in PROMQL_KEYWORDS:
            names.add(match.group())
    return names


def base_metric(name: str) -> str:
    return re.sub(r"_(bucket|sum|count)$", "", name)


def dashboard() -> dict[str, Any]:
    assert GRAFANA_DASHBOARD.is_file(), "the Grafana dashboard is missing"
    return json.loads(GRAFANA_DASHBOARD.read_text())


def dashboard_panels() -> Iterator[dict[str, Any]]:
    for panel in dashboard()["panels"]:
        yield panel
        yield from panel.get("panels", [])


def dashboard_exprs() -> list[str]:
    return [t["expr"] for p in dashboard_panels() for t in p.get("targets", []) if t.get("expr")]


def test_promql_metric_names_finds_selectors_not_functions_or_labels() -> None:
    expr = (
        'histogram_quantile(0.99, sum by (le) (rate(a_seconds_bucket{job="x"}[$__rate_interval])))'
        " / sum(b_total) without (instance)"
    )
    assert promql_metric_names(expr) == {"a_seconds_bucket", "b_total"}


def test_dashboard_queries_only_memstream_metrics() -> None:
    exprs = dashboard_exprs()
    assert exprs, "the dashboard has no queries"
    names = set().union(*(promql_metric_names(expr) for expr in exprs))
    assert names, "no metric names found in the dashboard queries"
    foreign = {name for name in names if not name.startswith("memstream_")}
    assert not foreign, f"queried metrics without the memstream_ prefix: {sorted(foreign)}"


@pytest.mark.parametrize(
    ("metric", "grouping"),
    [
        ("memstream_events_ingested_total", {"event_type"}),
        ("memstream_events_rejected_total", {"reason"}),
        ("memstream_projector_rows_total", {"table"}),
        ("memstream_consumer_lag", {"topic", "partition"}),
        ("memstream_projector_lag_seconds", set()),
    ],
)
def test_dashboard_charts_metric_by_its_labels(metric: str, grouping: set[str]) -> None:
    """Given a labelled metric, some panel shows it split by those labels."""

    def groupings(expr: str) -> list[set[str]]:
        return [
            {label.strip() for label in m.split(",") if label.strip()}
            for m in re.findall(r"\bby\s*\(([^)]*)\)", expr)
        ]

    charting = [expr for expr in dashboard_exprs() if metric in promql_metric_names(expr)]
    assert charting, f"no panel queries {metric}"
    assert any(not grouping or grouping in groupings(expr) for expr in charting)


@pytest.mark.parametrize(
    ("histogram", "quantile"),
    [
        ("memstream_consolidation_cycle_seconds", "0.5"),
        ("memstream_consolidation_cycle_seconds", "0.99"),
        ("memstream_event_lag_seconds", "0.99"),
        ("memstream_projector_batch_seconds", "0.99"),
    ],
)
def test_dashboard_shows_histogram_quantile(histogram: str, quantile: str) -> None:
    """Given a histogram, some panel computes the quantile from its buckets aggregated by le."""
    quantile_of = re.compile(rf"histogram_quantile\(\s*{re.escape(quantile)}\s*,")
    matching = [
        expr
        for expr in dashboard_exprs()
        if quantile_of.search(expr)
        and f"{histogram}_bucket" in promql_metric_names(expr)
        and re.search(r"\bby\s*\([^)]*\ble\b", expr)
    ]
    assert matching, f"no histogram_quantile({quantile}, ... {histogram}_bucket ... by (le))"


def test_dashboard_panel_datasources_resolve() -> None:
    """Given each panel, its data source is the dashboard's datasource variable or a
    provisioned data source uid: otherwise Grafana shows "datasource not found"."""
    variables = {
        f"${{{v['name']}}}"
        for v in dashboard().get("templating", {}).get("list", [])
        if v.get("type") == "datasource"
    }
    variables |= {value.replace("{", "").replace("}", "") for value in variables}
    provisioned = {ds.get("uid") for ds in load_yaml(GRAFANA_DATASOURCES)["datasources"]}
    for panel in dashboard_panels():
        for source in [panel.get("datasource")] + [
            t.get("datasource") for t in panel.get("targets", [])
        ]:
            if isinstance(source, dict):
                assert source.get("uid") in variables | provisioned, (
                    f"panel {panel.get('title')!r} uses unknown data source {source}"
                )


def test_dashboard_panel_ids_are_unique() -> None:
    ids = [panel["id"] for panel in dashboard_panels()]
    assert len(ids) == len(set(ids))


# ---- Kubernetes (kustomize) -----------------------------------------------------------------


def test_kustomization_lists_only_existing_files() -> None:
    resources = kustomization().get("resources", [])
    assert resources, "the kustomization lists no resources"
    missing = [name for name in resources if not (K8S_DIR / name).exists()]
    assert not missing, f"listed but missing: {missing}"


def test_every_manifest_in_k8s_is_listed_in_the_kustomization() -> None:
    listed = {(K8S_DIR / name).resolve() for name in kustomization().get("resources", [])}
    manifests = {p.resolve() for p in K8S_DIR.glob("*.y*ml") if p.name != KUSTOMIZATION.name}
    assert manifests - listed == set(), f"not applied by kustomize: {manifests - listed}"


@pytest.mark.parametrize("path", sorted(K8S_DIR.glob("*.y*ml")), ids=lambda p: p.name)
def test_every_k8s_file_parses_as_yaml(path: Path) -> None:
    assert load_yaml_documents(path), f"{path.name} holds no document"


def test_every_k8s_object_has_api_version_kind_and_name() -> None:
    for obj in k8s_objects():
        assert obj.get("apiVersion") and obj.get("kind"), obj
        assert obj.get("metadata", {}).get("name"), obj


def test_no_two_k8s_objects_share_kind_and_name() -> None:
    keys = [(obj["kind"], obj["metadata"]["name"]) for obj in k8s_objects()]
    assert len(keys) == len(set(keys))


def test_worker_is_a_statefulset_with_its_table_state_on_a_claim() -> None:
    """Given the worker StatefulSet, a volumeClaimTemplate is mounted on the worker data dir, so
    each pod's RocksDB state survives a restart."""
    worker = find_object("StatefulSet", "memstream-worker")
    claims = {t["metadata"]["name"] for t in worker["spec"].get("volumeClaimTemplates", [])}
    (container,) = pod_containers(worker)
    mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
    data_dir = configmap_data()["MEMSTREAM_WORKER_DATA_DIR"]
    assert mounts.get(data_dir) in claims, f"{data_dir} is not on a PersistentVolumeClaim"


def test_worker_statefulset_is_governed_by_a_headless_service() -> None:
    worker = find_object("StatefulSet", "memstream-worker")
    service = find_object("Service", worker["spec"]["serviceName"])
    assert service["spec"].get("clusterIP") == "None"


def test_worker_replicas_do_not_exceed_the_partitions() -> None:
    replicas = find_object("StatefulSet", "memstream-worker")["spec"]["replicas"]
    assert 1 <= replicas <= int(configmap_data()["MEMSTREAM_PARTITIONS"])


def test_projector_is_a_deployment() -> None:
    find_object("Deployment", "memstream-projector")


@pytest.mark.parametrize(
    ("kind", "name", "command"),
    [
        ("StatefulSet", "memstream-worker", "worker"),
        ("Deployment", "memstream-projector", "project"),
    ],
)
def test_workload_runs_its_memstream_command(kind: str, name: str, command: str) -> None:
    (container,) = pod_containers(find_object(kind, name))
    words = list(container.get("command", [])) + list(container.get("args", []))
    assert command in words


@pytest.mark.parametrize(
    ("kind", "name"),
    [("StatefulSet", "memstream-worker"), ("Deployment", "memstream-projector")],
)
def test_workload_takes_its_env_from_the_configmap(kind: str, name: str) -> None:
    configmap = only_object("ConfigMap")["metadata"]["name"]
    for container in pod_containers(find_object(kind, name), init=True):
        refs = [
            e["configMapRef"]["name"] for e in container.get("envFrom", []) if "configMapRef" in e
        ]
        assert configmap in refs, f"{name}/{container['name']} does not read {configmap}"


def test_projector_migrates_in_an_init_container() -> None:
    projector = find_object("Deployment", "memstream-projector")
    inits = projector["spec"]["template"]["spec"].get("initContainers", [])
    assert any("migrate" in c.get("command", []) + c.get("args", []) for c in inits)


def test_database_url_comes_from_the_cloudnativepg_app_secret() -> None:
    """Given the CNPG Cluster, the operator writes <name>-app with key `uri`: every container
    that needs MEMSTREAM_DATABASE_URL reads it from there."""
    secret = f"{only_object('Cluster')['metadata']['name']}-app"
    projector = find_object("Deployment", "memstream-projector")
    for container in pod_containers(projector, init=True):
        var = env_var(container, "MEMSTREAM_DATABASE_URL")
        assert var, f"{container['name']} has no MEMSTREAM_DATABASE_URL"
        assert var["valueFrom"]["secretKeyRef"] == {"name": secret, "key": "uri"}


def test_configmap_holds_no_database_credentials() -> None:
    assert "MEMSTREAM_DATABASE_URL" not in configmap_data()


def test_configmap_sets_only_settings_the_app_reads() -> None:
    names = set(configmap_data())
    assert names <= known_setting_names(), f"unknown settings: {names - known_setting_names()}"


def test_configmap_agrees_with_compose_settings(services: dict[str, Any]) -> None:
    """Given the same app in compose and on Kubernetes, it is configured the same way, apart
    from where Kafka and PostgreSQL are and each instance's own id (a pod's name on
    Kubernetes, set per service in compose)."""
    where = {"MEMSTREAM_KAFKA_BOOTSTRAP", "MEMSTREAM_DATABASE_URL", "MEMSTREAM_INSTANCE_ID"}
    compose_env = {
        k: v for k, v in environment_of(services["worker"]).items() if k.startswith("MEMSTREAM_")
    }
    k8s_env = configmap_data()
    assert set(compose_env) - where == set(k8s_env) - where
    for name in set(k8s_env) - where:
        assert str(k8s_env[name]) == compose_env[name], name


def test_every_service_selects_the_pods_of_a_workload() -> None:
    for service in find_objects("Service"):
        selector = service["spec"].get("selector", {})
        assert any(selects(selector, pod_labels(w)) for w in workloads()), (
            f"Service {service['metadata']['name']} selects no pod ({selector})"
        )


def test_every_workload_selector_matches_its_pod_template() -> None:
    for workload in workloads():
        selector = workload["spec"]["selector"]["matchLabels"]
        assert selects(selector, pod_labels(workload)), workload["metadata"]["name"]


def test_every_service_target_port_is_a_container_port() -> None:
    for service in find_objects("Service"):
        selector = service["spec"]["selector"]
        pods = [w for w in workloads() if selects(selector, pod_labels(w))]
        ports = {
            value
            for w in pods
            for c in pod_containers(w)
            for p in c.get("ports", [])
            for value in (p.get("name"), p["containerPort"])
        }
        for port in service["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            assert target in ports, f"{service['metadata']['name']}: no container port {target}"


@pytest.mark.parametrize(
    ("workload", "port"), [("memstream-worker", 9101), ("memstream-projector", 9102)]
)
def test_each_app_is_scraped_by_a_servicemonitor(workload: str, port: int) -> None:
    """Given an app's pods, some ServiceMonitor selects a Service in front of them, by a port
    name that Service has, and that port is the app's metrics port."""
    pods = next(w for w in workloads() if w["metadata"]["name"] == workload)
    scraped = []
    for monitor in find_objects("ServiceMonitor"):
        assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
        for service in find_objects("Service"):
            if not selects(
                monitor["spec"]["selector"]["matchLabels"], service["metadata"]["labels"]
            ):
                continue
            if not selects(service["spec"]["selector"], pod_labels(pods)):
                continue
            by_name = {p["name"]: p for p in service["spec"]["ports"]}
            for endpoint in monitor["spec"]["endpoints"]:
                assert endpoint["port"] in by_name, f"{monitor['metadata']['name']}: no port"
                assert endpoint.get("path", "/metrics") == "/metrics"
                scraped.append(by_name[endpoint["port"]]["port"])
    assert port in scraped, f"{workload} is not scraped on {port}"


@pytest.mark.parametrize(
    ("kind", "name"),
    [("StatefulSet", "memstream-worker"), ("Deployment", "memstream-projector")],
)
@pytest.mark.parametrize("probe", ["readinessProbe", "livenessProbe"])
def test_probes_hit_metrics_on_a_declared_port(kind: str, name: str, probe: str) -> None:
    (container,) = pod_containers(find_object(kind, name))
    http = container[probe]["httpGet"]
    declared = {v for p in container["ports"] for v in (p.get("name"), p["containerPort"])}
    assert http["path"] == "/metrics"
    assert http["port"] in declared


@pytest.mark.parametrize(
    ("kind", "name", "variable"),
    [
        ("StatefulSet", "memstream-worker", "MEMSTREAM_WORKER_METRICS_PORT"),
        ("Deployment", "memstream-projector", "MEMSTREAM_PROJECTOR_METRICS_PORT"),
    ],
)
def test_container_port_is_the_configured_metrics_port(kind: str, name: str, variable: str) -> None:
    (container,) = pod_containers(find_object(kind, name))
    ports = {p["containerPort"] for p in container["ports"]}
    assert int(configmap_data()[variable]) in ports


def test_kafka_runs_kraft_on_a_node_pool_of_the_cluster() -> None:
    kafka = only_object("Kafka")
    pools = find_objects("KafkaNodePool")
    assert pools, "no KafkaNodePool"
    roles = set()
    for pool in pools:
        assert pool["metadata"]["labels"]["strimzi.io/cluster"] == kafka["metadata"]["name"]
        roles |= set(pool["spec"]["roles"])
    assert roles == {"controller", "broker"}
    assert "zookeeper" not in kafka["spec"]


def test_kafka_topics_are_the_three_with_12_partitions() -> None:
    kafka = only_object("Kafka")["metadata"]["name"]
    topics = find_objects("KafkaTopic")
    assert sorted(t["spec"].get("topicName", t["metadata"]["name"]) for t in topics) == sorted(
        TOPICS
    )
    for topic in topics:
        assert topic["metadata"]["labels"]["strimzi.io/cluster"] == kafka
        assert topic["spec"]["partitions"] == PARTITIONS
    assert int(configmap_data()["MEMSTREAM_PARTITIONS"]) == PARTITIONS


def test_configmap_bootstrap_is_the_strimzi_bootstrap_service() -> None:
    """Given the Kafka cluster, the apps' bootstrap is its bootstrap Service on the listener
    that encrypts and authenticates (issue 10: no plaintext listener is left for them)."""
    kafka = only_object("Kafka")
    secure = [
        lst
        for lst in kafka["spec"]["kafka"]["listeners"]
        if lst.get("tls") and lst.get("authentication", {}).get("type") == "scram-sha-512"
    ]
    assert secure, "no TLS + SCRAM-SHA-512 listener for the apps"
    expected = f"{kafka['metadata']['name']}-kafka-bootstrap:{secure[0]['port']}"
    assert configmap_data()["MEMSTREAM_KAFKA_BOOTSTRAP"] == expected


def test_cloudnativepg_cluster_provides_pgvector() -> None:
    cluster = only_object("Cluster")
    assert cluster["apiVersion"] == "postgresql.cnpg.io/v1"
    sql = cluster["spec"].get("bootstrap", {}).get("initdb", {}).get("postInitApplicationSQL", [])
    image = cluster["spec"].get("imageName", "")
    creates_vector = any(re.search(r"(?i)create extension .*\bvector\b", s) for s in sql)
    assert creates_vector or re.search(r"pgvector|standard|system", image), (image, sql)


def test_kustomize_builds_the_manifests() -> None:
    assert shutil.which("kubectl"), (
        "kubectl is part of this project's machine image and renders the kustomization; "
        "install kubectl to run this check"
    )
    result = subprocess.run(
        ["kubectl", "kustomize", str(K8S_DIR)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    built = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    assert {doc["metadata"].get("namespace") for doc in built if doc["kind"] != "Namespace"} == {
        kustomization()["namespace"]
    }


# ---- security (issue 10) --------------------------------------------------------------------

APP_KAFKA_USERS = {"memstream-worker": "StatefulSet", "memstream-projector": "Deployment"}


def kafka_users() -> dict[str, dict[str, Any]]:
    return {user["metadata"]["name"]: user for user in find_objects("KafkaUser")}


def acl_grants(user: dict[str, Any]) -> set[tuple[str, str, str, str]]:
    """(resource type, name, pattern type, operation) of every ACL rule of a KafkaUser."""
    grants = set()
    for rule in user["spec"]["authorization"]["acls"]:
        resource = rule["resource"]
        operations = rule.get("operations") or [rule["operation"]]
        for operation in operations:
            grants.add(
                (
                    resource["type"],
                    resource.get("name", ""),
                    resource.get("patternType", "literal"),
                    operation,
                )
            )
    return grants


def allows(user: dict[str, Any], kind: str, name: str, operation: str) -> bool:
    for res_type, res_name, pattern, op in acl_grants(user):
        matches = name == res_name if pattern == "literal" else name.startswith(res_name)
        if res_type == kind and op in (operation, "All") and (matches or res_name == "*"):
            return True
    return False


def volume_of_mount(workload: dict[str, Any], container: dict[str, Any], path: str) -> Any:
    """The pod volume mounted at the directory holding ``path``, or None."""
    mounts = {m["mountPath"].rstrip("/"): m["name"] for m in container.get("volumeMounts", [])}
    name = mounts.get(str(Path(path).parent))
    volumes = {v["name"]: v for v in workload["spec"]["template"]["spec"].get("volumes", [])}
    return volumes.get(name) if name else None


def test_kafka_has_no_listener_without_tls_and_authentication() -> None:
    for listener in only_object("Kafka")["spec"]["kafka"]["listeners"]:
        assert listener.get("tls") is True, listener["name"]
        assert listener.get("authentication", {}).get("type") == "scram-sha-512", listener["name"]


def test_kafka_denies_what_no_acl_allows_and_runs_the_user_operator() -> None:
    spec = only_object("Kafka")["spec"]
    assert spec["kafka"].get("authorization", {}).get("type") == "simple"
    assert "userOperator" in spec["entityOperator"]


def test_every_kafka_user_authenticates_with_scram_and_is_authorized_by_acls() -> None:
    cluster = only_object("Kafka")["metadata"]["name"]
    users = kafka_users()
    assert set(APP_KAFKA_USERS) | {"memstream-publisher"} <= set(users)
    for name, user in users.items():
        assert user["metadata"]["labels"]["strimzi.io/cluster"] == cluster, name
        assert user["spec"]["authentication"]["type"] == "scram-sha-512", name
        assert user["spec"]["authorization"]["type"] == "simple", name


def test_no_kafka_user_may_delete_or_alter_or_do_everything() -> None:
    for name, user in kafka_users().items():
        operations = {op for _, _, _, op in acl_grants(user)}
        assert not operations & {"All", "Delete", "Alter", "AlterConfigs"}, name


@pytest.mark.parametrize(
    ("user", "kind", "resource", "operation"),
    [
        ("memstream-worker", "topic", "memory.events", "Read"),
        ("memstream-worker", "topic", "memory.events", "Write"),  # periodic ticks
        ("memstream-worker", "topic", "memory.consolidation", "Write"),
        ("memstream-worker", "topic", "memory.consolidation", "Read"),  # state rebuilds
        ("memstream-worker", "topic", "memory.deadletter", "Write"),
        ("memstream-worker", "group", "memstream-worker", "Read"),
        ("memstream-worker", "transactionalId", "memstream-worker-0-3", "Write"),
        ("memstream-worker", "cluster", "", "IdempotentWrite"),
        ("memstream-projector", "topic", "memory.consolidation", "Read"),
        ("memstream-projector", "topic", "memory.deadletter", "Write"),
        ("memstream-projector", "group", "memstream-projector", "Read"),
        ("memstream-publisher", "topic", "memory.events", "Write"),
    ],
)
def test_each_kafka_user_may_do_what_its_process_does(
    user: str, kind: str, resource: str, operation: str
) -> None:
    assert allows(kafka_users()[user], kind, resource, operation)


@pytest.mark.parametrize(
    ("user", "kind", "resource", "operation"),
    [
        ("memstream-projector", "topic", "memory.events", "Read"),
        ("memstream-projector", "topic", "memory.consolidation", "Write"),
        ("memstream-publisher", "topic", "memory.consolidation", "Read"),
        ("memstream-publisher", "topic", "memory.events", "Read"),
    ],
)
def test_kafka_users_get_no_more_than_their_process_needs(
    user: str, kind: str, resource: str, operation: str
) -> None:
    assert not allows(kafka_users()[user], kind, resource, operation)


def test_kafka_user_ids_match_the_app_settings() -> None:
    """The worker's group and transactional ids are its app id; the projector's group is
    MEMSTREAM_PROJECTOR_GROUP: the ACLs name exactly those."""
    data = configmap_data()
    assert data["MEMSTREAM_APP_ID"] == "memstream-worker"
    assert data["MEMSTREAM_PROJECTOR_GROUP"] == "memstream-projector"
    assert data["MEMSTREAM_TOPIC_PREFIX"] == ""


@pytest.mark.parametrize(("user", "kind"), sorted(APP_KAFKA_USERS.items()))
def test_workload_connects_as_its_kafka_user_with_mounted_secrets(user: str, kind: str) -> None:
    """Given an app workload, it uses SASL_SSL with SCRAM-SHA-512 as its own KafkaUser; the
    password file is the `password` key of that user's Secret and the CA file the cluster CA
    Secret's `ca.crt`, both mounted as volumes."""
    workload = find_object(kind, user)
    (container,) = pod_containers(workload)
    env = {e["name"]: e.get("value") for e in container.get("env", [])}
    cluster = only_object("Kafka")["metadata"]["name"]

    assert env["MEMSTREAM_KAFKA_SECURITY_PROTOCOL"] == "SASL_SSL"
    assert env["MEMSTREAM_KAFKA_SASL_MECHANISM"] == "SCRAM-SHA-512"
    assert env["MEMSTREAM_KAFKA_USERNAME"] == user
    password = volume_of_mount(workload, container, env["MEMSTREAM_KAFKA_PASSWORD_FILE"])
    assert password is not None, "the password file is not on a mounted volume"
    assert password["secret"]["secretName"] == user
    items = {i["key"]: i["path"] for i in password["secret"].get("items", [])}
    assert items.get("password") == Path(env["MEMSTREAM_KAFKA_PASSWORD_FILE"]).name
    ca = volume_of_mount(workload, container, env["MEMSTREAM_KAFKA_SSL_CA_FILE"])
    assert ca is not None, "the CA file is not on a mounted volume"
    assert ca["secret"]["secretName"] == f"{cluster}-cluster-ca-cert"
    assert {i["key"] for i in ca["secret"].get("items", [])} == {"ca.crt"}


def test_no_kafka_secret_is_in_the_configmap_or_an_env_value() -> None:
    assert not {"MEMSTREAM_KAFKA_PASSWORD", "MEMSTREAM_KAFKA_PASSWORD_FILE"} & set(configmap_data())
    for workload in workloads():
        for container in pod_containers(workload, init=True):
            assert env_var(container, "MEMSTREAM_KAFKA_PASSWORD") is None, container["name"]


def test_metrics_bind_all_interfaces_in_containers(services: dict[str, Any]) -> None:
    """The default bind address is 127.0.0.1; in containers Prometheus and the kubelet come
    from outside, so compose and the ConfigMap open /metrics on every interface."""
    assert configmap_data()["MEMSTREAM_METRICS_BIND"] == "0.0.0.0"
    for name in APP_SERVICES:
        assert environment_of(services[name])["MEMSTREAM_METRICS_BIND"] == "0.0.0.0", name


def test_a_network_policy_lets_only_prometheus_reach_the_apps_metrics() -> None:
    """Given /metrics on all interfaces, a NetworkPolicy selects every app pod and admits
    ingress only from selected peers, on its metrics port, or on its http port for a pod
    that serves one (the API takes its clients' requests there)."""
    policies = find_objects("NetworkPolicy")
    assert policies, "no NetworkPolicy"
    for workload in workloads():
        labels = pod_labels(workload)
        served = {
            port.get("name")
            for container in workload["spec"]["template"]["spec"]["containers"]
            for port in container.get("ports", [])
        }
        selecting = [p for p in policies if _policy_selects(p["spec"]["podSelector"], labels)]
        assert selecting, f"no NetworkPolicy selects {workload['metadata']['name']}"
        for policy in selecting:
            assert "Ingress" in policy["spec"]["policyTypes"]
            for rule in policy["spec"].get("ingress", []):
                assert rule.get("from"), "an ingress rule without peers admits everyone"
                ports = {p["port"] for p in rule["ports"]}
                assert ports in ({"metrics"}, {"http"} & served), ports


def _policy_selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    if not selector:
        return True
    ok = all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())
    for expression in selector.get("matchExpressions", []):
        assert expression["operator"] == "In"
        ok = ok and labels.get(expression["key"]) in expression["values"]
    return ok


def test_cloudnativepg_declares_the_row_level_security_roles() -> None:
    """The application user may not create roles: the operator declares the two group roles
    migration 004 grants to, without login."""
    roles = {
        role["name"]: role
        for role in only_object("Cluster")["spec"].get("managed", {}).get("roles", [])
    }
    for name in ("memstream_reader", "memstream_projector"):
        assert name in roles, name
        assert roles[name].get("ensure", "present") == "present"
        assert roles[name].get("login") is False


def test_each_worker_pod_is_a_static_group_member_named_after_itself() -> None:
    """A restarted worker pod takes its partitions back at once: its group.instance.id is
    its stable StatefulSet name."""
    [worker] = [w for w in workloads() if w["metadata"]["name"] == "memstream-worker"]
    [container] = worker["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in container.get("env", [])}
    assert worker["kind"] == "StatefulSet"
    assert env["MEMSTREAM_INSTANCE_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"


# ---- README and docs/ -----------------------------------------------------------------------

README = ROOT / "README.md"
DOCS_DIR = ROOT / "docs"
# A commit hash as the README's history used to cite them: 7 to 40 hex digits, a digit and a
# letter among them (so no English word and no plain number matches).
COMMIT_HASH = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")


def _settings_the_code_reads() -> set[str]:
    """Every ``MEMSTREAM_*`` variable: the settings' fields and the names the code spells out
    (the LLM adapter's, the secure stack's)."""
    import dataclasses

    from streams.config.settings import ENV_PREFIX, Settings

    names = {ENV_PREFIX + f.name.upper() for f in dataclasses.fields(Settings)}
    for package in ("memstream", "streams", "projections"):
        for path in (ROOT / package).rglob("*.py"):
            names |= set(re.findall(r"\"(MEMSTREAM_[A-Z0-9_]*[A-Z0-9])\"", path.read_text()))
    return names


def test_the_readme_is_a_front_door_of_at_most_300_lines_with_short_rows() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 300
    long_rows = [n for n, line in enumerate(lines, 1) if len(line) > 300]
    assert long_rows == [], f"README lines over 300 characters: {long_rows}"


def test_the_readme_cites_no_commit_hash() -> None:
    assert COMMIT_HASH.findall(README.read_text()) == []


def test_every_setting_is_in_the_readme_configuration_table() -> None:
    import dataclasses

    from streams.config.settings import ENV_PREFIX, Settings

    text = README.read_text()
    table = text[text.index("## Configuration") :]
    fields = {ENV_PREFIX + f.name.upper() for f in dataclasses.fields(Settings)}
    missing = sorted(name for name in fields if f"`{name}`" not in table)
    assert missing == [], f"settings not in README's configuration table: {missing}"


def test_every_memstream_variable_the_code_reads_is_documented() -> None:
    documented = README.read_text() + "".join(p.read_text() for p in DOCS_DIR.glob("*.md"))
    missing = sorted(name for name in _settings_the_code_reads() if name not in documented)
    assert missing == [], f"MEMSTREAM_* variables documented nowhere: {missing}"


def test_links_from_the_readme_and_docs_point_at_files_that_exist() -> None:
    for page in [README, *DOCS_DIR.glob("*.md")]:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
            if not target.startswith(("http://", "https://")):
                assert (page.parent / target).exists(), f"{page.name} links to {target}"
