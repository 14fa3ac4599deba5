"""Compose and Kubernetes run a Schema Registry and point memstream at it (issue 40): the URL
each sets names a service that exists and listens on that port, memstream's processes start
after it, and on Kubernetes the registry has a Kafka user for its `_schemas` topic and a
network policy that lets memstream's pods and labelled analytics pods in."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

REPO = Path(__file__).resolve().parents[3]


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def k8s_objects() -> list[dict[str, Any]]:
    kustomization = yaml.safe_load((REPO / "k8s" / "kustomization.yaml").read_text())
    return [d for name in kustomization["resources"] for d in documents(REPO / "k8s" / name)]


def test_compose_runs_a_registry_where_memstream_is_told_it_is() -> None:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    env = compose["x-memstream-env"]
    url = urlsplit(env["MEMSTREAM_SCHEMA_REGISTRY_URL"])
    registry = compose["services"][url.hostname]

    assert env["MEMSTREAM_WIRE_FORMAT"] == "confluent"
    assert any(str(p).endswith(f":{url.port}") for p in registry["ports"])
    assert f"http://0.0.0.0:{url.port}" in registry["environment"]["SCHEMA_REGISTRY_LISTENERS"]
    assert "healthcheck" in registry
    for service in ("worker", "projector", "api"):
        wanted = compose["services"][service]["depends_on"][url.hostname]
        assert wanted == {"condition": "service_healthy"}, service


def test_kubernetes_runs_a_registry_behind_the_configmap_s_url() -> None:
    objects = k8s_objects()
    config = next(o for o in objects if o["kind"] == "ConfigMap")["data"]
    url = urlsplit(config["MEMSTREAM_SCHEMA_REGISTRY_URL"])
    service = next(
        o for o in objects if o["kind"] == "Service" and o["metadata"]["name"] == url.hostname
    )
    deployment = next(
        o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == url.hostname
    )

    assert config["MEMSTREAM_WIRE_FORMAT"] == "confluent"
    assert [p["port"] for p in service["spec"]["ports"]] == [url.port]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert [p["containerPort"] for p in container["ports"]] == [url.port]


def test_the_registry_s_kafka_user_may_use_its_topic_and_nothing_of_memstream_s() -> None:
    users = {o["metadata"]["name"]: o for o in k8s_objects() if o["kind"] == "KafkaUser"}
    acls = users["memstream-schema-registry"]["spec"]["authorization"]["acls"]
    topics = {a["resource"]["name"] for a in acls if a["resource"]["type"] == "topic"}

    assert topics == {"_schemas"}


def test_memstream_s_pods_and_labelled_analytics_pods_may_reach_the_registry() -> None:
    policy = next(
        o
        for o in k8s_objects()
        if o["kind"] == "NetworkPolicy"
        and o["spec"]["podSelector"].get("matchLabels", {}).get("app.kubernetes.io/name")
        == "memstream-schema-registry"
    )
    sources = policy["spec"]["ingress"][0]["from"]
    ours = sources[0]["podSelector"]["matchExpressions"][0]["values"]

    assert set(ours) == {"memstream-worker", "memstream-projector", "memstream-api"}
    assert sources[1]["podSelector"]["matchLabels"] == {"memstream.io/registry-client": "true"}
