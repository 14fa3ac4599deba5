"""The Dockerfile and .dockerignore build an image that runs what pyproject.toml declares.

The image is the one artefact compose and Kubernetes share: its base must run the package's
Python, its build context must hold what `pip install .` reads, and it must open the ports the
processes it runs listen on.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable

import pytest

from tests.unit.deployment.repo import (
    REPO,
    Problems,
    Repo,
    cli_commands,
    served_ports,
    try_resolve,
    variables_the_code_reads,
)


def check_stages_share_a_supported_python(repo: Repo) -> Problems:
    """The runtime stage copies the build stage's virtualenv, so both must be one Python, and
    that Python must satisfy requires-python."""
    bases = {args.split()[0] for args in repo.instructions("FROM")}
    python_bases = {b for b in bases if re.fullmatch(r"python:\d+\.\d+[\w.-]*", b)}
    if len(python_bases) != 1 or bases != python_bases:
        return [f"stages build on {sorted(bases)}, not on one python:X.Y image"]
    (base,) = python_bases
    version = tuple(int(n) for n in re.findall(r"\d+", base.split(":")[1])[:2])
    floor = re.fullmatch(r">=\s*(\d+)\.(\d+)", repo.pyproject["project"]["requires-python"])
    if floor is None or version < (int(floor[1]), int(floor[2])):
        return [f"{base} does not satisfy requires-python {floor and floor[0]}"]
    return []


def check_image_installs_and_runs_the_package(repo: Repo) -> Problems:
    """The image installs this checkout, starts its console script, and needs no JRE: it talks
    to an external Kafka."""
    problems = []
    runs = " ".join(repo.instructions("RUN"))
    if not re.search(r"\bpip install (?:\S+ )*\.(?:\s|$)", runs):
        problems.append("no RUN installs the checkout with `pip install .`")
    if re.search(r"(?i)\b(openjdk|default-jre|temurin|java)\b", runs):
        problems.append("the image installs Java")
    entrypoints = repo.instructions("ENTRYPOINT", runtime_only=True)
    scripts = list(repo.pyproject["project"]["scripts"])
    if not entrypoints or json.loads(entrypoints[-1])[:1] != scripts[:1]:
        problems.append(f"ENTRYPOINT is not the console script {scripts[:1]}")
    if repo.image_cmd not in cli_commands():
        problems.append(f"CMD {repo.image_cmd!r} is not a memstream command")
    users = repo.instructions("USER", runtime_only=True)
    if not users or users[-1].split(":")[0] in ("root", "0"):
        problems.append("the runtime stage runs as root")
    return problems


def check_image_env_is_settings_and_exposes_their_ports(repo: Repo) -> Problems:
    """The image's MEMSTREAM_* ENV are settings the code reads, parse, and every port the
    processes listen on with them is EXPOSEd."""
    problems = []
    unknown = {n for n in repo.image_env if n.startswith("MEMSTREAM_")} - variables_the_code_reads()
    problems += [f"ENV {name} is no setting the code reads" for name in sorted(unknown)]
    settings = try_resolve(repo.image_env, "Dockerfile ENV", problems)
    if settings is None:
        return problems
    exposed = {int(p.split("/")[0]) for args in repo.instructions("EXPOSE") for p in args.split()}
    for command in sorted(cli_commands()):
        for name, ports in served_ports(settings, command).items():
            problems += [f"{command}'s {name} port {p} is not EXPOSEd" for p in ports - exposed]
    return problems


def dockerignore_excludes(repo: Repo, path: str) -> bool:
    """Whether .dockerignore keeps ``path`` out of the build context (last match wins)."""
    excluded = False
    for raw in (repo.root / ".dockerignore").read_text().splitlines():
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


def files_pip_install_reads(repo: Repo) -> list[str]:
    """pyproject.toml, its readme and license files, and every file of the packages it finds
    (sources and declared package data)."""
    project = repo.pyproject["project"]
    setuptools = repo.pyproject["tool"]["setuptools"]
    paths = {repo.root / "pyproject.toml", repo.root / project["readme"]}
    for pattern in project.get("license-files", []):
        paths |= set(repo.root.glob(pattern))
    for include in setuptools["packages"]["find"]["include"]:
        for top in repo.root.glob(include.rstrip("*") + "*"):
            if top.is_dir() and not top.name.endswith(".egg-info"):
                paths |= {p for p in top.rglob("*.py") if "__pycache__" not in p.parts}
    for package, patterns in setuptools.get("package-data", {}).items():
        for pattern in patterns:
            paths |= set((repo.root / package.replace(".", "/")).glob(pattern))
    return sorted(str(p.relative_to(repo.root)) for p in paths if p.is_file())


def check_dockerignore_keeps_the_sources_in_and_local_state_out(repo: Repo) -> Problems:
    needed = files_pip_install_reads(repo)
    problems = [f".dockerignore drops {p}" for p in needed if dockerignore_excludes(repo, p)]
    for path in (".git/HEAD", ".venv/bin/python", "memstream/__pycache__/x.pyc"):
        if not dockerignore_excludes(repo, path):
            problems.append(f".dockerignore lets {path} into the build context")
    return problems


CHECKS: list[Callable[[Repo], Problems]] = [
    check_stages_share_a_supported_python,
    check_image_installs_and_runs_the_package,
    check_image_env_is_settings_and_exposes_their_ports,
    check_dockerignore_keeps_the_sources_in_and_local_state_out,
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
def test_the_repository_passes(check: Callable[[Repo], Problems]) -> None:
    assert check(REPO) == []


def test_the_build_context_check_sees_the_package_and_its_data() -> None:
    """An empty file list would make the .dockerignore check pass vacuously."""
    needed = files_pip_install_reads(REPO)
    assert {"pyproject.toml", "README.md", "streams/config/settings.py"} <= set(needed)
    assert any(p.startswith("projections/migrations/") for p in needed)
    assert any(p.endswith(".avsc") for p in needed)
