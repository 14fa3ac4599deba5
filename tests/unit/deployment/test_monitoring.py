"""Prometheus and Grafana in compose load the repository's configuration, and the dashboard
charts metrics the code exports, in a form that means something.

A dashboard querying a metric nobody exports shows "No data" forever; a histogram bucket
summed without `le` is a meaningless number; neither is visible until someone looks.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from prometheus_client.metrics import MetricWrapperBase

from tests.unit.deployment.repo import REPO, Problems, Repo, code_files, command_words, mounts_of

PROMETHEUS_PORT = 9090  # the image's default --web.listen-address
PROMQL_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool"}
PROMQL_KEYWORDS |= {"and", "or", "unless", "offset", "inf", "nan"}
SERIES_SUFFIXES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "summary": ("_sum", "_count", "_created"),
}


@cache
def exported_metrics() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Every series name the code's metrics export -> (metric name, its label names)."""
    modules = {
        ".".join(path.relative_to(REPO.root).with_suffix("").parts)
        for path in code_files()
        if re.search(r"^\w+ = (Counter|Gauge|Histogram|Summary)\(", path.read_text(), re.M)
    }
    series = {}
    for module in sorted(modules):
        for value in vars(importlib.import_module(module)).values():
            if isinstance(value, MetricWrapperBase):
                for suffix in SERIES_SUFFIXES[str(value._type)]:
                    series[value._name + suffix] = (value._name, tuple(value._labelnames))
    return series


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


def groupings(expr: str) -> list[set[str]]:
    return [
        {label.strip() for label in labels.split(",") if label.strip()}
        for labels in re.findall(r"\bby\s*\(([^)]*)\)", expr)
    ]


def dashboards(repo: Repo) -> dict[str, dict[str, Any]]:
    return {
        p.name: json.loads(p.read_text()) for p in sorted(repo.grafana_dashboards.glob("*.json"))
    }


def panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


def exprs(dashboard: dict[str, Any]) -> list[str]:
    return [t["expr"] for p in panels(dashboard) for t in p.get("targets", []) if t.get("expr")]


def bind_target(repo: Repo, service: dict[str, Any], host_path: Path) -> str | None:
    for kind, source, target in mounts_of(service):
        if kind == "bind" and (repo.root / source).resolve() == host_path.resolve():
            return target
    return None


def services_with_image(repo: Repo, image: str) -> list[dict[str, Any]]:
    return [s for s in repo.services.values() if image in s.get("image", "").split(":")[0]]


def check_prometheus_and_grafana_load_the_repository_files(repo: Repo) -> Problems:
    """Prometheus reads the mounted prometheus.yml; Grafana reads the mounted provisioning,
    whose data source is the Prometheus service and whose dashboard provider reads the
    directory the dashboards are mounted at."""
    problems = []
    for prometheus in services_with_image(repo, "prometheus"):
        flags = [a for a in command_words(prometheus) if a.startswith("--config.file=")]
        expected = flags[-1].split("=", 1)[1] if flags else "/etc/prometheus/prometheus.yml"
        if bind_target(repo, prometheus, repo.prometheus_config) != expected:
            problems.append(f"prometheus.yml is not mounted at {expected}")
    grafanas = services_with_image(repo, "grafana")
    if not grafanas or not services_with_image(repo, "prometheus"):
        return problems + ["compose runs no Prometheus or no Grafana"]
    grafana = grafanas[0]
    if bind_target(repo, grafana, repo.grafana_provisioning) != "/etc/grafana/provisioning":
        problems.append("the provisioning directory is not mounted at /etc/grafana/provisioning")
    datasources = repo.yaml(repo.grafana_provisioning / "datasources" / "prometheus.yml")
    for source in [d for d in datasources["datasources"] if d["type"] == "prometheus"]:
        url = urlsplit(source["url"])
        target = repo.services.get(url.hostname or "", {})
        if "prometheus" not in target.get("image", "") or url.port != PROMETHEUS_PORT:
            problems.append(f"data source {source['url']} is not the Prometheus service")
    mounted = bind_target(repo, grafana, repo.grafana_dashboards)
    for path in (repo.grafana_provisioning / "dashboards").glob("*.y*ml"):
        paths = {p["options"]["path"] for p in repo.yaml(path)["providers"]}
        if mounted not in paths:
            problems.append(f"{path.name} reads {sorted(paths)}, dashboards are at {mounted}")
    home = grafana.get("environment", {}).get("GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH")
    if home and (
        mounted is None
        or Path(home).parent != Path(mounted)
        or not (repo.grafana_dashboards / Path(home).name).is_file()
    ):
        problems.append(f"the home dashboard {home} is not a mounted dashboard")
    return problems


def check_dashboards_chart_exported_metrics_meaningfully(repo: Repo) -> Problems:
    """Every queried series is one the code exports; a labelled metric is split by all its
    labels in some panel; a histogram's buckets are only read by histogram_quantile over a
    sum by (le)."""
    problems, exported = [], exported_metrics()
    for file, dashboard in dashboards(repo).items():
        queries = exprs(dashboard)
        if not queries:
            problems.append(f"{file} has no queries")
        charted: dict[str, list[str]] = {}
        for expr in queries:
            for name in promql_metric_names(expr):
                if name not in exported:
                    problems.append(f"{file} queries {name}, which the code does not export")
                    continue
                charted.setdefault(exported[name][0], []).append(expr)
                quantile = re.search(r"histogram_quantile\(", expr)
                by_le = any("le" in group for group in groupings(expr))
                if name.endswith("_bucket") and not (quantile and by_le):
                    problems.append(f"{file}: {name} outside histogram_quantile(..by (le)): {expr}")
        for metric, found in charted.items():
            labels = set(next(v[1] for v in exported.values() if v[0] == metric))
            if labels and not any(labels <= g for e in found for g in groupings(e)):
                problems.append(f"{file}: no panel splits {metric} by {sorted(labels)}")
    return problems


def check_dashboard_panels_resolve(repo: Repo) -> Problems:
    """A panel's data source is the dashboard's datasource variable or a provisioned uid
    (else Grafana shows "datasource not found"), and panel ids are unique."""
    datasources = repo.yaml(repo.grafana_provisioning / "datasources" / "prometheus.yml")
    provisioned = {ds.get("uid") for ds in datasources["datasources"]}
    problems = []
    for file, dashboard in dashboards(repo).items():
        variables = {
            form
            for v in dashboard.get("templating", {}).get("list", [])
            if v.get("type") == "datasource"
            for form in (f"${{{v['name']}}}", f"${v['name']}")
        }
        ids = [panel["id"] for panel in panels(dashboard)]
        if len(ids) != len(set(ids)):
            problems.append(f"{file}: panel ids repeat")
        for panel in panels(dashboard):
            sources = [panel.get("datasource")] + [
                t.get("datasource") for t in panel.get("targets", [])
            ]
            for source in sources:
                if isinstance(source, dict) and source.get("uid") not in variables | provisioned:
                    problems.append(f"{file}: {panel.get('title')!r} uses unknown {source}")
    return problems


CHECKS: list[Callable[[Repo], Problems]] = [
    check_prometheus_and_grafana_load_the_repository_files,
    check_dashboards_chart_exported_metrics_meaningfully,
    check_dashboard_panels_resolve,
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
def test_the_repository_passes(check: Callable[[Repo], Problems]) -> None:
    assert check(REPO) == []


def test_promql_metric_names_finds_selectors_not_functions_or_labels() -> None:
    expr = (
        'histogram_quantile(0.99, sum by (le) (rate(a_seconds_bucket{job="x"}[$__rate_interval])))'
        " / sum(b_total) without (instance)"
    )
    assert promql_metric_names(expr) == {"a_seconds_bucket", "b_total"}


def test_the_code_exports_the_metrics_of_each_process() -> None:
    """An empty export list would make every dashboard query look foreign."""
    metrics = {metric for metric, _ in exported_metrics().values()}
    for prefix in ("memstream_events_", "memstream_projector_", "memstream_http_"):
        assert any(m.startswith(prefix) for m in metrics), prefix
