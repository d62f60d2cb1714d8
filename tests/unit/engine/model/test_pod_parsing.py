"""Pods and nodes parsed once: requests computed like kube-scheduler, bad input named by object and field."""

from __future__ import annotations

from typing import Any

import pytest

from berth.engine.errors import InvalidObjectError
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from tests.builders import make_node, make_pod


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {
                "metadata": {"name": "p", "namespace": "ns"},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]},
            },
            "Pod ns/p: spec.containers[0].resources.requests.cpu: invalid quantity 'lots'",
        ),
        (
            {
                "metadata": {"name": "p"},
                "spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"memory": "-1Gi"}}}]
                },
            },
            "Pod default/p: spec.containers[0].resources.requests.memory: quantity '-1Gi' must not be negative",
        ),
        (
            {
                "metadata": {"name": "p"},
                "spec": {"tolerations": [{"key": "k", "operator": "Maybe"}]},
            },
            "Pod default/p: spec.tolerations[0].operator: unknown operator 'Maybe'",
        ),
        (
            {
                "metadata": {"name": "p"},
                "spec": {
                    "topologySpreadConstraints": [
                        {"maxSkew": 0, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"}
                    ]
                },
            },
            "Pod default/p: spec.topologySpreadConstraints[0].maxSkew: must be at least 1, got 0",
        ),
        (
            {
                "metadata": {"name": "p"},
                "spec": {
                    "affinity": {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {"labelSelector": {}}
                            ]
                        }
                    }
                },
            },
            "Pod default/p: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: must be set",
        ),
        ({"metadata": {}, "spec": {}}, "Pod default/<unnamed>: metadata.name: must be set"),
        (
            {"metadata": {"name": "p"}, "spec": {"priority": "high"}},
            "Pod default/p: spec.priority: expected an integer, got 'high'",
        ),
        (
            {"metadata": {"name": "p"}, "spec": {"priority": 2**31}},
            "Pod default/p: spec.priority: 2147483648 is out of range for a 32-bit integer",
        ),
        (
            {
                "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c", "ports": [{"hostPort": 2**70}]}]},
            },
            "Pod default/p: spec.containers[0].ports[0].hostPort: 1180591620717411303424 is out "
            "of range for a 32-bit integer",
        ),
        (
            {"metadata": {"name": ["x"] * 10**6, "namespace": "ns" * 10**6}},
            f"Pod {'ns' * 50}.../[{', '.join([repr('x')] * 4)}, ...]: metadata.name: expected "
            f"a string, got [{', '.join([repr('x')] * 4)}, ...]",
        ),
        (
            {"metadata": {"name": "p"}, "spec": {"resourceClaims": [{"source": {}}]}},
            "Pod default/p: spec.resourceClaims[0].name: must be set",
        ),
    ],
    ids=[
        "bad-quantity",
        "negative",
        "bad-toleration-operator",
        "zero-skew",
        "no-topology-key",
        "no-name",
        "bad-priority",
        "priority-beyond-int32",
        "host-port-beyond-int32",
        "huge-values-quoted-briefly",
        "unnamed-resource-claim",
    ],
)
def test_malformed_pods_name_object_and_field(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidObjectError) as raised:
        Pod.from_dict(raw)
    assert str(raised.value) == message


def test_malformed_node_names_object_and_field() -> None:
    raw = make_node("n1").obj()
    raw["spec"]["taints"] = [{"key": "k", "effect": "Sometimes"}]
    with pytest.raises(InvalidObjectError) as raised:
        Node.from_dict(raw)
    assert str(raised.value) == "Node n1: spec.taints[0].effect: unknown taint effect 'Sometimes'"


def test_node_without_allocatable_falls_back_to_capacity() -> None:
    raw = make_node("n1").obj()
    del raw["status"]["allocatable"]
    assert Node.from_dict(raw).allocatable == {"cpu": 4000, "memory": 32 * 2**30, "pods": 110}


@pytest.mark.parametrize(
    ("builder", "cpu", "nonzero_cpu", "nonzero_memory"),
    [
        (make_pod("p"), None, 100, 200 * 2**20),
        (make_pod("p").req(cpu="0"), None, 0, 200 * 2**20),
        (make_pod("p").req(cpu="500m").container(cpu="250m"), 750, 750, 400 * 2**20),
        (make_pod("p").req(cpu="1").init_container(cpu="2"), 2000, 2000, 200 * 2**20),
        (
            make_pod("p")
            .req(cpu="1")
            .init_container(sidecar=True, cpu="500m")
            .init_container(cpu="1"),
            1500,
            1500,
            400 * 2**20,
        ),
        (make_pod("p").req(cpu="1").set("spec.overhead", {"cpu": "100m"}), 1100, 1100, 200 * 2**20),
        (
            make_pod("p").req(cpu="1").set("spec.resources", {"requests": {"cpu": "3"}}),
            3000,
            3000,
            200 * 2**20,
        ),
    ],
    ids=[
        "no-requests",
        "explicit-zero-stays-zero",
        "two-containers",
        "init-dominates",
        "sidecar-then-init",
        "overhead",
        "pod-level",
    ],
)
def test_requests_and_scoring_defaults(
    builder: Any, cpu: int | None, nonzero_cpu: int, nonzero_memory: int
) -> None:
    pod = builder.build()
    assert pod.requests.get("cpu") == cpu
    assert (pod.nonzero_cpu, pod.nonzero_memory) == (nonzero_cpu, nonzero_memory)


def test_limits_default_missing_requests_like_the_api_server() -> None:
    raw = make_pod("p").obj()
    raw["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "2", "example.com/gpu": "1"}}
    pod = Pod.from_dict(raw)
    assert pod.requests == {"cpu": 2000, "example.com/gpu": 1}


def test_match_label_keys_fold_into_the_selector() -> None:
    pod = (
        make_pod("p")
        .label("app", "web")
        .label("rev", "7")
        .pod_affinity(
            "podAntiAffinity",
            {
                "labelSelector": {"matchLabels": {"app": "web"}},
                "topologyKey": "kubernetes.io/hostname",
                "matchLabelKeys": ["rev"],
            },
        )
        .build()
    )
    (term,) = pod.required_anti_affinity
    assert term.selector is not None
    assert term.selector.matches({"app": "web", "rev": "7"})
    assert not term.selector.matches({"app": "web", "rev": "8"})
    assert term.namespaces == frozenset({"default"})
