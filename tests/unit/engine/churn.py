"""A cluster history (node and pod adds, updates, deletes) and what every default plugin says about it.

Used by the long-lived-equals-fresh property test: the same objects fed to one
ClusterState change by change, and to a ClusterState built fresh from the
survivors, must give every plugin the same answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.runtime import Framework, build_framework
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.profiles import default_profile_config
from tests.builders import make_node, make_pod

NODE_NAMES = ("n0", "n1", "n2", "n3")
POD_UIDS = ("p0", "p1", "p2", "p3", "p4", "p5")
ZONES = ("z1", "z2", "z3")
# Image entries as a node lists them: several names for one image, tags, digests.
IMAGES = (
    ("nginx:latest",),
    ("redis:7", "docker.io/library/redis:7"),
    ("example.com:5000/app:latest",),
)
MIB = 1024 * 1024
IMAGE_SIZES = (5 * MIB, 100 * MIB, 700 * MIB, 2500 * MIB)
TAINTS = (
    ("dedicated", "db", "NoSchedule"),
    ("spot", "", "PreferNoSchedule"),
    ("gpu", "", "NoExecute"),
)


@st.composite
def node_writes(draw: st.DrawFn) -> tuple[str, ...]:
    """A node added or replaced: everything about it may differ from before."""
    name = draw(st.sampled_from(NODE_NAMES))
    builder = make_node(name)
    resources: dict[str, str | int] = {
        "cpu": draw(st.sampled_from(["2", "4", "8"])),
        "memory": draw(st.sampled_from(["4Gi", "16Gi"])),
        "pods": draw(st.sampled_from([3, 110])),
    }
    if draw(st.integers(0, 4)) == 0:
        resources["example_com__gpu"] = draw(st.sampled_from([1, 4]))
    builder.capacity(**resources)
    if draw(st.booleans()):
        builder.zone(draw(st.sampled_from(ZONES)))
    for key in ("tier", "size"):
        value = draw(st.sampled_from([None, "a", "b", "3", "12"]))
        if value is not None:
            builder.label(key, value)
    for key, value, effect in draw(st.lists(st.sampled_from(TAINTS), max_size=2, unique=True)):
        builder.taint(key, value, effect)
    builder.unschedulable(draw(st.integers(0, 5)) == 0)
    images = draw(st.lists(st.sampled_from(range(len(IMAGES))), max_size=3, unique=True))
    sizes = [draw(st.sampled_from(IMAGE_SIZES)) for _ in images]
    raw = builder.obj()
    raw["status"]["images"] = [
        {"names": list(IMAGES[index]), "sizeBytes": size}
        for index, size in zip(images, sizes, strict=True)
    ]
    return ("node", name, raw)  # type: ignore[return-value]


@st.composite
def pod_writes(draw: st.DrawFn) -> tuple[str, ...]:
    uid = draw(st.sampled_from(POD_UIDS))
    builder = make_pod(f"pod-{uid}", draw(st.sampled_from(["default", "other"]))).uid(uid)
    builder.node(draw(st.sampled_from([*NODE_NAMES, "gone"])))
    builder.labels(app=draw(st.sampled_from(["a", "b"])))
    builder.req(cpu=draw(st.sampled_from(["100m", "1", "3"])), memory="1Gi")
    if draw(st.integers(0, 3)) == 0:
        builder.req(example_com__gpu=1)
    if draw(st.booleans()):
        builder.host_port(8080)
    choice = draw(st.integers(0, 4))
    if choice == 0:
        builder.anti_affinity("kubernetes.io/hostname", app="b")
    elif choice == 1:
        builder.pod_affinity(
            "podAffinity",
            {
                "labelSelector": {"matchLabels": {"app": "a"}},
                "topologyKey": "topology.kubernetes.io/zone",
            },
            weight=10,
        )
    if draw(st.integers(0, 5)) == 0:
        builder.terminating()
    return ("pod", uid, builder.obj())  # type: ignore[return-value]


change_st = st.one_of(
    node_writes(),
    node_writes(),
    st.tuples(st.just("delete-node"), st.sampled_from(NODE_NAMES)),
    pod_writes(),
    st.tuples(st.just("delete-pod"), st.sampled_from(POD_UIDS)),
)
# Several changes land between two decisions, as in a busy informer queue.
history_st = st.lists(st.lists(change_st, min_size=1, max_size=4), min_size=1, max_size=12)


def probe_pods() -> list[Pod]:
    """Pods that make every default plugin say something."""
    images = (
        make_pod("images")
        .image("nginx")
        .container("redis:7", cpu="100m")
        .container("example.com:5000/app")
        .req(cpu="500m", memory="1Gi")
    )
    picky = (
        make_pod("picky")
        .labels(app="a")
        .req(cpu="1", memory="2Gi")
        .host_port(8080)
        .node_affinity_in("size", "2", operator="Gt")
        .preferred_node_term(
            5, {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]}
        )
        .toleration("dedicated", "Equal", "db", "NoSchedule")
        .anti_affinity("kubernetes.io/hostname", app="a")
        .pod_affinity(
            "podAffinity",
            {
                "labelSelector": {"matchLabels": {"app": "b"}},
                "topologyKey": "topology.kubernetes.io/zone",
            },
            weight=20,
        )
        .spread("topology.kubernetes.io/zone", selector={"matchLabels": {"app": "a"}})
    )
    spreading = (
        make_pod("spreading")
        .labels(app="b")
        .req(example_com__gpu=1)
        .image("nginx")
        .toleration("gpu", "Exists")
        .spread(
            "kubernetes.io/hostname",
            when="ScheduleAnyway",
            selector={"matchLabels": {"app": "b"}},
            nodeTaintsPolicy="Honor",
        )
        .spread("topology.kubernetes.io/zone", max_skew=2, selector={"matchLabels": {"app": "a"}})
        .affinity("topology.kubernetes.io/zone", app="a")
    )
    return [images.build(), picky.build(), spreading.build()]


@dataclass
class Objects:
    """The surviving objects, in the order they were last written."""

    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    pods: dict[str, dict[str, Any]] = field(default_factory=dict)

    def apply(self, change: tuple[Any, ...], cluster: ClusterState) -> None:
        kind, key = change[0], change[1]
        if kind == "node":
            raw = self._consistent_image_sizes(key, change[2])
            self.nodes.pop(key, None)
            self.nodes[key] = raw
            cluster.upsert_node(Node.from_dict(raw))
        elif kind == "delete-node":
            self.nodes.pop(key, None)
            cluster.remove_node(key)
        elif kind == "pod":
            self.pods.pop(key, None)
            self.pods[key] = change[2]
            cluster.add_pod(Pod.from_dict(change[2]))
        else:
            self.pods.pop(key, None)
            cluster.remove_pod(key)

    def _consistent_image_sizes(self, name: str, raw: dict[str, Any]) -> dict[str, Any]:
        # Nodes listing an image at the same time report one size for it: kube-scheduler
        # keeps the first reporter's size, so otherwise even it would depend on history.
        # Once no node lists an image, it may come back with another size.
        known = {
            image_name: image["sizeBytes"]
            for other, node in self.nodes.items()
            if other != name
            for image in node["status"].get("images", [])
            for image_name in image["names"]
        }
        for image in raw["status"].get("images", []):
            sizes = [known[n] for n in image["names"] if n in known]
            if sizes:
                image["sizeBytes"] = sizes[0]
        return raw

    def fresh(self) -> ClusterState:
        cluster = ClusterState()
        for raw in self.nodes.values():
            cluster.upsert_node(Node.from_dict(raw))
        for raw in self.pods.values():
            cluster.add_pod(Pod.from_dict(raw))
        return cluster


def default_framework() -> Framework:
    return build_framework(default_profile_config())


def _by_name(cluster: ClusterState) -> tuple[NodeSlots, list[str]]:
    names = sorted(node.name for node in cluster.nodes())
    slots = np.asarray([cluster.slot_of(name) for name in names], dtype=np.intp)
    return slots, names


def answers(framework: Framework, cluster: ClusterState, pod: Pod) -> dict[str, object]:
    """Every PreFilter, Filter, PreScore and (normalised) Score answer, per plugin and node name.

    Every plugin judges every node (no stopping at the first rejection), so that a
    difference anywhere shows.
    """
    slots, names = _by_name(cluster)
    state = CycleState(cluster)
    said: dict[str, object] = {}
    unfit: set[str] = set()
    for plugin in framework.pre_filter:
        result = plugin.pre_filter(state, pod)
        said[f"PreFilter/{plugin.name}"] = (
            result.status.code,
            result.status.reasons,
            result.node_names,
        )
        if not result.status.is_success:
            unfit.add(plugin.name)
    for plugin in framework.filter:
        if plugin.name in unfit:
            continue
        verdicts = plugin.filter(state, pod, slots)
        said[f"Filter/{plugin.name}"] = {
            name: (int(verdicts.codes[i]), verdicts.reasons_at(i) if verdicts.codes[i] else ())
            for i, name in enumerate(names)
        }
    skipped: set[str] = set()
    for plugin in framework.pre_score:
        status = plugin.pre_score(state, pod, slots)
        said[f"PreScore/{plugin.name}"] = (status.code, status.reasons)
        if not status.is_success:
            skipped.add(plugin.name)
    for plugin in framework.score:
        if plugin.name in skipped:
            continue
        scores = plugin.score(state, pod, slots)
        normalize = getattr(plugin, "normalize_scores", None)
        if normalize is not None:
            scores = normalize(state, pod, slots, scores)
        said[f"Score/{plugin.name}"] = dict(zip(names, np.asarray(scores).tolist(), strict=True))
    return said
