"""The deployment files of one checkout, parsed, and what the code says they must agree with.

A ``Repo`` reads its files lazily from a root directory, so a check that passes on the real
checkout can be shown to fail on a broken copy of it in tmp_path. Nothing here starts a
container or opens a connection.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import shlex
import tomllib
from collections.abc import Mapping
from functools import cache, cached_property
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from projections.projector_processes import PROJECTOR
from streams.config.settings import ENV_PREFIX, Settings, SettingsError
from streams.runtime.worker_processes import WORKER

ROOT = Path(__file__).resolve().parents[3]
CODE_PACKAGES = ("memstream", "streams", "projections")

# What each `memstream` command connects to: the code's knowledge, not the files'.
KAFKA_CLIENTS = frozenset({"worker", "project", "serve"})
DATABASE_CLIENTS = frozenset({"project", "serve", "migrate"})
# The commands that run as a group of processes, each serving /metrics on first port + k.
ROLES = {"worker": WORKER, "project": PROJECTOR}
# A settings resolution must never read the developer's own `memstream up` stack file.
NO_STATE_DIR = "/nonexistent/memstream-deployment-tests"

Problems = list[str]


# ---- the code's side ------------------------------------------------------------------------


@cache
def cli_commands() -> frozenset[str]:
    from memstream.cli import build_parser

    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return frozenset(action.choices)
    raise AssertionError("memstream's parser has no subcommands")


@cache
def variables_the_code_reads() -> frozenset[str]:
    """Every ``MEMSTREAM_*`` variable: the settings' fields and the names the code spells out
    (the LLM adapter's, the secure stack's, the schema directory)."""
    names = {ENV_PREFIX + field.name.upper() for field in dataclasses.fields(Settings)}
    for path in code_files():
        names |= set(re.findall(r"[\"'](MEMSTREAM_[A-Z0-9_]*[A-Z0-9])[\"']", path.read_text()))
    return frozenset(names)


@cache
def code_files() -> tuple[Path, ...]:
    return tuple(path for package in CODE_PACKAGES for path in (ROOT / package).rglob("*.py"))


def resolve(env: Mapping[str, str]) -> Settings:
    """The settings a process started with ``env`` runs with (SettingsError if it refuses)."""
    memstream = {name: value for name, value in env.items() if name.startswith(ENV_PREFIX)}
    return Settings.from_env({f"{ENV_PREFIX}STATE_DIR": NO_STATE_DIR, **memstream})


def try_resolve(env: Mapping[str, str], where: str, problems: Problems) -> Settings | None:
    try:
        return resolve(env)
    except SettingsError as error:
        problems.append(f"{where}: {error}")
        return None


def served_ports(settings: Settings, command: str) -> dict[str, set[int]]:
    """Port name (as the k8s manifests name them) -> the ports a command listens on."""
    if command in ROLES:
        role = ROLES[command]
        first, count = getattr(settings, role.port_setting), getattr(settings, role.count_setting)
        return {"metrics": set(range(first, first + count))}
    if command == "serve":
        return {"http": {settings.http_port}, "metrics": {settings.http_metrics_port}}
    return {}


@cache
def probe_paths() -> dict[str, frozenset[str]]:
    """Port name -> the paths a probe may hit there: /metrics on a metrics port, and on the
    API's port only the paths that answer without a token (any other is a 401)."""
    from memstream.http.middleware import PUBLIC_PATHS

    return {"metrics": frozenset({"/metrics"}), "http": frozenset(PUBLIC_PATHS)}


# ---- compose helpers ------------------------------------------------------------------------


def environment_of(service: Mapping[str, Any]) -> dict[str, str]:
    """A compose service's environment as a dict, whichever of the two syntaxes it uses."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        return {name: value for name, _, value in (item.partition("=") for item in env)}
    return {name: "" if value is None else str(value) for name, value in env.items()}


def depends_on_of(service: Mapping[str, Any]) -> dict[str, str | None]:
    """Target service -> its condition (None for the short list syntax)."""
    deps = service.get("depends_on") or {}
    if isinstance(deps, list):
        return dict.fromkeys(deps)
    return {name: (spec or {}).get("condition") for name, spec in deps.items()}


def mounts_of(service: Mapping[str, Any]) -> list[tuple[str, str, str]]:
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


def command_words(service: Mapping[str, Any]) -> list[str]:
    value = service.get("command")
    return [str(v) for v in value] if isinstance(value, list) else str(value or "").split()


def command_text(service: Mapping[str, Any]) -> str:
    parts: list[str] = []
    for key in ("entrypoint", "command"):
        value = service.get(key) or []
        if isinstance(value, list):
            parts.extend(str(v) for v in value)
        else:
            parts.append(str(value))
    return "\n".join(parts)


def published_ports(service: Mapping[str, Any]) -> set[int]:
    """The container side of every `ports` entry."""
    ports = set()
    for entry in service.get("ports") or []:
        target = entry["target"] if isinstance(entry, dict) else str(entry).rsplit(":", 1)[-1]
        ports.add(int(str(target).split("/")[0]))
    return ports


def healthcheck_urls(service: Mapping[str, Any]) -> list[tuple[int, str]]:
    """(port, path) of every http URL the service's healthcheck fetches."""
    test = (service.get("healthcheck") or {}).get("test") or []
    text = " ".join(test) if isinstance(test, list) else str(test)
    return [
        (int(port), path)
        for port, path in re.findall(r"https?://[^/:\s'\"]+:(\d+)(/[^\s'\"]*)", text)
    ]


def host_of(address: str) -> str:
    """The host of ``host:port`` or of a URL."""
    return (urlsplit(address).hostname if "://" in address else address.rsplit(":", 1)[0]) or ""


# ---- Kubernetes helpers ---------------------------------------------------------------------


def pod_spec(workload: Mapping[str, Any]) -> dict[str, Any]:
    return workload["spec"]["template"]["spec"]


def pod_containers(workload: Mapping[str, Any], *, init: bool = False) -> list[dict[str, Any]]:
    spec = pod_spec(workload)
    return list(spec.get("containers", [])) + (list(spec.get("initContainers", [])) if init else [])


def pod_labels(workload: Mapping[str, Any]) -> dict[str, str]:
    return workload["spec"]["template"]["metadata"].get("labels", {})


def selects(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return bool(selector) and all(labels.get(key) == value for key, value in selector.items())


def container_command(container: Mapping[str, Any]) -> str:
    words = list(container.get("command", [])) + list(container.get("args", []))
    return str(words[0]) if words else ""


def container_ports(container: Mapping[str, Any]) -> dict[str, int]:
    """Port name -> number (an unnamed port under its number)."""
    return {
        str(p.get("name", p["containerPort"])): p["containerPort"]
        for p in container.get("ports", [])
    }


def env_entry(container: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    return next((e for e in container.get("env", []) if e["name"] == name), None)


def name_of(obj: Mapping[str, Any]) -> str:
    return f"{obj.get('kind')} {obj.get('metadata', {}).get('name')}"


# ---- the checkout ---------------------------------------------------------------------------


class Repo:
    """The deployment files below ``root``, each parsed on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.k8s_dir = root / "k8s"
        self.compose_file = root / "docker-compose.yml"
        self.dockerfile = root / "Dockerfile"
        self.prometheus_config = root / "deploy" / "prometheus" / "prometheus.yml"
        self.grafana_provisioning = root / "deploy" / "grafana" / "provisioning"
        self.grafana_dashboards = root / "deploy" / "grafana" / "dashboards"

    def yaml(self, path: Path) -> Any:
        return yaml.safe_load(path.read_text())

    # compose

    @cached_property
    def compose(self) -> dict[str, Any]:
        return self.yaml(self.compose_file)

    @property
    def services(self) -> dict[str, dict[str, Any]]:
        return self.compose["services"]

    def app_services(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """Compose services built from the repository's image: name -> (command, service)."""
        return {
            name: ((command_words(service) or [self.image_cmd])[0], service)
            for name, service in self.services.items()
            if "build" in service
        }

    def service_env(self, service: Mapping[str, Any]) -> dict[str, str]:
        base = self.image_env if "build" in service else {}
        return {**base, **environment_of(service)}

    # Dockerfile

    @cached_property
    def dockerfile_stages(self) -> list[list[tuple[str, str]]]:
        """Per build stage, its (INSTRUCTION, arguments), continuations joined, comments out."""
        text = re.sub(r"\\\n", " ", self.dockerfile.read_text())
        stages: list[list[tuple[str, str]]] = []
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            word, _, args = line.partition(" ")
            if word.upper() == "FROM":
                stages.append([])
            if stages:
                stages[-1].append((word.upper(), args.strip()))
        return stages

    def instructions(self, word: str, *, runtime_only: bool = False) -> list[str]:
        stages = self.dockerfile_stages[-1:] if runtime_only else self.dockerfile_stages
        return [args for stage in stages for w, args in stage if w == word]

    @cached_property
    def image_env(self) -> dict[str, str]:
        """The environment the runtime image gives every process."""
        env: dict[str, str] = {}
        for args in self.instructions("ENV", runtime_only=True):
            words = shlex.split(args)
            if words and "=" not in words[0]:
                env[words[0]] = " ".join(words[1:])
                continue
            env.update(word.split("=", 1) for word in words)  # type: ignore[misc]
        return env

    @property
    def image_cmd(self) -> str:
        import json

        cmds = self.instructions("CMD", runtime_only=True)
        return json.loads(cmds[-1])[0] if cmds else ""

    # Kubernetes

    @cached_property
    def kustomization(self) -> dict[str, Any]:
        return self.yaml(self.k8s_dir / "kustomization.yaml")

    @cached_property
    def k8s_objects(self) -> list[dict[str, Any]]:
        """Every object of the resource files the kustomization lists (missing ones skipped:
        their own check reports them)."""
        objects: list[dict[str, Any]] = []
        for name in self.kustomization.get("resources", []):
            path = self.k8s_dir / name
            if path.is_file():
                objects.extend(d for d in yaml.safe_load_all(path.read_text()) if d is not None)
        return objects

    def objects(self, kind: str) -> list[dict[str, Any]]:
        return [obj for obj in self.k8s_objects if obj.get("kind") == kind]

    def only(self, kind: str) -> dict[str, Any]:
        matches = self.objects(kind)
        if len(matches) != 1:
            raise AssertionError(f"expected exactly one {kind}, found {len(matches)}")
        return matches[0]

    def find(self, kind: str, name: str) -> dict[str, Any] | None:
        return next((o for o in self.objects(kind) if o["metadata"]["name"] == name), None)

    def workloads(self) -> list[dict[str, Any]]:
        return [o for o in self.k8s_objects if o.get("kind") in ("Deployment", "StatefulSet")]

    @property
    def image_names(self) -> set[str]:
        """The image names kustomize rewrites: the repository's image."""
        return {image["name"] for image in self.kustomization.get("images", [])}

    def app_containers(
        self, *, init: bool = True
    ) -> list[tuple[dict[str, Any], dict[str, Any], str]]:
        """(workload, container, command) of every container running the repository's image."""
        return [
            (workload, container, container_command(container) or self.image_cmd)
            for workload in self.workloads()
            for container in pod_containers(workload, init=init)
            if container.get("image", "").split(":")[0] in self.image_names
        ]

    def container_env(self, container: Mapping[str, Any]) -> dict[str, str]:
        """The plain values a container's process sees: the image's ENV, then its ConfigMaps,
        then its own env (values from Secrets or fields are not known here)."""
        env = dict(self.image_env)
        for source in container.get("envFrom", []):
            if "configMapRef" in source:
                configmap = self.find("ConfigMap", source["configMapRef"]["name"])
                env.update({k: str(v) for k, v in (configmap or {}).get("data", {}).items()})
        for entry in container.get("env", []):
            if "value" in entry:
                env[entry["name"]] = str(entry["value"])
        return env

    # project metadata

    @cached_property
    def pyproject(self) -> dict[str, Any]:
        return tomllib.loads((self.root / "pyproject.toml").read_text())


def compose_settings(repo: Repo, problems: Problems) -> dict[str, tuple[str, Settings]]:
    """Compose app service -> (its command, the settings it runs with)."""
    resolved = {}
    for name, (command, service) in repo.app_services().items():
        settings = try_resolve(repo.service_env(service), f"compose {name}", problems)
        if settings is not None:
            resolved[name] = (command, settings)
    return resolved


def topic_creators(repo: Repo) -> dict[str, str]:
    """Compose services that create topics -> their script."""
    return {
        name: command_text(service)
        for name, service in repo.services.items()
        if "kafka-topics" in command_text(service) and "--create" in command_text(service)
    }


REPO = Repo(ROOT)
