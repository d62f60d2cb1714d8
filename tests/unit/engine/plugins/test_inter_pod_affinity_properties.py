"""InterPodAffinity (vectorised) equals the plain per-pod reference on random clusters."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.cluster import ClusterState
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.status import Code
from berth.engine.model.pod import Pod
from berth.engine.plugins.inter_pod_affinity import new_plugin
from tests.builders import make_node, make_pod
from tests.unit.engine.reference.inter_pod_affinity import (
    reference_filter,
    reference_normalize,
    reference_pre_filter,
    reference_pre_score,
    reference_score,
)

NAMESPACES = ["default", "team-a", "team-b"]
TOPOLOGY_KEYS = ["kubernetes.io/hostname", "topology.kubernetes.io/zone", "rack"]

label_selectors: st.SearchStrategy[dict[str, Any] | None] = st.one_of(
    st.none(),
    st.just({}),
    st.sampled_from(["web", "db"]).map(lambda app: {"matchLabels": {"app": app}}),
    st.tuples(
        st.sampled_from(["In", "NotIn"]), st.lists(st.sampled_from(["web", "db"]), min_size=1)
    ).map(lambda op: {"matchExpressions": [{"key": "app", "operator": op[0], "values": op[1]}]}),
    st.sampled_from(["Exists", "DoesNotExist"]).map(
        lambda op: {"matchExpressions": [{"key": "tier", "operator": op}]}
    ),
)
namespace_selectors = st.sampled_from(
    [
        None,
        {},
        {"matchLabels": {"env": "prod"}},
        {"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]},
    ]
)


@st.composite
def affinity_terms(draw: st.DrawFn) -> dict[str, Any]:
    raw: dict[str, Any] = {"topologyKey": draw(st.sampled_from(TOPOLOGY_KEYS))}
    selector = draw(label_selectors)
    if selector is not None:
        raw["labelSelector"] = selector
    namespaces = draw(st.lists(st.sampled_from(NAMESPACES), max_size=2, unique=True))
    if namespaces:
        raw["namespaces"] = namespaces
    namespace_selector = draw(namespace_selectors)
    if namespace_selector is not None:
        raw["namespaceSelector"] = namespace_selector
    if draw(st.booleans()):
        raw[draw(st.sampled_from(["matchLabelKeys", "mismatchLabelKeys"]))] = ["tier"]
    return raw


@st.composite
def pods(draw: st.DrawFn, name: str, node_names: list[str] | None) -> Pod:
    builder = make_pod(name, draw(st.sampled_from(NAMESPACES)))
    app = draw(st.sampled_from([None, "web", "db"]))
    if app is not None:
        builder = builder.label("app", app)
    tier = draw(st.sampled_from([None, "1", "2"]))
    if tier is not None:
        builder = builder.label("tier", tier)
    for kind in ("podAffinity", "podAntiAffinity"):
        for raw in draw(st.lists(affinity_terms(), max_size=2)):
            builder = builder.pod_affinity(kind, raw)
        for raw in draw(st.lists(affinity_terms(), max_size=2)):
            builder = builder.pod_affinity(kind, raw, weight=draw(st.integers(1, 100)))
    if node_names is not None:
        builder = builder.node(draw(st.sampled_from(node_names)))
        if draw(st.integers(0, 9)) == 0:
            builder = builder.terminating()
    return builder.build()


@st.composite
def clusters(draw: st.DrawFn) -> tuple[ClusterState, Pod]:
    cluster = ClusterState(capacity=4)  # small, so that growing the arrays is exercised too
    for namespace in NAMESPACES:
        labels = draw(st.sampled_from([None, {}, {"env": "prod"}, {"env": "dev"}]))
        if labels is not None:
            cluster.set_namespace(namespace, labels)
    node_names = [f"n{i}" for i in range(draw(st.integers(1, 7)))]
    for name in node_names:
        builder = make_node(name)
        zone = draw(st.sampled_from([None, "a", "b"]))
        if zone is not None:
            builder = builder.zone(zone)
        rack = draw(st.sampled_from([None, "r1", "r2"]))
        if rack is not None:
            builder = builder.label("rack", rack)
        cluster.upsert_node(builder.build())
    for index in range(draw(st.integers(0, 10))):
        cluster.add_pod(draw(pods(f"e{index}", node_names)))
    return cluster, draw(pods("incoming", None))


def _plugin_filter(cluster: ClusterState, pod: Pod) -> dict[str, tuple[Code, str] | None] | None:
    plugin = new_plugin(None)
    state = CycleState(cluster)
    if plugin.pre_filter(state, pod).status.is_skip:
        return None
    slots = cluster.node_order()
    verdicts = plugin.filter(state, pod, slots)
    outcome: dict[str, tuple[Code, str] | None] = {}
    for index, slot in enumerate(slots.tolist()):
        name = cluster.node_at(slot).name
        code = int(verdicts.codes[index])
        if code == 0:
            outcome[name] = None
        else:
            (reason,) = verdicts.reasons_at(index)
            outcome[name] = (Code(code), reason)
    return outcome


def _reference_filter(cluster: ClusterState, pod: Pod) -> dict[str, tuple[Code, str] | None] | None:
    state = reference_pre_filter(cluster, pod)
    if state is None:
        return None
    return {node.name: reference_filter(cluster, pod, state, node) for node in cluster.nodes()}


def _plugin_scores(
    cluster: ClusterState, pod: Pod, args: dict[str, Any]
) -> tuple[dict[str, int], dict[str, int]] | None:
    plugin = new_plugin(args)
    state = CycleState(cluster)
    slots = cluster.node_order()
    if plugin.pre_score(state, pod, slots).is_skip:
        return None
    raw = plugin.score(state, pod, slots)
    normalized = plugin.normalize_scores(state, pod, slots, raw.copy())
    names = [cluster.node_at(s).name for s in slots.tolist()]
    return (
        dict(zip(names, raw.tolist(), strict=True)),
        dict(zip(names, normalized.tolist(), strict=True)),
    )


def _reference_scores(
    cluster: ClusterState, pod: Pod, args: dict[str, Any]
) -> tuple[dict[str, int], dict[str, int]] | None:
    points = reference_pre_score(
        cluster,
        pod,
        hard_pod_affinity_weight=args["hardPodAffinityWeight"],
        ignore_preferred_terms_of_existing_pods=args["ignorePreferredTermsOfExistingPods"],
    )
    if points is None:
        return None
    nodes = [cluster.node_at(s) for s in cluster.node_order().tolist()]
    raw = [reference_score(points, node) for node in nodes]
    names = [node.name for node in nodes]
    return (
        dict(zip(names, raw, strict=True)),
        dict(zip(names, reference_normalize(raw), strict=True)),
    )


def _assert_same(cluster: ClusterState, pod: Pod, args: dict[str, Any]) -> None:
    assert _plugin_filter(cluster, pod) == _reference_filter(cluster, pod)
    assert _plugin_scores(cluster, pod, args) == _reference_scores(cluster, pod, args)


score_args = st.fixed_dictionaries(
    {
        "hardPodAffinityWeight": st.sampled_from([0, 1, 7, 100]),
        "ignorePreferredTermsOfExistingPods": st.booleans(),
    }
)


@settings(max_examples=150, deadline=None)
@given(world=clusters(), args=score_args, data=st.data())
def test_plugin_equals_reference(
    world: tuple[ClusterState, Pod], args: dict[str, Any], data: st.DataObject
) -> None:
    cluster, pod = world
    _assert_same(cluster, pod, args)

    # Change the cluster after its indexes were built: they must follow.
    existing = list(cluster.pods())
    for victim in data.draw(st.lists(st.sampled_from(existing), max_size=3)) if existing else []:
        cluster.remove_pod(victim.uid)
    node_names = [node.name for node in cluster.nodes()]
    cluster.add_pod(data.draw(pods("late", node_names)))
    cluster.set_namespace(
        data.draw(st.sampled_from(NAMESPACES)),
        data.draw(st.sampled_from([{}, {"env": "prod"}, {"env": "dev"}])),
    )
    _assert_same(cluster, pod, args)

    # More pods come and go, then a node moves to another zone (or loses it).
    for victim in data.draw(st.lists(st.sampled_from(existing), max_size=3)) if existing else []:
        cluster.remove_pod(victim.uid)
    cluster.add_pod(data.draw(pods("later", node_names)))
    _assert_same(cluster, pod, args)
    moved = data.draw(st.sampled_from(node_names))
    zone = data.draw(st.sampled_from([None, "a", "b", "c"]))
    builder = make_node(moved)
    cluster.upsert_node((builder if zone is None else builder.zone(zone)).build())
    _assert_same(cluster, pod, args)
