"""Every deployment file parses, and every name one of them refers to resolves.

These are the mistakes no tool reports until deploy time: a file kustomize does not apply, a
Service selecting no pod, a volume never declared, a mounted file missing from the checkout.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable

import pytest
import yaml

from tests.unit.deployment.repo import (
    REPO,
    Problems,
    Repo,
    container_ports,
    depends_on_of,
    mounts_of,
    name_of,
    pod_containers,
    pod_labels,
    pod_spec,
    selects,
)


def check_yaml_files_parse(repo: Repo) -> Problems:
    paths = [repo.compose_file, repo.prometheus_config, *repo.k8s_dir.glob("*.y*ml")]
    paths += sorted(repo.grafana_provisioning.rglob("*.y*ml"))
    problems = []
    for path in paths:
        try:
            documents = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
        except (OSError, yaml.YAMLError) as error:
            problems.append(f"{path.name}: {error}")
            continue
        if not documents:
            problems.append(f"{path.name} holds no document")
    return problems


def check_kustomization_applies_every_manifest(repo: Repo) -> Problems:
    """A manifest left out of the kustomization is silently never applied."""
    resources = repo.kustomization.get("resources", [])
    listed = {(repo.k8s_dir / name).resolve() for name in resources}
    problems = [f"listed but missing: {n}" for n in resources if not (repo.k8s_dir / n).exists()]
    for path in sorted(repo.k8s_dir.glob("*.y*ml")):
        if path.name != "kustomization.yaml" and path.resolve() not in listed:
            problems.append(f"{path.name} is not in the kustomization's resources")
    return problems if resources else ["the kustomization lists no resources"]


def check_k8s_objects_are_named_once(repo: Repo) -> Problems:
    problems, seen = [], set()
    for obj in repo.k8s_objects:
        if not (obj.get("apiVersion") and obj.get("kind") and obj.get("metadata", {}).get("name")):
            problems.append(f"an object without apiVersion, kind or metadata.name: {obj}")
            continue
        key = (obj["kind"], obj["metadata"]["name"])
        if key in seen:
            problems.append(f"two objects are {name_of(obj)}")
        seen.add(key)
    return problems


def check_selectors_select_pods(repo: Repo) -> Problems:
    """A Service or PodDisruptionBudget selecting no pod routes to nothing, or protects nothing;
    a workload whose selector misses its own template is refused by the API server."""
    problems = []
    for workload in repo.workloads():
        if not selects(workload["spec"]["selector"]["matchLabels"], pod_labels(workload)):
            problems.append(f"{name_of(workload)}: its selector misses its pod template")
    for obj in repo.objects("Service") + repo.objects("PodDisruptionBudget"):
        selector = obj["spec"].get("selector", {})
        selector = selector.get("matchLabels", selector) if obj["kind"] != "Service" else selector
        if not any(selects(selector, pod_labels(w)) for w in repo.workloads()):
            problems.append(f"{name_of(obj)} selects no pod ({selector})")
    return problems


def check_service_target_ports_exist(repo: Repo) -> Problems:
    problems = []
    for service in repo.objects("Service"):
        pods = [w for w in repo.workloads() if selects(service["spec"]["selector"], pod_labels(w))]
        declared = {
            value
            for w in pods
            for c in pod_containers(w)
            for name, number in container_ports(c).items()
            for value in (name, number)
        }
        for port in service["spec"]["ports"]:
            if port.get("targetPort", port["port"]) not in declared:
                problems.append(f"{name_of(service)}: no container port {port.get('targetPort')}")
    return problems


def dockerfile_uid(repo: Repo) -> int | None:
    """The uid the image's USER runs as (numeric, or created by useradd in a RUN)."""
    users = repo.instructions("USER", runtime_only=True)
    if not users:
        return None
    user = users[-1].split(":")[0]
    if user.isdigit():
        return int(user)
    for run in repo.instructions("RUN", runtime_only=True):
        for step in run.split("&&"):
            words = step.split()
            if "useradd" in words and words[-1] == user and "--uid" in words:
                return int(words[words.index("--uid") + 1])
    return None


def check_workloads_run_unprivileged_with_resources_and_probes(repo: Repo) -> Problems:
    """Every pod runs as the image's unprivileged user, no container (init containers too)
    may escalate or go without requests and a memory limit, and every long-running container
    that serves a port has HTTP probes."""
    problems, uid = [], dockerfile_uid(repo)
    for workload in repo.workloads():
        pod = pod_spec(workload).get("securityContext", {})
        ours = any(c.get("image") == "memstream" for c in pod_containers(workload, init=True))
        # another image (the Schema Registry) runs as its own unprivileged user
        wanted = uid if ours else pod.get("runAsUser")
        if pod.get("runAsNonRoot") is not True or not wanted or pod.get("runAsUser") != wanted:
            problems.append(f"{name_of(workload)}: not runAsNonRoot as the image's uid {uid}")
        for container in pod_containers(workload, init=True):
            where = f"{name_of(workload)}/{container['name']}"
            context = container.get("securityContext", {})
            if context.get("allowPrivilegeEscalation") is not False:
                problems.append(f"{where}: allowPrivilegeEscalation is not false")
            if "ALL" not in context.get("capabilities", {}).get("drop", []):
                problems.append(f"{where}: does not drop ALL capabilities")
            resources = container.get("resources", {})
            requests = resources.get("requests", {})
            if not ("cpu" in requests and "memory" in requests):
                problems.append(f"{where}: no cpu and memory requests")
            if "memory" not in resources.get("limits", {}):
                problems.append(f"{where}: no memory limit")
        for container in pod_containers(workload):
            where = f"{name_of(workload)}/{container['name']}"
            if container.get("ports"):
                for probe in ("readinessProbe", "livenessProbe"):
                    if "httpGet" not in container.get(probe, {}):
                        problems.append(f"{where}: serves HTTP but has no http {probe}")
    return problems


def check_compose_references_resolve(repo: Repo) -> Problems:
    """Dangling names in compose only fail at `docker compose up`: a dependency, a volume, a
    secret, a mounted host file, a build context without a Dockerfile."""
    problems, services = [], repo.services
    volumes, secrets = set(repo.compose.get("volumes") or {}), repo.compose.get("secrets") or {}
    for name, service in services.items():
        for target, condition in depends_on_of(service).items():
            if target not in services:
                problems.append(f"{name} depends on undefined service {target}")
            elif condition == "service_healthy" and "healthcheck" not in services[target]:
                problems.append(f"{name} waits for {target} to be healthy; it has no healthcheck")
        for kind, source, _ in mounts_of(service):
            if kind == "volume" and source and source not in volumes:
                problems.append(f"{name} uses undeclared volume {source}")
            if kind == "bind" and not (repo.root / source).exists():
                problems.append(f"{name} mounts {source}, which is not in the repository")
        for secret in service.get("secrets") or []:
            secret = secret if isinstance(secret, str) else secret["source"]
            if secret not in secrets:
                problems.append(f"{name} uses undeclared secret {secret}")
        build = service.get("build")
        if build is not None:
            context = build.get("context", ".") if isinstance(build, dict) else build
            file = (
                build.get("dockerfile", "Dockerfile") if isinstance(build, dict) else "Dockerfile"
            )
            if not (repo.root / context / file).is_file():
                problems.append(f"{name}: no {file} in build context {context}")
    for name, secret in secrets.items():
        if "file" in secret and not (repo.root / secret["file"]).is_file():
            problems.append(f"secret {name}: {secret['file']} is not in the repository")
    return problems


def check_make_targets_named_exist(repo: Repo) -> Problems:
    """The README's commands and CI's script name make targets the Makefile must define."""
    makefile = (repo.root / "Makefile").read_text()
    targets = set(re.findall(r"^([A-Za-z][\w.-]*)\s*:(?!=)", makefile, re.MULTILINE))
    problems = []
    named = [  # in the README only as code (a line of a code block, or `make x`), not prose
        (repo.root / "README.md", r"(?:^|`)make ([a-z][\w-]*)"),
        (repo.root / ".ci" / "run", r"\bmake ([a-z][\w-]*)"),
    ]
    for path, pattern in named:
        for target in re.findall(pattern, path.read_text(), re.MULTILINE):
            if target not in targets:
                problems.append(f"{path.name} runs `make {target}`; the Makefile has no {target}")
    return problems


CHECKS: list[Callable[[Repo], Problems]] = [
    check_yaml_files_parse,
    check_kustomization_applies_every_manifest,
    check_k8s_objects_are_named_once,
    check_selectors_select_pods,
    check_service_target_ports_exist,
    check_workloads_run_unprivileged_with_resources_and_probes,
    check_compose_references_resolve,
    check_make_targets_named_exist,
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
def test_the_repository_passes(check: Callable[[Repo], Problems]) -> None:
    assert check(REPO) == []


def test_the_image_runs_as_a_fixed_uid() -> None:
    """The pods' runAsUser is compared with it: a uid lookup that finds nothing would pass
    vacuously."""
    assert dockerfile_uid(REPO) not in (None, 0)


def test_ci_runs_its_script() -> None:
    import os

    assert os.access(REPO.root / ".ci" / "run", os.X_OK), ".ci/run is not executable"


def test_kustomize_builds_the_manifests() -> None:
    assert shutil.which("kubectl"), (
        "kubectl is part of this project's machine image and renders the kustomization; "
        "install kubectl to run this check"
    )
    result = subprocess.run(
        ["kubectl", "kustomize", str(REPO.k8s_dir)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    built = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    assert {doc["metadata"].get("namespace") for doc in built if doc["kind"] != "Namespace"} == {
        REPO.kustomization["namespace"]
    }
