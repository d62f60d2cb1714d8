"""InterPodAffinity: table-driven filter, score, args and queueing-hint cases."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from tests.builders import PodBuilder, make_node, make_pod

from berth.engine.cluster import ClusterState
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import Action, QueueingHint, Resource
from berth.engine.framework.interfaces import InvalidPluginArgsError, PluginArgs
from berth.engine.framework.status import Code
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.plugins.inter_pod_affinity import (
    REASON_AFFINITY_RULES_NOT_MATCH as AFFINITY,
)
from berth.engine.plugins.inter_pod_affinity import (
    REASON_ANTI_AFFINITY_RULES_NOT_MATCH as ANTI,
)
from berth.engine.plugins.inter_pod_affinity import (
    REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH as EXISTING,
)
from berth.engine.plugins.inter_pod_affinity import (
    InterPodAffinity,
    InterPodAffinityArgs,
    new_plugin,
)
from berth.engine.plugins.inter_pod_affinity.queueing import (
    after_assigned_pod_change,
    after_node_change,
    after_target_pod_label_update,
)

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


# ---------------------------------------------------------------------- filter


@dataclass
class FilterCase:
    id: str
    pod: PodBuilder
    world: World
    want: dict[str, tuple[Code, str] | None] | str


def _web(name: str, node: str, ns: str = "default", **labels: str) -> PodBuilder:
    return make_pod(name, ns).labels(app="web", **labels).node(node)


FILTER_CASES = [
    FilterCase(
        "no terms and nothing existing: skip",
        make_pod("p").labels(app="web"),
        World(three_nodes(), [_web("e1", "n1")]),
        "skip",
    ),
    FilterCase(
        "existing anti-affinity that does not match the pod: skip",
        make_pod("p").labels(app="db"),
        World(
            three_nodes(),
            [_web("e1", "n1").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}))],
        ),
        "skip",
    ),
    FilterCase(
        "existing anti-affinity whose node lacks the key is not counted: skip",
        make_pod("p").labels(app="web"),
        World(
            three_nodes(),
            [_web("e1", "n4").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}))],
        ),
        "skip",
    ),
    FilterCase(
        "affinity: only nodes in the matching pod's zone pass",
        make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "web"})),
        World(three_nodes(), [_web("e1", "n1"), make_pod("e2").labels(app="db").node("n3")]),
        {"n1": None, "n2": None, "n3": (UU, AFFINITY), "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "affinity: first pod passes on nodes carrying the key",
        make_pod("p").labels(app="web").pod_affinity("podAffinity", term(ZONE, {"app": "web"})),
        World(three_nodes(), [make_pod("e1").labels(app="db").node("n1")]),
        {"n1": None, "n2": None, "n3": None, "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "affinity: no first-pod exception when the pod does not match its own terms",
        make_pod("p").labels(app="db").pod_affinity("podAffinity", term(ZONE, {"app": "web"})),
        World(three_nodes(), []),
        {"n1": (UU, AFFINITY), "n2": (UU, AFFINITY), "n3": (UU, AFFINITY), "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "affinity: no first-pod exception once a matching pod exists elsewhere",
        make_pod("p").labels(app="web").pod_affinity("podAffinity", term(ZONE, {"app": "web"})),
        World(three_nodes(), [_web("e1", "n3")]),
        {"n1": (UU, AFFINITY), "n2": (UU, AFFINITY), "n3": None, "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "affinity: a matching pod on a node without the key leaves the first-pod rule on",
        make_pod("p").labels(app="web").pod_affinity("podAffinity", term(ZONE, {"app": "web"})),
        World(three_nodes(), [_web("e1", "n4")]),
        {"n1": None, "n2": None, "n3": None, "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "affinity: one pod must match every term",
        make_pod("p")
        .labels(app="other")
        .pod_affinity("podAffinity", term(ZONE, {"app": "web"}))
        .pod_affinity("podAffinity", term(ZONE, {"tier": "front"})),
        World(
            three_nodes(),
            [
                _web("e1", "n1"),
                make_pod("e2").labels(tier="front").node("n2"),
                _web("e3", "n3", tier="front"),
            ],
        ),
        {"n1": (UU, AFFINITY), "n2": (UU, AFFINITY), "n3": None, "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "affinity: every term's domain must hold a counting pod",
        make_pod("p")
        .pod_affinity("podAffinity", term(ZONE, {"app": "web"}))
        .pod_affinity("podAffinity", term(HOST, {"app": "web"})),
        World(three_nodes(), [_web("e1", "n1")]),
        {"n1": None, "n2": (UU, AFFINITY), "n3": (UU, AFFINITY), "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "affinity: a nil label selector matches no pod, not even the pod itself",
        make_pod("p").labels(app="web").pod_affinity("podAffinity", term(ZONE, nil_selector=True)),
        World(three_nodes(), [_web("e1", "n1")]),
        {"n1": (UU, AFFINITY), "n2": (UU, AFFINITY), "n3": (UU, AFFINITY), "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "affinity: terminating pods still count",
        make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "web"})),
        World(three_nodes(), [_web("e1", "n3").terminating()]),
        {"n1": (UU, AFFINITY), "n2": (UU, AFFINITY), "n3": None, "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "anti-affinity: the matching pod's zone fails; nodes without the key pass",
        make_pod("p").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})),
        World(three_nodes(), [_web("e1", "n1"), _web("e2", "n4")]),
        {"n1": (U, ANTI), "n2": (U, ANTI), "n3": None, "n4": None},
    ),
    FilterCase(
        "anti-affinity: no matching pod anywhere, all pass",
        make_pod("p").pod_affinity("podAntiAffinity", term(HOST, {"app": "db"})),
        World(three_nodes(), [_web("e1", "n1")]),
        {"n1": None, "n2": None, "n3": None, "n4": None},
    ),
    FilterCase(
        "anti-affinity: a nil label selector never conflicts",
        make_pod("p").pod_affinity("podAntiAffinity", term(HOST, nil_selector=True)),
        World(three_nodes(), [_web("e1", "n1")]),
        {"n1": None, "n2": None, "n3": None, "n4": None},
    ),
    FilterCase(
        "symmetry: an existing pod's anti-affinity rejects its zone",
        make_pod("p").labels(app="web"),
        World(
            three_nodes(),
            [make_pod("e1").node("n3").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}))],
        ),
        {"n1": None, "n2": None, "n3": (U, EXISTING), "n4": None},
    ),
    FilterCase(
        "symmetry: hostname-scoped anti-affinity rejects only its node",
        make_pod("p").labels(app="web"),
        World(
            three_nodes(),
            [make_pod("e1").node("n2").pod_affinity("podAntiAffinity", term(HOST, {"app": "web"}))],
        ),
        {"n1": None, "n2": (U, EXISTING), "n3": None, "n4": None},
    ),
    FilterCase(
        "order: affinity is reported before anti-affinity and symmetry",
        make_pod("p")
        .labels(app="web")
        .pod_affinity("podAffinity", term(ZONE, {"app": "db"}))
        .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})),
        World(
            three_nodes(),
            [
                make_pod("db").labels(app="db").node("n1"),
                make_pod("w")
                .labels(app="web")
                .node("n3")
                .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})),
            ],
        ),
        {"n1": None, "n2": None, "n3": (UU, AFFINITY), "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "order: anti-affinity is reported before symmetry",
        make_pod("p").labels(app="web").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})),
        World(
            three_nodes(),
            [
                make_pod("w")
                .labels(app="web")
                .node("n3")
                .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})),
                make_pod("x")
                .node("n1")
                .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})),
            ],
        ),
        {"n1": (U, EXISTING), "n2": (U, EXISTING), "n3": (U, ANTI), "n4": None},
    ),
    FilterCase(
        "namespaces: empty namespaces mean the pod's own namespace",
        make_pod("p", "team-a").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})),
        World(three_nodes(), [_web("e1", "n1", "team-b"), _web("e2", "n3", "team-a")]),
        {"n1": None, "n2": None, "n3": (U, ANTI), "n4": None},
    ),
    FilterCase(
        "namespaces: namespaceSelector {} means every namespace",
        make_pod("p", "team-a").pod_affinity(
            "podAntiAffinity", term(ZONE, {"app": "web"}, namespace_selector={})
        ),
        World(three_nodes(), [_web("e1", "n1", "team-b"), _web("e2", "n3", "team-c")]),
        {"n1": (U, ANTI), "n2": (U, ANTI), "n3": (U, ANTI), "n4": None},
    ),
    FilterCase(
        "namespaces: listed namespaces replace the pod's own",
        make_pod("p", "team-a").pod_affinity(
            "podAntiAffinity", term(ZONE, {"app": "web"}, namespaces=["team-b"])
        ),
        World(three_nodes(), [_web("e1", "n1", "team-b"), _web("e2", "n3", "team-a")]),
        {"n1": (U, ANTI), "n2": (U, ANTI), "n3": None, "n4": None},
    ),
    FilterCase(
        "namespaces: namespaceSelector picks namespaces by their labels",
        make_pod("p", "team-a").pod_affinity(
            "podAffinity",
            term(ZONE, {"app": "web"}, namespace_selector={"matchLabels": {"env": "prod"}}),
        ),
        World(
            three_nodes(),
            [_web("e1", "n1", "team-b"), _web("e2", "n3", "team-c")],
            namespaces={"team-a": {}, "team-b": {"env": "dev"}, "team-c": {"env": "prod"}},
        ),
        {"n1": (UU, AFFINITY), "n2": (UU, AFFINITY), "n3": None, "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "symmetry: an existing term's namespaceSelector reads the incoming pod's namespace labels",
        make_pod("p", "team-a").labels(app="web"),
        World(
            three_nodes(),
            [
                make_pod("e1", "team-b")
                .node("n1")
                .pod_affinity(
                    "podAntiAffinity",
                    term(ZONE, {"app": "web"}, namespace_selector={"matchLabels": {"env": "prod"}}),
                )
            ],
            namespaces={"team-a": {"env": "prod"}, "team-b": {}},
        ),
        {"n1": (U, EXISTING), "n2": (U, EXISTING), "n3": None, "n4": None},
    ),
    FilterCase(
        "symmetry: an existing term's empty namespaces mean the existing pod's namespace",
        make_pod("p", "team-a").labels(app="web"),
        World(
            three_nodes(),
            [
                make_pod("e1", "team-b")
                .node("n1")
                .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}))
            ],
        ),
        "skip",
    ),
    FilterCase(
        "matchLabelKeys: only pods sharing the pod's value count",
        make_pod("p")
        .labels(app="web", version="v2")
        .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}, match_label_keys=["version"])),
        World(three_nodes(), [_web("e1", "n1", version="v1"), _web("e2", "n3", version="v2")]),
        {"n1": None, "n2": None, "n3": (U, ANTI), "n4": None},
    ),
    FilterCase(
        "mismatchLabelKeys: only pods with another value count",
        make_pod("p")
        .labels(app="web", version="v2")
        .pod_affinity(
            "podAntiAffinity", term(ZONE, {"app": "web"}, mismatch_label_keys=["version"])
        ),
        World(three_nodes(), [_web("e1", "n1", version="v1"), _web("e2", "n3", version="v2")]),
        {"n1": (U, ANTI), "n2": (U, ANTI), "n3": None, "n4": None},
    ),
]


@pytest.mark.parametrize("case", FILTER_CASES, ids=[c.id for c in FILTER_CASES])
def test_filter(case: FilterCase) -> None:
    assert run_filter(case.world.cluster(), case.pod.build()) == case.want


def test_filter_reads_cluster_changes_between_cycles() -> None:
    world = World(three_nodes(), [_web("e1", "n1").uid("e1")])
    cluster = world.cluster()
    pod = make_pod("p").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})).build()
    assert run_filter(cluster, pod) == {"n1": (U, ANTI), "n2": (U, ANTI), "n3": None, "n4": None}
    cluster.add_pod(_web("e1", "n3").uid("e1").build())
    assert run_filter(cluster, pod) == {"n1": None, "n2": None, "n3": (U, ANTI), "n4": None}


# ---------------------------------------------------------------------- score


@dataclass
class ScoreCase:
    id: str
    pod: PodBuilder
    world: World
    want: dict[str, int] | str  # normalised scores, or "skip"
    raw: dict[str, int] | None = None
    args: dict[str, Any] | None = None


def four_zones() -> list[Node]:
    return [zoned("n1", "a"), zoned("n2", "b"), zoned("n3", "c"), zoned("n4", None)]


SCORE_CASES = [
    ScoreCase(
        "no terms anywhere: skip",
        make_pod("p").labels(app="web"),
        World(four_zones(), [_web("e1", "n1")]),
        "skip",
    ),
    ScoreCase(
        "preferred terms matching nothing: skip",
        make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "db"}), weight=10),
        World(four_zones(), [_web("e1", "n1")]),
        "skip",
    ),
    ScoreCase(
        "preferred affinity: the matching pod's zone scores 100",
        make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=10),
        World(four_zones(), [_web("e1", "n1"), _web("e2", "n1")]),
        {"n1": 100, "n2": 0, "n3": 0, "n4": 0},
        raw={"n1": 20, "n2": 0, "n3": 0, "n4": 0},
    ),
    ScoreCase(
        "preferred anti-affinity: the matching pod's zone scores 0",
        make_pod("p").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}), weight=7),
        World(four_zones(), [_web("e1", "n2")]),
        {"n1": 100, "n2": 0, "n3": 100, "n4": 100},
        raw={"n1": 0, "n2": -7, "n3": 0, "n4": 0},
    ),
    ScoreCase(
        "existing required affinity adds hardPodAffinityWeight",
        make_pod("p").labels(app="web"),
        World(
            four_zones(),
            [make_pod("e1").node("n3").pod_affinity("podAffinity", term(ZONE, {"app": "web"}))],
        ),
        {"n1": 0, "n2": 0, "n3": 100, "n4": 0},
        raw={"n1": 0, "n2": 0, "n3": 5, "n4": 0},
        args={"hardPodAffinityWeight": 5},
    ),
    ScoreCase(
        "hardPodAffinityWeight 0 ignores existing required affinity",
        make_pod("p").labels(app="web"),
        World(
            four_zones(),
            [make_pod("e1").node("n3").pod_affinity("podAffinity", term(ZONE, {"app": "web"}))],
        ),
        "skip",
        args={"hardPodAffinityWeight": 0},
    ),
    ScoreCase(
        "existing preferred affinity and anti-affinity count for and against",
        make_pod("p").labels(app="web"),
        World(
            four_zones(),
            [
                make_pod("e1")
                .node("n1")
                .pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=30),
                make_pod("e2")
                .node("n2")
                .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}), weight=10),
            ],
        ),
        {"n1": 100, "n2": 0, "n3": 25, "n4": 25},
        raw={"n1": 30, "n2": -10, "n3": 0, "n4": 0},
    ),
    ScoreCase(
        "ignorePreferredTermsOfExistingPods skips pods without preferred terms",
        make_pod("p").labels(app="web"),
        World(
            four_zones(),
            [
                make_pod("e1")
                .node("n1")
                .pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=30)
            ],
        ),
        "skip",
        args={"ignorePreferredTermsOfExistingPods": True},
    ),
    ScoreCase(
        "ignorePreferredTermsOfExistingPods still reads existing terms for pods with preferred terms",
        make_pod("p")
        .labels(app="web")
        .pod_affinity("podAffinity", term(ZONE, {"app": "none"}), weight=1),
        World(
            four_zones(),
            [
                make_pod("e1")
                .node("n1")
                .pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=30)
            ],
        ),
        {"n1": 100, "n2": 0, "n3": 0, "n4": 0},
        args={"ignorePreferredTermsOfExistingPods": True},
    ),
    ScoreCase(
        "normalisation is min-max over the scored nodes, not seeded at 0",
        make_pod("p")
        .pod_affinity("podAffinity", term(HOST, {"app": "web"}), weight=5)
        .pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=5),
        World([zoned("n1", "a"), zoned("n2", "a")], [_web("e1", "n1")]),
        {"n1": 100, "n2": 0},
        raw={"n1": 10, "n2": 5},
    ),
    ScoreCase(
        "equal raw scores normalise to 0",
        make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=5),
        World([zoned("n1", "a"), zoned("n2", "a")], [_web("e1", "n1")]),
        {"n1": 0, "n2": 0},
        raw={"n1": 5, "n2": 5},
    ),
    ScoreCase(
        "points that cancel out still score (no skip)",
        make_pod("p")
        .pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=5)
        .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}), weight=5),
        World(four_zones(), [_web("e1", "n1")]),
        {"n1": 0, "n2": 0, "n3": 0, "n4": 0},
        raw={"n1": 0, "n2": 0, "n3": 0, "n4": 0},
    ),
    ScoreCase(
        "float truncation: thirds",
        make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=1),
        World(
            four_zones(), [_web("e1", "n1"), _web("e2", "n2"), _web("e3", "n2"), _web("e4", "n2")]
        ),
        {"n1": 33, "n2": 100, "n3": 0, "n4": 0},
        raw={"n1": 1, "n2": 3, "n3": 0, "n4": 0},
    ),
    ScoreCase(
        "a matching pod on a node without the key gives no points",
        make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=3),
        World(four_zones(), [_web("e1", "n4")]),
        "skip",
    ),
    ScoreCase(
        "preferred term namespaceSelector {} reaches every namespace",
        make_pod("p", "team-a").pod_affinity(
            "podAffinity", term(ZONE, {"app": "web"}, namespace_selector={}), weight=4
        ),
        World(four_zones(), [_web("e1", "n1", "team-b"), _web("e2", "n2", "team-a")]),
        {"n1": 100, "n2": 100, "n3": 0, "n4": 0},
    ),
    ScoreCase(
        "preferred term empty namespaces stay in the pod's namespace",
        make_pod("p", "team-a").pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=4),
        World(four_zones(), [_web("e1", "n1", "team-b"), _web("e2", "n2", "team-a")]),
        {"n1": 0, "n2": 100, "n3": 0, "n4": 0},
    ),
]


@pytest.mark.parametrize("case", SCORE_CASES, ids=[c.id for c in SCORE_CASES])
def test_score(case: ScoreCase) -> None:
    result = run_score(case.world.cluster(), case.pod.build(), case.args)
    if isinstance(case.want, str):
        assert result == case.want
        return
    assert not isinstance(result, str)
    raw, normalized = result
    assert normalized == case.want
    if case.raw is not None:
        assert raw == case.raw


def test_normalize_of_no_nodes_is_empty() -> None:
    world = World(four_zones(), [_web("e1", "n1")])
    cluster = world.cluster()
    pod = make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=1).build()
    plugin = new_plugin(None)
    state = CycleState(cluster)
    assert plugin.pre_score(state, pod, cluster.node_order()).is_success
    empty = np.zeros(0, dtype=np.intp)
    assert plugin.normalize_scores(state, pod, empty, np.zeros(0, dtype=np.int64)).size == 0


# ---------------------------------------------------------------------- args


@pytest.mark.parametrize(
    ("args", "want"),
    [
        (None, InterPodAffinityArgs(1, False)),
        ({}, InterPodAffinityArgs(1, False)),
        ({"hardPodAffinityWeight": 0}, InterPodAffinityArgs(0, False)),
        ({"hardPodAffinityWeight": 100}, InterPodAffinityArgs(100, False)),
        ({"ignorePreferredTermsOfExistingPods": True}, InterPodAffinityArgs(1, True)),
        (
            {"kind": "InterPodAffinityArgs", "apiVersion": "kubescheduler.config.k8s.io/v1"},
            InterPodAffinityArgs(1, False),
        ),
    ],
    ids=["none", "empty", "weight-0", "weight-100", "ignore-preferred", "typed"],
)
def test_args_defaults_and_valid(args: dict[str, Any] | None, want: InterPodAffinityArgs) -> None:
    assert new_plugin(args).args == want


@pytest.mark.parametrize(
    ("args", "field", "problem"),
    [
        ({"hardPodAffinityWeight": -1}, "hardPodAffinityWeight", "-1: not in valid range [0, 100]"),
        (
            {"hardPodAffinityWeight": 101},
            "hardPodAffinityWeight",
            "101: not in valid range [0, 100]",
        ),
        ({"hardPodAffinityWeight": "5"}, "hardPodAffinityWeight", "must be an integer, got '5'"),
        ({"hardPodAffinityWeight": True}, "hardPodAffinityWeight", "must be an integer, got True"),
        (
            {"ignorePreferredTermsOfExistingPods": "yes"},
            "ignorePreferredTermsOfExistingPods",
            "must be a boolean, got 'yes'",
        ),
        ({"hardPodWeight": 1}, "hardPodWeight", "unknown field"),
    ],
    ids=["below-range", "above-range", "string", "bool-weight", "string-bool", "unknown"],
)
def test_args_invalid(args: dict[str, Any], field: str, problem: str) -> None:
    with pytest.raises(InvalidPluginArgsError) as raised:
        new_plugin(args)
    assert raised.value.plugin == "InterPodAffinity"
    assert raised.value.field == field
    assert raised.value.problem == problem


# ---------------------------------------------------------------------- events and hints


def test_events_registered() -> None:
    events = [(e.event.resource, e.event.action) for e in new_plugin(None).events_to_register()]
    assert events == [
        (Resource.ASSIGNED_POD, Action.ADD | Action.UPDATE_POD_LABEL | Action.DELETE),
        (Resource.TARGET_POD, Action.UPDATE_POD_LABEL),
        (Resource.NODE, Action.ADD | Action.UPDATE_NODE_LABEL),
    ]
    assert new_plugin(None).name == "InterPodAffinity"


AFFINE = make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "web"})).build()
ANTI_AFFINE = (
    make_pod("p")
    .labels(app="db")
    .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}))
    .build()
)
QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.SKIP


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        (AFFINE, None, _web("e", "n1").build(), QUEUE),
        (AFFINE, None, make_pod("e").labels(app="db").node("n1").build(), SKIP),
        (AFFINE, None, make_pod("e").labels(app="web").build(), SKIP),
        (AFFINE, None, make_pod("e").labels(app="web").nominated("n1").build(), QUEUE),
        (AFFINE, make_pod("e").node("n1").build(), _web("e", "n1").build(), QUEUE),
        (AFFINE, _web("e", "n1").build(), _web("e", "n1", tier="x").build(), SKIP),
        (ANTI_AFFINE, _web("e", "n1").build(), make_pod("e").node("n1").build(), QUEUE),
        (ANTI_AFFINE, make_pod("e").node("n1").build(), _web("e", "n1").build(), SKIP),
        (ANTI_AFFINE, _web("e", "n1").build(), None, QUEUE),
        (ANTI_AFFINE, make_pod("e").node("n1").build(), None, SKIP),
        (
            make_pod("p").labels(app="web").build(),
            make_pod("e")
            .node("n1")
            .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}))
            .build(),
            None,
            QUEUE,
        ),
        (AFFINE, _web("e", "n1").build(), None, SKIP),
    ],
    ids=[
        "add-matching",
        "add-not-matching",
        "add-unassigned",
        "add-nominated",
        "update-starts-matching-affinity",
        "update-still-matching",
        "update-stops-matching-anti",
        "update-starts-matching-anti",
        "delete-matching-anti",
        "delete-unrelated",
        "delete-whose-anti-matched-pod",
        "delete-matching-affinity",
    ],
)
def test_assigned_pod_hint(pod: Pod, old: Pod | None, new: Pod | None, want: QueueingHint) -> None:
    assert after_assigned_pod_change(pod, old, new) is want


def test_target_pod_label_hint_always_queues() -> None:
    assert after_target_pod_label_update(AFFINE, AFFINE, AFFINE) is QUEUE


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        (AFFINE, None, zoned("n", "a"), QUEUE),
        (AFFINE, None, zoned("n", None), SKIP),
        (AFFINE, zoned("n", None), zoned("n", "a"), QUEUE),
        (AFFINE, zoned("n", "a"), zoned("n", "b"), QUEUE),
        (AFFINE, zoned("n", "a"), zoned("n", "a", rack="r"), SKIP),
        (AFFINE, zoned("n", "a"), zoned("n", None), SKIP),
        (ANTI_AFFINE, None, zoned("n", None), QUEUE),
        (ANTI_AFFINE, zoned("n", "a"), zoned("n", None), QUEUE),
        (ANTI_AFFINE, zoned("n", "a"), zoned("n", "b"), QUEUE),
        (ANTI_AFFINE, zoned("n", None), zoned("n", "a"), SKIP),
        (make_pod("p").build(), None, zoned("n", "a"), SKIP),
    ],
    ids=[
        "affinity-add-with-key",
        "affinity-add-without-key",
        "affinity-gains-key",
        "affinity-changes-domain",
        "affinity-other-label",
        "affinity-loses-key",
        "anti-add",
        "anti-loses-key",
        "anti-changes-domain",
        "anti-gains-key",
        "no-terms",
    ],
)
def test_node_hint(pod: Pod, old: Node | None, new: Node, want: QueueingHint) -> None:
    assert after_node_change(pod, old, new) is want
