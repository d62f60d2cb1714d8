"""Shared builders and runners for the InterPodAffinity tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from berth.engine.cluster import ClusterState
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.interfaces import PluginArgs
from berth.engine.framework.status import Code
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.plugins.inter_pod_affinity import InterPodAffinity, new_plugin
from tests.builders import PodBuilder, make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
U = Code.UNSCHEDULABLE


def term(
    key: str,
    selector: dict[str, Any] | None = None,
    *,
    nil_selector: bool = False,
    namespaces: Sequence[str] = (),
    namespace_selector: dict[str, Any] | None = None,
    match_label_keys: Sequence[str] = (),
    mismatch_label_keys: Sequence[str] = (),
) -> dict[str, Any]:
    raw: dict[str, Any] = {"topologyKey": key}
    if not nil_selector:
        raw["labelSelector"] = {"matchLabels": selector or {}}
    if namespaces:
        raw["namespaces"] = list(namespaces)
    if namespace_selector is not None:
        raw["namespaceSelector"] = namespace_selector
    if match_label_keys:
        raw["matchLabelKeys"] = list(match_label_keys)
    if mismatch_label_keys:
        raw["mismatchLabelKeys"] = list(mismatch_label_keys)
    return raw


def zoned(name: str, zone: str | None, **labels: str) -> Node:
    builder = make_node(name).labels(**labels)
    if zone is not None:
        builder = builder.zone(zone)
    return builder.build()


@dataclass
class World:
    nodes: list[Node]
    pods: list[PodBuilder] = field(default_factory=list)
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)

    def cluster(self) -> ClusterState:
        cluster = ClusterState()
        for name, labels in self.namespaces.items():
            cluster.set_namespace(name, labels)
        for node in self.nodes:
            cluster.upsert_node(node)
        for pod in self.pods:
            cluster.add_pod(pod.build())
        return cluster


def three_nodes() -> list[Node]:
    """n1, n2 in zone a; n3 in zone b; n4 has no zone label."""
    return [zoned("n1", "a"), zoned("n2", "a"), zoned("n3", "b"), zoned("n4", None)]


def run_filter(
    cluster: ClusterState, pod: Pod, plugin: InterPodAffinity | None = None
) -> dict[str, tuple[Code, str] | None] | str:
    """ "skip" when PreFilter skips, else node name -> None (pass) or (code, reason)."""
    plugin = plugin or new_plugin(None)
    state = CycleState(cluster)
    result = plugin.pre_filter(state, pod)
    if result.status.is_skip:
        return "skip"
    assert result.status.is_success
    assert result.node_names is None
    slots = cluster.node_order()
    verdicts = plugin.filter(state, pod, slots)
    outcome: dict[str, tuple[Code, str] | None] = {}
    for index, slot in enumerate(slots.tolist()):
        name = cluster.node_at(slot).name
        if verdicts.codes[index] == 0:
            outcome[name] = None
        else:
            (reason,) = verdicts.reasons_at(index)
            outcome[name] = (Code(int(verdicts.codes[index])), reason)
    return outcome


def run_score(
    cluster: ClusterState, pod: Pod, args: PluginArgs | None = None
) -> tuple[dict[str, int], dict[str, int]] | str:
    """ "skip" when PreScore skips, else (raw, normalised) scores by node name."""
    plugin = new_plugin(args)
    state = CycleState(cluster)
    slots = cluster.node_order()
    status = plugin.pre_score(state, pod, slots)
    if status.is_skip:
        return "skip"
    assert status.is_success
    raw = plugin.score(state, pod, slots)
    normalized = plugin.normalize_scores(state, pod, slots, raw.copy())
    names = [cluster.node_at(s).name for s in slots.tolist()]
    return dict(zip(names, raw.tolist(), strict=True)), dict(
        zip(names, normalized.tolist(), strict=True)
    )


def web_pod(name: str, node: str, ns: str = "default", **labels: str) -> PodBuilder:
    return make_pod(name, ns).labels(app="web", **labels).node(node)
