"""The vectorised PodTopologySpread equals the plain per-node reference on random clusters."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.cluster import ClusterState, Workload
from berth.engine.model.labels import LabelSelector, Operator, Requirement
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.plugins.pod_topology_spread import new_plugin, parse_args
from tests.builders import make_node, make_pod
from tests.unit.engine.plugins.spread_helpers import build_cluster, run_filter, run_score
from tests.unit.engine.reference.pod_topology_spread import (
    ReferenceArgs,
    reference_filter,
    reference_scores,
)

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
KEYS = (ZONE, HOST, "rack")
SELECTORS: list[dict[str, Any] | None] = [
    None,
    {},
    {"matchLabels": {"app": "x"}},
    {"matchExpressions": [{"key": "app", "operator": "In", "values": ["x", "y"]}]},
    {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
    {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["y"]}]},
]
TAINTS = [
    ("dedicated", "x", "NoSchedule"),
    ("gpu", "", "NoExecute"),
    ("soft", "", "PreferNoSchedule"),
]
WORKLOADS = [
    Workload(
        "ReplicaSet",
        "default",
        "rs",
        selector=LabelSelector((Requirement("app", Operator.IN, frozenset(("x",))),)),
    ),
    Workload("Service", "default", "svc", map_selector=(("tier", "1"),)),
]


@st.composite
def nodes(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(1, 7))
    result = []
    for index in range(count):
        builder = make_node(f"n{index}")
        zone = draw(st.sampled_from([None, "a", "a", "b", "b", "c", ""]))
        if zone is not None:
            builder.zone(zone)
        rack = draw(st.sampled_from([None, "r1", "r2"]))
        if rack is not None:
            builder.label("rack", rack)
        size = draw(st.sampled_from([None, "1", "5", "10"]))
        if size is not None:
            builder.label("size", size)
        for key, value, effect in draw(st.lists(st.sampled_from(TAINTS), max_size=2, unique=True)):
            builder.taint(key, value, effect)
        raw = builder.obj()
        hostname = draw(st.sampled_from(["name"] * 6 + ["missing", "empty"]))
        if hostname == "missing":
            del raw["metadata"]["labels"][HOST]
        elif hostname == "empty":
            raw["metadata"]["labels"][HOST] = ""
        result.append(raw)
    return result


@st.composite
def placed_pods(draw: st.DrawFn, node_names: list[str]) -> list[dict[str, Any]]:
    result = []
    for index in range(draw(st.integers(0, 20))):
        builder = make_pod(f"p{index}", draw(st.sampled_from(["default", "default", "other"])))
        app = draw(st.sampled_from([None, "x", "x", "x", "y"]))
        if app is not None:
            builder.label("app", app)
        if draw(st.booleans()):
            builder.label("tier", "1")
        if draw(st.integers(0, 5)) == 0:
            builder.terminating()
        result.append(builder.node(draw(st.sampled_from(node_names))).obj())
    return result


@st.composite
def constraint(draw: st.DrawFn) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "maxSkew": draw(st.integers(1, 3)),
        "topologyKey": draw(st.sampled_from(KEYS)),
        "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
    }
    selector = draw(st.sampled_from(SELECTORS))
    if selector is not None:
        raw["labelSelector"] = selector
    if draw(st.booleans()):
        raw["minDomains"] = draw(st.integers(1, 4))
    for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        choice = draw(st.sampled_from([None, "Honor", "Ignore"]))
        if choice is not None:
            raw[policy] = choice
    if draw(st.integers(0, 4)) == 0:
        raw["matchLabelKeys"] = ["tier"]
    return raw


@st.composite
def incoming_pod(draw: st.DrawFn) -> Pod:
    builder = make_pod("incoming")
    app = draw(st.sampled_from([None, "x", "y"]))
    if app is not None:
        builder.label("app", app)
    if draw(st.booleans()):
        builder.label("tier", "1")
    for raw in draw(st.lists(constraint(), max_size=3)):
        builder.spread(
            raw.pop("topologyKey"),
            raw.pop("maxSkew"),
            raw.pop("whenUnsatisfiable"),
            raw.pop("labelSelector", None),
            **raw,
        )
    if draw(st.integers(0, 3)) == 0:
        builder.node_selector(rack=draw(st.sampled_from(["r1", "r2"])))
    affinity = draw(st.sampled_from([None, "zone-not-c", "size-gt-3", "name-in"]))
    if affinity == "zone-not-c":
        builder.node_affinity_in(ZONE, "c", operator="NotIn")
    elif affinity == "size-gt-3":
        builder.node_affinity_in("size", "3", operator="Gt")
    elif affinity == "name-in":
        builder.required_node_terms(
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n0"]}]},
            {"matchExpressions": [{"key": "rack", "operator": "Exists"}]},
        )
    if draw(st.booleans()):
        builder.toleration("dedicated", "Exists")
    if draw(st.booleans()):
        builder.owner("ReplicaSet", "rs")
    return builder.build()


@st.composite
def plugin_args(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.booleans()):
        return {}
    constraints = []
    seen = set()
    for raw in draw(st.lists(constraint(), max_size=2)):
        raw.pop("labelSelector", None)
        pair = (raw["topologyKey"], raw["whenUnsatisfiable"])
        if pair not in seen:
            seen.add(pair)
            constraints.append(raw)
    return {"defaultingType": "List", "defaultConstraints": constraints}


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[ClusterState, Pod, dict[str, Any], list[str], list[str]]:
    raw_nodes = draw(nodes())
    names = [raw["metadata"]["name"] for raw in raw_nodes]
    workloads = draw(st.lists(st.sampled_from(WORKLOADS), max_size=2, unique=True))
    cluster = build_cluster(raw_nodes, draw(placed_pods(names)), workloads)
    candidates = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    feasible = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    return cluster, draw(incoming_pod()), draw(plugin_args()), candidates, feasible


def _nodes(cluster: ClusterState, names: list[str]) -> list[Node]:
    found = [cluster.node_named(name) for name in names]
    return [node for node in found if node is not None]


def _reference_args(args: dict[str, Any]) -> ReferenceArgs:
    parsed = parse_args(args)
    return ReferenceArgs(parsed.default_constraints, parsed.system_defaulted)


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_filter_equals_reference(
    scenario: tuple[ClusterState, Pod, dict[str, Any], list[str], list[str]],
) -> None:
    cluster, pod, args, candidates, _ = scenario
    got = run_filter(new_plugin(args), cluster, pod, candidates)
    want = reference_filter(cluster, pod, _reference_args(args), _nodes(cluster, candidates))
    assert (got if got is not None else dict.fromkeys(candidates)) == want


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_score_equals_reference(
    scenario: tuple[ClusterState, Pod, dict[str, Any], list[str], list[str]],
) -> None:
    cluster, pod, args, _, feasible = scenario
    got = run_score(new_plugin(args), cluster, pod, feasible)
    want = reference_scores(cluster, pod, _reference_args(args), _nodes(cluster, feasible))
    assert got == want


@st.composite
def plainly_spread_pod(draw: st.DrawFn) -> Pod:
    """Hard constraints whose counts PreFilter follows across cycles (no inclusion policy)."""
    builder = make_pod("incoming").label("app", "x")
    for key in draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=2, unique=True)):
        selector = draw(st.sampled_from(SELECTORS[2:]))
        min_domains = draw(st.sampled_from([{}, {"minDomains": 3}]))
        builder.spread(key, draw(st.integers(1, 2)), "DoNotSchedule", selector, **min_domains)
    return builder.build()


@settings(max_examples=150, deadline=None)
@given(scenarios(), st.data())
def test_filter_follows_cluster_changes(
    scenario: tuple[ClusterState, Pod, dict[str, Any], list[str], list[str]],
    data: st.DataObject,
) -> None:
    # One plugin and cluster across cycles: the counts PreFilter keeps between
    # decisions must follow pods coming and going, and nodes being rewritten.
    cluster, pod, args, candidates, _ = scenario
    if data.draw(st.booleans()):
        pod = data.draw(plainly_spread_pod())
    plugin = new_plugin(args)
    names = [node.name for node in cluster.nodes()]

    def check() -> None:
        got = run_filter(plugin, cluster, pod, candidates)
        want = reference_filter(cluster, pod, _reference_args(args), _nodes(cluster, candidates))
        assert (got if got is not None else dict.fromkeys(candidates)) == want

    check()
    for step in range(2):
        existing = list(cluster.pods())
        for victim in (
            data.draw(st.lists(st.sampled_from(existing), max_size=3)) if existing else []
        ):
            cluster.remove_pod(victim.uid)
        for raw in data.draw(placed_pods(names)):
            raw["metadata"]["name"] += f"-{step}"
            raw["metadata"]["uid"] = raw["metadata"]["name"]
            cluster.add_pod(Pod.from_dict(raw))
        check()
    for raw in data.draw(nodes()):
        if raw["metadata"]["name"] in names:
            cluster.upsert_node(Node.from_dict(raw))
    check()
