"""PodTopologySpread args, default selectors and queueing hints."""

from __future__ import annotations

from typing import Any

import pytest

from berth.engine.cluster import Workload
from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import Action, ClusterEvent, QueueingHint, Resource
from berth.engine.framework.names import POD_TOPOLOGY_SPREAD
from berth.engine.model.labels import LabelSelector, Operator, Requirement
from berth.engine.model.node import Node
from berth.engine.model.pod import InclusionPolicy, Pod, UnsatisfiableAction
from berth.engine.plugins.pod_topology_spread import (
    SYSTEM_DEFAULT_CONSTRAINTS,
    PodTopologySpread,
    new_plugin,
)
from berth.engine.plugins.pod_topology_spread.constraints import default_selector
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.engine.plugins.spread_helpers import build_cluster, run_score

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _in(key: str, value: str) -> Requirement:
    return Requirement(key, Operator.IN, frozenset((value,)))


# ---------------------------------------------------------------------- args


def test_default_args_are_system_defaults() -> None:
    for args in (None, {}, {"defaultingType": "System"}):
        plugin = new_plugin(args)
        assert plugin.name == POD_TOPOLOGY_SPREAD
        assert plugin.args.system_defaulted
        assert plugin.args.default_constraints == SYSTEM_DEFAULT_CONSTRAINTS
    hostname, zone = SYSTEM_DEFAULT_CONSTRAINTS
    assert (hostname.topology_key, hostname.max_skew) == (HOST, 3)
    assert (zone.topology_key, zone.max_skew) == (ZONE, 5)
    assert {c.when_unsatisfiable for c in SYSTEM_DEFAULT_CONSTRAINTS} == {
        UnsatisfiableAction.SCHEDULE_ANYWAY
    }


def test_list_args_parse_every_field() -> None:
    plugin = new_plugin(
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {
                    "maxSkew": 2,
                    "topologyKey": "example.com/rack",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "minDomains": 3,
                    "nodeAffinityPolicy": "Ignore",
                    "nodeTaintsPolicy": "Honor",
                    "matchLabelKeys": ["app"],
                },
                {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"},
            ],
        }
    )
    assert not plugin.args.system_defaulted
    rack, zone = plugin.args.default_constraints
    assert rack.max_skew == 2 and rack.topology_key == "example.com/rack"
    assert rack.when_unsatisfiable is UnsatisfiableAction.DO_NOT_SCHEDULE
    assert rack.min_domains == 3
    assert rack.node_affinity_policy is InclusionPolicy.IGNORE
    assert rack.node_taints_policy is InclusionPolicy.HONOR
    assert zone.min_domains == 1
    assert zone.node_affinity_policy is InclusionPolicy.HONOR
    assert zone.node_taints_policy is InclusionPolicy.IGNORE
    assert new_plugin({"defaultingType": "List"}).args.default_constraints == ()


def _one(**fields: Any) -> dict[str, Any]:
    constraint = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}
    constraint.update(fields)
    return {"defaultingType": "List", "defaultConstraints": [constraint]}


@pytest.mark.parametrize(
    ("args", "field"),
    [
        pytest.param({"defaultingType": "Sometimes"}, "defaultingType", id="bad-defaulting-type"),
        pytest.param(
            {"defaultConstraints": _one()["defaultConstraints"]},
            "defaultingType",
            id="system-with-constraints",
        ),
        pytest.param({"bogus": 1}, "bogus", id="unknown-field"),
        pytest.param({"defaultConstraints": {}}, "defaultConstraints", id="not-a-list"),
        pytest.param(_one(maxSkew=0), "defaultConstraints[0].maxSkew", id="max-skew-zero"),
        pytest.param(_one(maxSkew="1"), "defaultConstraints[0].maxSkew", id="max-skew-text"),
        pytest.param(_one(topologyKey=""), "defaultConstraints[0].topologyKey", id="empty-key"),
        pytest.param(
            _one(topologyKey="bad key"), "defaultConstraints[0].topologyKey", id="invalid-key"
        ),
        pytest.param(
            _one(topologyKey="Bad_Prefix/zone"),
            "defaultConstraints[0].topologyKey",
            id="invalid-key-prefix",
        ),
        pytest.param(
            _one(whenUnsatisfiable=""),
            "defaultConstraints[0].whenUnsatisfiable",
            id="empty-action",
        ),
        pytest.param(
            _one(whenUnsatisfiable="Maybe"),
            "defaultConstraints[0].whenUnsatisfiable",
            id="unknown-action",
        ),
        pytest.param(
            _one(labelSelector={}), "defaultConstraints[0].labelSelector", id="selector-forbidden"
        ),
        pytest.param(
            _one(nodeTaintsPolicy="Sometimes"),
            "defaultConstraints[0].nodeTaintsPolicy",
            id="bad-policy",
        ),
        pytest.param(
            _one(minDomains="2"), "defaultConstraints[0].minDomains", id="bad-min-domains"
        ),
        pytest.param(
            _one(extra=True), "defaultConstraints[0].extra", id="unknown-constraint-field"
        ),
        pytest.param(
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    _one()["defaultConstraints"][0],
                    _one(maxSkew=3)["defaultConstraints"][0],
                ],
            },
            "defaultConstraints[1]",
            id="duplicate-key-and-action",
        ),
    ],
)
def test_invalid_args(args: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidPluginArgsError) as caught:
        new_plugin(args)
    assert caught.value.plugin == POD_TOPOLOGY_SPREAD
    assert caught.value.field == field


def test_same_key_with_different_actions_is_fine() -> None:
    constraints = [
        _one()["defaultConstraints"][0],
        _one(whenUnsatisfiable="DoNotSchedule")["defaultConstraints"][0],
    ]
    plugin = new_plugin({"defaultingType": "List", "defaultConstraints": constraints})
    assert len(plugin.args.default_constraints) == 2


# ---------------------------------------------------------------------- default selector


def _service(name: str, namespace: str = "default", **selector: str) -> Workload:
    return Workload("Service", namespace, name, map_selector=tuple(sorted(selector.items())))


def _rs(kind: str, name: str, namespace: str = "default", **labels: str) -> Workload:
    selector = LabelSelector(tuple(_in(k, v) for k, v in labels.items()))
    return Workload(kind, namespace, name, selector=selector)


def _rc(name: str, namespace: str = "default", **labels: str) -> Workload:
    return Workload(
        "ReplicationController", namespace, name, map_selector=tuple(sorted(labels.items()))
    )


WORKLOADS = [
    _service("web", app="web"),
    _service("web-tier", tier="front"),
    _service("other-ns", "other", app="web"),
    _service("no-match", app="db"),
    _service("no-selector"),
    _rs("ReplicaSet", "rs", track="stable"),
    _rs("StatefulSet", "ss", ordinal="yes"),
    _rc("rc", release="r1"),
    _rs("ReplicaSet", "rs-elsewhere", "other", track="canary"),
]


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        pytest.param(make_pod("p").labels(app="db2"), (), id="nothing-selects"),
        pytest.param(
            make_pod("p").labels(app="web", tier="front"),
            (_in("app", "web"), _in("tier", "front")),
            id="services-merged",
        ),
        pytest.param(
            make_pod("p").labels(app="web").owner("ReplicaSet", "rs"),
            (_in("app", "web"), _in("track", "stable")),
            id="service-and-replicaset",
        ),
        pytest.param(
            make_pod("p").owner("StatefulSet", "ss"), (_in("ordinal", "yes"),), id="statefulset"
        ),
        pytest.param(
            make_pod("p").owner("ReplicationController", "rc", api_version="v1"),
            (_in("release", "r1"),),
            id="replication-controller",
        ),
        pytest.param(
            make_pod("p").owner("ReplicaSet", "rs", api_version="extensions/v1beta1"),
            (),
            id="other-api-version",
        ),
        pytest.param(make_pod("p").owner("Deployment", "rs"), (), id="unsupported-kind"),
        pytest.param(make_pod("p").owner("ReplicaSet", "rs-elsewhere"), (), id="other-namespace"),
        pytest.param(make_pod("p").owner("ReplicaSet", "gone"), (), id="missing-owner"),
    ],
)
def test_default_selector(pod: PodBuilder, expected: tuple[Requirement, ...]) -> None:
    assert default_selector(pod.build(), WORKLOADS).requirements == expected


def test_default_selector_ignores_non_controller_owner() -> None:
    raw = make_pod("p").obj()
    raw["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u"}
    ]
    assert default_selector(Pod.from_dict(raw), WORKLOADS).is_empty


# ---------------------------------------------------------------------- events and hints


def test_events_to_register() -> None:
    events = [e.event for e in new_plugin(None).events_to_register()]
    assert events == [
        ClusterEvent(Resource.ASSIGNED_POD, Action.ADD | Action.UPDATE_POD_LABEL | Action.DELETE),
        ClusterEvent(Resource.TARGET_POD, Action.UPDATE_POD_TOLERATIONS | Action.UPDATE_POD_LABEL),
        ClusterEvent(
            Resource.NODE,
            Action.ADD | Action.DELETE | Action.UPDATE_NODE_LABEL | Action.UPDATE_NODE_TAINT,
        ),
    ]
    assert all(e.hint is not None for e in new_plugin(None).events_to_register())


Q, S = QueueingHint.QUEUE, QueueingHint.SKIP
SPREAD_POD = (
    make_pod("pending").labels(app="x").spread(ZONE, selector={"matchLabels": {"app": "x"}})
)


def _placed(app: str = "x", namespace: str = "default", node: str = "n1") -> Any:
    builder = make_pod("other", namespace).labels(app=app)
    return builder.node(node).build() if node else builder.build()


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(None, _placed(), Q, id="add-matching"),
        pytest.param(None, _placed(app="y"), S, id="add-not-matching"),
        pytest.param(None, _placed(namespace="other"), S, id="add-other-namespace"),
        pytest.param(None, _placed(node=""), S, id="add-unscheduled"),
        pytest.param(
            None, make_pod("o").labels(app="x").nominated("n1").build(), Q, id="add-nominated"
        ),
        pytest.param(_placed(), None, Q, id="delete-matching"),
        pytest.param(_placed(app="y"), None, S, id="delete-not-matching"),
        pytest.param(_placed(app="y"), _placed(app="x"), Q, id="label-now-matches"),
        pytest.param(_placed(app="x"), _placed(app="y"), Q, id="label-no-longer-matches"),
        pytest.param(_placed(app="y"), _placed(app="z"), S, id="label-change-irrelevant"),
        pytest.param(_placed(), _placed(), S, id="labels-unchanged"),
        pytest.param("not a pod", None, Q, id="wrong-type"),
    ],
)
def test_hint_after_assigned_pod_change(old: Any, new: Any, expected: QueueingHint) -> None:
    plugin = new_plugin(None)
    assert plugin.hint_after_assigned_pod_change(SPREAD_POD.build(), old, new) is expected


def test_assigned_pod_hint_without_hard_constraints_skips() -> None:
    pod = make_pod("pending").labels(app="x").build()
    assert new_plugin(None).hint_after_assigned_pod_change(pod, None, _placed()) is S


def test_assigned_pod_hint_with_list_defaults_uses_last_cluster() -> None:
    plugin = new_plugin(
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
            ],
        }
    )
    pod = make_pod("pending").labels(app="x").owner("ReplicaSet", "rs").build()
    # No cycle seen yet: the workloads are unknown, so requeue to be safe.
    assert plugin.hint_after_assigned_pod_change(pod, None, _placed(app="y")) is Q
    cluster = build_cluster(
        [make_node("n1").zone("a").obj()], [], [_rs("ReplicaSet", "rs", app="x")]
    )
    plugin.pre_filter(CycleState(cluster), pod)
    assert plugin.hint_after_assigned_pod_change(pod, None, _placed(app="y")) is S
    assert plugin.hint_after_assigned_pod_change(pod, None, _placed(app="x")) is Q


@pytest.mark.parametrize(
    ("pod", "new", "expected"),
    [
        pytest.param(SPREAD_POD, SPREAD_POD, S, id="nothing-changed"),
        pytest.param(
            SPREAD_POD,
            make_pod("pending")
            .labels(app="y")
            .spread(ZONE, selector={"matchLabels": {"app": "x"}}),
            Q,
            id="own-label-stops-matching",
        ),
        pytest.param(
            SPREAD_POD,
            make_pod("pending")
            .labels(app="x", extra="1")
            .spread(ZONE, selector={"matchLabels": {"app": "x"}}),
            S,
            id="own-label-change-irrelevant",
        ),
        pytest.param(
            SPREAD_POD,
            make_pod("pending")
            .labels(app="x")
            .spread(ZONE, selector={"matchLabels": {"app": "x"}})
            .toleration("k", "Exists"),
            S,
            id="toleration-without-honor",
        ),
        pytest.param(
            make_pod("pending")
            .labels(app="x")
            .spread(ZONE, selector={"matchLabels": {"app": "x"}}, nodeTaintsPolicy="Honor"),
            make_pod("pending")
            .labels(app="x")
            .spread(ZONE, selector={"matchLabels": {"app": "x"}}, nodeTaintsPolicy="Honor")
            .toleration("k", "Exists"),
            Q,
            id="toleration-with-honor",
        ),
    ],
)
def test_hint_after_target_pod_change(
    pod: PodBuilder, new: PodBuilder, expected: QueueingHint
) -> None:
    plugin = new_plugin(None)
    old_pod = pod.build()
    assert plugin.hint_after_target_pod_change(old_pod, old_pod, new.build()) is expected
    assert plugin.hint_after_target_pod_change(old_pod, None, new.build()) is Q


def zone_node(zone: str | None, taint: bool = False) -> Node:
    builder = make_node("n9")
    if zone is not None:
        builder.zone(zone)
    if taint:
        builder.taint("k", "v")
    return builder.build()


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(None, zone_node("a"), Q, id="add-with-key"),
        pytest.param(None, zone_node(None), S, id="add-without-key"),
        pytest.param(zone_node("a"), None, Q, id="delete-with-key"),
        pytest.param(zone_node(None), None, S, id="delete-without-key"),
        pytest.param(zone_node(None), zone_node("a"), Q, id="key-added"),
        pytest.param(zone_node("a"), zone_node(None), Q, id="key-removed"),
        pytest.param(zone_node("a"), zone_node("b"), Q, id="key-value-changed"),
        pytest.param(zone_node("a"), zone_node("a", taint=True), Q, id="taints-changed"),
        pytest.param(zone_node(None), zone_node(None, taint=True), S, id="taints-changed-no-key"),
        pytest.param(zone_node("a"), zone_node("a"), S, id="nothing-relevant"),
        pytest.param(None, "not a node", Q, id="wrong-type"),
    ],
)
def test_hint_after_node_change(old: Any, new: Any, expected: QueueingHint) -> None:
    assert new_plugin(None).hint_after_node_change(SPREAD_POD.build(), old, new) is expected


def test_plugin_is_constructed_by_class() -> None:
    assert isinstance(new_plugin(None), PodTopologySpread)


def test_default_selectors_follow_workload_changes() -> None:
    nodes = [make_node("n1").zone("a").obj(), make_node("n2").zone("b").obj()]
    placed = [make_pod("q", "default").labels(app="x").node("n1").obj()]
    cluster = build_cluster(nodes, placed, [_rs("ReplicaSet", "rs", app="x")])
    plugin = new_plugin(None)
    owned = make_pod("p").labels(app="x").owner("ReplicaSet", "rs").build()
    assert run_score(plugin, cluster, owned) == {"n1": 66, "n2": 100}
    # The ReplicaSet now selects another label: nothing placed matches any more.
    cluster.set_workload(_rs("ReplicaSet", "rs", app="y"))
    assert run_score(plugin, cluster, owned) == {"n1": 100, "n2": 100}
    cluster.remove_workload("ReplicaSet", "default", "rs")
    assert run_score(plugin, cluster, owned) is None
    # A second cluster never sees the first one's cached selectors.
    other = build_cluster(nodes, placed, [_rs("ReplicaSet", "rs", app="x")])
    assert run_score(plugin, other, owned) == {"n1": 66, "n2": 100}
