"""Hypothesis strategies for raw v1 Nodes as a watch event carries them.

Valid per the API's validation, but extreme: names at 253 characters, dozens of labels with
prefixed keys, taints of every effect, allocatable from ``0`` to ``8Ei`` in any spelling,
nodes that report only capacity, images with huge sizes.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.unit.fuzz.strategies.api_values import (
    dns_subdomains,
    label_values,
    labels,
    qualified_names,
    quantities,
    unicode_text,
)

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
EXTENDED_RESOURCES = ("example.com/gpu", "hugepages-2Mi", "attachable-volumes-csi-x")


@st.composite
def taints(draw: st.DrawFn) -> list[dict[str, Any]]:
    """At most one taint per (key, effect), as the API requires."""
    drawn: dict[tuple[str, str], dict[str, Any]] = {}
    if draw(st.integers(0, 2)):
        return []
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.one_of(st.sampled_from(("dedicated", "gpu", "spot")), qualified_names()))
        effect = draw(st.sampled_from(TAINT_EFFECTS))
        taint: dict[str, Any] = {"key": key, "effect": effect}
        value = draw(st.one_of(st.none(), st.sampled_from(("", "yes", "7")), label_values()))
        if value is not None:
            taint["value"] = value
        drawn[(key, effect)] = taint
    return list(drawn.values())


@st.composite
def resource_lists(draw: st.DrawFn, *, plausible: st.SearchStrategy[str]) -> dict[str, Any]:
    """Allocatable or capacity: usually plausible amounts, sometimes extreme or missing ones."""
    resources: dict[str, Any] = {}
    for name, usual in (
        ("cpu", "4"),
        ("memory", "16Gi"),
        ("pods", "110"),
        ("ephemeral-storage", "100Gi"),
    ):
        odds = draw(st.integers(0, 9))
        if odds == 0:
            continue
        resources[name] = usual if odds > 3 else draw(st.one_of(plausible, quantities()))
    for name in draw(st.lists(st.sampled_from(EXTENDED_RESOURCES), unique=True, max_size=2)):
        resources[name] = draw(st.one_of(plausible, quantities()))
    return resources


def _plausible_node_amounts() -> st.SearchStrategy[str]:
    return st.sampled_from(("4", "8", "16Gi", "110", "32Gi", "3500m", "1", "2"))


@st.composite
def images(draw: st.DrawFn) -> list[dict[str, Any]]:
    names = st.sampled_from(("nginx:1.25", "docker.io/library/redis:7", "busybox", "app@sha256:ab"))
    return [
        {
            "names": draw(st.lists(names, min_size=1, max_size=2, unique=True)),
            "sizeBytes": draw(st.one_of(st.integers(0, 2**31), st.just(2**63 - 1))),
        }
        for _ in range(draw(st.integers(0, 2)))
    ]


@st.composite
def raw_nodes(draw: st.DrawFn, *, name: str | None = None) -> dict[str, Any]:
    node_name = name if name is not None else draw(dns_subdomains())
    node_labels = draw(labels(max_size=6))
    if len(node_name) <= 63:
        node_labels["kubernetes.io/hostname"] = node_name
    status: dict[str, Any] = {"images": draw(images())}
    # The kubelet reports both; an old or odd node may report only capacity.
    resources = draw(resource_lists(plausible=_plausible_node_amounts()))
    status["allocatable" if draw(st.integers(0, 4)) else "capacity"] = resources
    spec: dict[str, Any] = {}
    node_taints = draw(taints())
    if node_taints:
        spec["taints"] = node_taints
    if draw(st.integers(0, 5)) == 0:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": node_name,
            "uid": f"node-uid-{node_name[:40]}",
            "resourceVersion": str(draw(st.integers(1, 2**40))),
            "labels": node_labels,
            "annotations": {"example.com/note": draw(unicode_text())},
        },
        "spec": spec,
        "status": status,
    }


@st.composite
def node_sets(draw: st.DrawFn, *, max_size: int = 6) -> list[dict[str, Any]]:
    """Nodes with distinct names (an empty cluster is legal too)."""
    if draw(st.integers(0, 9)) == 0:
        return []
    names = draw(st.lists(dns_subdomains(), min_size=1, max_size=max_size, unique=True))
    return [draw(raw_nodes(name=name)) for name in names]
