"""The benchmark's correctness gate: each kind of violation voids a run, a clean cluster does not."""

from __future__ import annotations

from typing import Any

import pytest
from bench.validator import parse_quantity, validate
from bench.workloads import (
    pod_default,
    pod_with_node_affinity,
    pod_with_pod_anti_affinity,
    pod_with_topology_spreading,
)


def _node(name: str, *, cpu: str = "4", zone: str | None = None) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name}
    if zone is not None:
        labels["topology.kubernetes.io/zone"] = zone
    return {
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}},
    }


def _placed(pod: dict[str, Any], node: str | None, namespace: str = "sched-1") -> dict[str, Any]:
    pod["metadata"]["namespace"] = namespace
    if node is not None:
        pod["spec"]["nodeName"] = node
    return pod


@pytest.mark.parametrize(
    ("text", "expected"),
    [("100m", "0.1"), ("4", "4"), ("500Mi", str(500 * 2**20)), ("32Gi", str(32 * 2**30))],
)
def test_quantities(text: str, expected: str) -> None:
    assert parse_quantity(text) == parse_quantity(expected)


def test_clean_cluster_passes() -> None:
    nodes = [_node("a"), _node("b")]
    pods = [_placed(pod_default(f"p{i}", "s"), "a" if i % 2 else "b") for i in range(10)]
    assert validate(pods, nodes).ok


def test_over_commit_is_a_violation() -> None:
    pods = [_placed(pod_default(f"p{i}", "s"), "a") for i in range(3)]
    result = validate(pods, [_node("a", cpu="200m")])
    assert [v.split(":")[0] for v in result.violations] == ["over-commit"]


def test_two_green_pods_on_one_host_is_a_violation() -> None:
    pods = [_placed(pod_with_pod_anti_affinity(f"p{i}", "s"), "a") for i in range(2)]
    result = validate(pods, [_node("a"), _node("b"), _node("c")])
    assert any(v.startswith("anti-affinity") for v in result.violations)


def test_node_affinity_mismatch_is_a_violation() -> None:
    pods = [_placed(pod_with_node_affinity("p", "s"), "a")]
    assert not validate(pods, [_node("a", zone="zone9")]).ok
    assert validate(pods, [_node("a", zone="zone1")]).ok


def test_spread_beyond_max_skew_is_a_violation() -> None:
    nodes = [_node("a", zone="moon-1"), _node("b", zone="moon-2")]
    pods = [_placed(pod_with_topology_spreading(f"p{i}", "s"), "a") for i in range(6)]
    assert any(v.startswith("topology spread") for v in validate(pods, nodes).violations)
    pods[0]["spec"]["nodeName"] = "b"
    assert validate(pods, nodes).ok


def test_pending_pod_that_fits_is_a_violation_and_one_that_cannot_is_not() -> None:
    nodes = [_node("a"), _node("b")]
    green_a = _placed(pod_with_pod_anti_affinity("g1", "s"), "a")
    pending = _placed(pod_with_pod_anti_affinity("g2", "s"), None)
    result = validate([green_a, pending], nodes)
    assert [v.split(":")[0] for v in result.violations] == ["pending pod fits"]
    green_b = _placed(pod_with_pod_anti_affinity("g3", "s"), "b")
    assert validate([green_a, green_b, pending], nodes).ok
