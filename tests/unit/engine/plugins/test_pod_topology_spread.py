"""PodTopologySpread Filter and Score, one case per branch and reason (kube-scheduler v1.37)."""

from __future__ import annotations

from typing import Any

import pytest

from berth.engine.cluster import Workload
from berth.engine.cluster.value_totals import TotalsFollower
from berth.engine.framework.status import Code
from berth.engine.model.labels import LabelSelector, Operator, Requirement
from berth.engine.model.pod import Pod
from berth.engine.plugins.pod_topology_spread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    new_plugin,
)
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.engine.plugins.spread_helpers import build_cluster, run_filter, run_score

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
APP_X = {"matchLabels": {"app": "x"}}
SKEW = (Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
NO_LABEL = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)


def zone_nodes() -> list[dict[str, Any]]:
    """n1, n2 in zone a; n3 in zone b; n4 has no zone label."""
    return [
        make_node("n1").zone("a").obj(),
        make_node("n2").zone("a").obj(),
        make_node("n3").zone("b").obj(),
        make_node("n4").obj(),
    ]


def x_pods(*nodes: str, namespace: str = "default", app: str = "x") -> list[dict[str, Any]]:
    return [
        make_pod(f"p{i}-{node}", namespace).labels(app=app).node(node).obj()
        for i, node in enumerate(nodes)
    ]


def incoming(**labels: str) -> PodBuilder:
    return make_pod("incoming").labels(**(labels or {"app": "x"}))


FILTER_CASES = [
    pytest.param(
        [],
        incoming(),
        None,
        id="no-constraints-skips",
    ),
    pytest.param(
        [],
        incoming().spread(ZONE, when="ScheduleAnyway", selector=APP_X),
        None,
        id="only-schedule-anyway-skips",
    ),
    pytest.param(
        x_pods("n1"),
        incoming().spread(ZONE, selector=APP_X),
        {"n1": SKEW, "n2": SKEW, "n3": None, "n4": NO_LABEL},
        id="skew-and-missing-label",
    ),
    pytest.param(
        x_pods("n1"),
        incoming().spread(ZONE, max_skew=2, selector=APP_X),
        {"n1": None, "n2": None, "n3": None, "n4": NO_LABEL},
        id="within-max-skew",
    ),
    pytest.param(
        x_pods("n1"),
        incoming(app="other").spread(ZONE, selector=APP_X),
        {"n1": None, "n2": None, "n3": None, "n4": NO_LABEL},
        id="no-self-match",
    ),
    pytest.param(
        x_pods("n1", "n3"),
        incoming().spread(ZONE, selector=APP_X, minDomains=3),
        {"n1": SKEW, "n2": SKEW, "n3": SKEW, "n4": NO_LABEL},
        id="min-domains-forces-global-min-zero",
    ),
    pytest.param(
        x_pods("n1", "n3"),
        incoming().spread(ZONE, selector=APP_X, minDomains=2),
        {"n1": None, "n2": None, "n3": None, "n4": NO_LABEL},
        id="min-domains-reached",
    ),
    pytest.param(
        x_pods("n1", "n1", namespace="other"),
        incoming().spread(ZONE, selector=APP_X),
        {"n1": None, "n2": None, "n3": None, "n4": NO_LABEL},
        id="other-namespace-not-counted",
    ),
    pytest.param(
        [make_pod("t", "default").labels(app="x").node("n1").terminating().obj()],
        incoming().spread(ZONE, selector=APP_X),
        {"n1": None, "n2": None, "n3": None, "n4": NO_LABEL},
        id="terminating-not-counted",
    ),
    pytest.param(
        x_pods("n1", "n1"),
        incoming().spread(ZONE),
        {"n1": None, "n2": None, "n3": None, "n4": NO_LABEL},
        id="nil-selector-counts-nothing",
    ),
    pytest.param(
        x_pods("n1", "n1"),
        incoming().spread(ZONE, selector={}),
        {"n1": None, "n2": None, "n3": None, "n4": NO_LABEL},
        id="empty-selector-counts-nothing",
    ),
    pytest.param(
        x_pods("n1"),
        incoming().spread(ZONE, selector={}, max_skew=1).spread(HOST, selector=APP_X),
        {"n1": SKEW, "n2": None, "n3": None, "n4": NO_LABEL},
        id="empty-selector-never-blocks",
    ),
    pytest.param(
        x_pods("n1", "n3"),
        incoming().spread(ZONE, selector=APP_X).spread(HOST, selector=APP_X),
        {"n1": SKEW, "n2": None, "n3": SKEW, "n4": NO_LABEL},
        id="two-constraints",
    ),
    pytest.param(
        x_pods("n1", "n2", "n3"),
        incoming().spread(HOST, selector=APP_X).spread(ZONE, max_skew=5, selector=APP_X),
        # n4 has a hostname but no zone: it is no hostname domain, so the hostname
        # minimum stays 1 (were n4 counted, the minimum would drop to 0 and fail n1..n3).
        {"n1": None, "n2": None, "n3": None, "n4": NO_LABEL},
        id="node-without-all-keys-not-counted",
    ),
    pytest.param(
        x_pods("n1"),
        incoming().spread(ZONE, selector=APP_X).node_selector(**{ZONE: "a"}),
        # Honor: only zone a counts, so the minimum is zone a's own count.
        {"n1": None, "n2": None, "n3": None, "n4": NO_LABEL},
        id="node-affinity-honored",
    ),
    pytest.param(
        x_pods("n1"),
        incoming()
        .spread(ZONE, selector=APP_X, nodeAffinityPolicy="Ignore")
        .node_selector(**{ZONE: "a"}),
        {"n1": SKEW, "n2": SKEW, "n3": None, "n4": NO_LABEL},
        id="node-affinity-ignored",
    ),
    pytest.param(
        x_pods("n1"),
        incoming().spread(ZONE, selector=APP_X).node_affinity_in(ZONE, "b", operator="NotIn"),
        {"n1": None, "n2": None, "n3": None, "n4": NO_LABEL},
        id="required-node-affinity-honored",
    ),
    pytest.param(
        x_pods("n1"),
        incoming().spread(ZONE, selector=APP_X, matchLabelKeys=["app"]),
        {"n1": SKEW, "n2": SKEW, "n3": None, "n4": NO_LABEL},
        id="match-label-keys",
    ),
]


@pytest.mark.parametrize(("pods", "pod", "expected"), FILTER_CASES)
def test_filter(pods: list[dict[str, Any]], pod: PodBuilder, expected: Any) -> None:
    cluster = build_cluster(zone_nodes(), pods)
    assert run_filter(new_plugin(None), cluster, pod.build()) == expected


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        pytest.param("Honor", {"n1": None, "n2": None, "n3": None}, id="tainted-node-excluded"),
        pytest.param("Ignore", {"n1": SKEW, "n2": SKEW, "n3": None}, id="tainted-node-counted"),
    ],
)
def test_filter_node_taints_policy(policy: str, expected: dict[str, Any]) -> None:
    nodes = [
        make_node("n1").zone("a").obj(),
        make_node("n2").zone("a").obj(),
        make_node("n3").zone("b").taint("dedicated", "x", "NoSchedule").obj(),
    ]
    cluster = build_cluster(nodes, x_pods("n1"))
    pod = incoming().spread(ZONE, selector=APP_X, nodeTaintsPolicy=policy).build()
    # Zone b's only node is tainted: with Honor zone b is no domain, so zone a is the minimum.
    assert run_filter(new_plugin(None), cluster, pod) == expected


def test_filter_tolerated_taint_counts_under_honor() -> None:
    nodes = [make_node("n1").zone("a").obj(), make_node("n3").zone("b").taint("d", "x").obj()]
    cluster = build_cluster(nodes, x_pods("n1"))
    pod = (
        incoming()
        .spread(ZONE, selector=APP_X, nodeTaintsPolicy="Honor")
        .toleration("d", "Equal", "x", "NoSchedule")
        .build()
    )
    assert run_filter(new_plugin(None), cluster, pod) == {"n1": SKEW, "n3": None}


def test_filter_prefer_no_schedule_taint_does_not_exclude() -> None:
    nodes = [
        make_node("n1").zone("a").obj(),
        make_node("n3").zone("b").taint("d", "x", "PreferNoSchedule").obj(),
    ]
    cluster = build_cluster(nodes, x_pods("n1"))
    pod = incoming().spread(ZONE, selector=APP_X, nodeTaintsPolicy="Honor").build()
    assert run_filter(new_plugin(None), cluster, pod) == {"n1": SKEW, "n3": None}


def test_filter_first_failing_constraint_wins() -> None:
    # n1 fails the zone skew (first constraint) and lacks the rack label (second).
    nodes = [
        make_node("n1").zone("a").obj(),
        make_node("n2").zone("a").label("rack", "r1").obj(),
        make_node("n3").zone("b").label("rack", "r2").obj(),
    ]
    cluster = build_cluster(nodes, x_pods("n2", "n2"))
    pod = incoming().spread(ZONE, selector=APP_X).spread("rack", selector=APP_X).build()
    assert run_filter(new_plugin(None), cluster, pod) == {"n1": SKEW, "n2": SKEW, "n3": None}


def test_filter_pods_on_ineligible_nodes_do_not_count() -> None:
    # n2 lacks "rack", so its pods count for no constraint even though it has a zone.
    nodes = [
        make_node("n1").zone("a").label("rack", "r1").obj(),
        make_node("n2").zone("a").obj(),
        make_node("n3").zone("b").label("rack", "r2").obj(),
    ]
    cluster = build_cluster(nodes, x_pods("n2", "n2", "n2"))
    pod = incoming().spread(ZONE, selector=APP_X).spread("rack", selector=APP_X).build()
    assert run_filter(new_plugin(None), cluster, pod) == {
        "n1": None,
        "n2": NO_LABEL,
        "n3": None,
    }


def rs_workload(namespace: str = "default") -> Workload:
    selector = LabelSelector((Requirement("app", Operator.IN, frozenset(("x",))),))
    return Workload("ReplicaSet", namespace, "rs", selector=selector)


def test_filter_list_defaults_with_do_not_schedule() -> None:
    plugin = new_plugin(
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
            ],
        }
    )
    cluster = build_cluster(zone_nodes(), x_pods("n1"), [rs_workload()])
    owned = incoming().owner("ReplicaSet", "rs").build()
    assert run_filter(plugin, cluster, owned) == {
        "n1": SKEW,
        "n2": SKEW,
        "n3": None,
        "n4": NO_LABEL,
    }
    # Without an owning workload there is no selector, hence no constraint.
    assert run_filter(plugin, cluster, incoming().build()) is None
    # A pod's own constraints replace the defaults entirely.
    own = incoming().owner("ReplicaSet", "rs").spread(HOST, max_skew=5, selector=APP_X).build()
    assert run_filter(plugin, cluster, own) == {"n1": None, "n2": None, "n3": None, "n4": None}


def test_filter_system_defaults_never_filter() -> None:
    cluster = build_cluster(zone_nodes(), x_pods("n1", "n1", "n1", "n1"), [rs_workload()])
    owned = incoming().owner("ReplicaSet", "rs").build()
    assert run_filter(new_plugin(None), cluster, owned) is None


# ---------------------------------------------------------------------- scoring


def test_score_skips_without_soft_constraints() -> None:
    cluster = build_cluster(zone_nodes(), x_pods("n1"))
    assert run_score(new_plugin(None), cluster, incoming().spread(ZONE).build()) is None
    assert run_score(new_plugin(None), cluster, incoming().build()) is None


def test_score_skips_without_nodes() -> None:
    cluster = build_cluster([])
    pod = incoming().spread(ZONE, when="ScheduleAnyway", selector=APP_X).build()
    assert run_score(new_plugin(None), cluster, pod, []) is None


def test_score_zone_spread() -> None:
    cluster = build_cluster(zone_nodes(), x_pods("n1", "n1", "n2"))
    pod = incoming().spread(ZONE, when="ScheduleAnyway", selector=APP_X).build()
    # Domains a, b: weight ln(4). a holds 3 pods: round(3 x 1.386) = 4; b: 0.
    # n4 lacks the zone label: ignored, 0.
    assert run_score(new_plugin(None), cluster, pod, raw=True) == {
        "n1": 4,
        "n2": 4,
        "n3": 0,
        "n4": 0,
    }
    assert run_score(new_plugin(None), cluster, pod) == {"n1": 0, "n2": 0, "n3": 100, "n4": 0}


def test_score_max_skew_offset_and_min_in_normalisation() -> None:
    cluster = build_cluster(zone_nodes(), x_pods("n1", "n1", "n2", "n3"))
    pod = incoming().spread(ZONE, max_skew=3, when="ScheduleAnyway", selector=APP_X).build()
    # ln(4) = 1.386: a: 3 x 1.386 + 2 = 6.16 -> 6; b: 1.386 + 2 = 3.39 -> 3.
    raw = run_score(new_plugin(None), cluster, pod, ["n1", "n2", "n3"], raw=True)
    assert raw == {"n1": 6, "n2": 6, "n3": 3}
    # 100 x (6 + 3 - s) / 6
    assert run_score(new_plugin(None), cluster, pod, ["n1", "n2", "n3"]) == {
        "n1": 50,
        "n2": 50,
        "n3": 100,
    }


def test_score_all_zero_is_all_max() -> None:
    cluster = build_cluster(zone_nodes())
    pod = incoming().spread(ZONE, when="ScheduleAnyway", selector=APP_X).build()
    assert run_score(new_plugin(None), cluster, pod) == {"n1": 100, "n2": 100, "n3": 100, "n4": 0}


def test_score_counts_infeasible_nodes_in_feasible_domains_only() -> None:
    nodes = [*zone_nodes(), make_node("n5").zone("c").obj()]
    cluster = build_cluster(nodes, x_pods("n2", "n2", "n5", "n5", "n5"))
    pod = incoming().spread(ZONE, when="ScheduleAnyway", selector=APP_X).build()
    # Feasible n1 (a), n3 (b): n2's pods count for zone a; zone c is no domain.
    assert run_score(new_plugin(None), cluster, pod, ["n1", "n3"], raw=True) == {"n1": 3, "n3": 0}


def test_score_hostname_counts_per_node_and_weight_by_feasible_nodes() -> None:
    cluster = build_cluster(zone_nodes(), x_pods("n1", "n1", "n1", "n2"))
    pod = incoming().spread(HOST, when="ScheduleAnyway", selector=APP_X).build()
    # 3 feasible nodes -> ln(5) = 1.609: n1 3 x 1.609 = 4.83 -> 5, n2 1.609 -> 2.
    assert run_score(new_plugin(None), cluster, pod, ["n1", "n2", "n3"], raw=True) == {
        "n1": 5,
        "n2": 2,
        "n3": 0,
    }


def test_score_adds_max_skew_minus_one() -> None:
    # 3 feasible nodes -> ln(5): n1 1.609 + 1 = 2.61 -> 3; the others just maxSkew - 1.
    cluster = build_cluster(zone_nodes(), x_pods("n1"))
    pod = incoming().spread(HOST, max_skew=2, when="ScheduleAnyway", selector=APP_X).build()
    assert run_score(new_plugin(None), cluster, pod, ["n1", "n2", "n3"], raw=True) == {
        "n1": 3,
        "n2": 1,
        "n3": 1,
    }


def test_score_node_affinity_policy_excludes_nodes_from_counts() -> None:
    cluster = build_cluster(zone_nodes(), x_pods("n1", "n2", "n2"))
    pod = (
        incoming()
        .spread(ZONE, when="ScheduleAnyway", selector=APP_X)
        .node_affinity_in(HOST, "n1", "n3")
        .build()
    )
    # n2 fails the pod's node affinity: its pods do not count for zone a.
    assert run_score(new_plugin(None), cluster, pod, ["n1", "n3"], raw=True) == {"n1": 1, "n3": 0}


def test_score_system_defaults_spread_owned_pods() -> None:
    cluster = build_cluster(zone_nodes(), x_pods("n1", "n1", "n3"), [rs_workload()])
    owned = incoming().owner("ReplicaSet", "rs").build()
    # hostname (maxSkew 3, 4 feasible nodes -> ln 6) then zone (maxSkew 5; domains a, b and
    # "" for n4 -> ln 5). n4 lacks a zone but is not ignored: it gets its hostname term only.
    ln6, ln5 = 1.791759469228055, 1.6094379124341003
    expected_raw = {
        "n1": round(2 * ln6 + 2 + 2 * ln5 + 4),
        "n2": round(0 + 2 + 2 * ln5 + 4),
        "n3": round(1 * ln6 + 2 + 1 * ln5 + 4),
        "n4": 2,
    }
    assert run_score(new_plugin(None), cluster, owned, raw=True) == expected_raw
    # Not selected by any workload: no default constraints.
    assert run_score(new_plugin(None), cluster, incoming().build()) is None
    # List defaulting without constraints: nothing.
    assert run_score(new_plugin({"defaultingType": "List"}), cluster, owned) is None


def test_score_list_defaults_require_all_topologies() -> None:
    plugin = new_plugin(
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}
            ],
        }
    )
    cluster = build_cluster(zone_nodes(), x_pods("n1"), [rs_workload()])
    owned = incoming().owner("ReplicaSet", "rs").build()
    assert run_score(plugin, cluster, owned) == {"n1": 0, "n2": 0, "n3": 100, "n4": 0}


def test_score_ignored_nodes_do_not_set_min_or_max() -> None:
    nodes = [
        make_node("n1").zone("a").label("rack", "r1").obj(),
        make_node("n2").zone("b").label("rack", "r2").obj(),
        make_node("n3").zone("c").obj(),
    ]
    cluster = build_cluster(nodes, x_pods("n1", "n1", "n2"))
    pod = (
        incoming()
        .spread(ZONE, when="ScheduleAnyway", selector=APP_X)
        .spread("rack", when="ScheduleAnyway", selector=APP_X)
        .build()
    )
    # 2 domains each: ln 4. n1: 2 x 1.386 x 2 = 5.5 -> 6; n2: 2 x 1.386 = 2.77 -> 3.
    assert run_score(new_plugin(None), cluster, pod, raw=True) == {"n1": 6, "n2": 3, "n3": 0}
    assert run_score(new_plugin(None), cluster, pod) == {"n1": 50, "n2": 100, "n3": 0}


def test_filter_after_many_pods_placed_between_cycles() -> None:
    nodes = [make_node(f"n{i:02d}").obj() for i in range(80)]
    pods = x_pods("n00")
    cluster = build_cluster(nodes, pods)
    plugin = new_plugin({})
    pod = make_pod("p").labels(app="x").spread(HOST, 1, selector=APP_X).build()
    assert run_filter(plugin, cluster, pod) == run_filter(
        new_plugin({}), build_cluster(nodes, pods), pod
    )
    for index in range(1, 75):
        placed = make_pod(f"q{index}").labels(app="x").node(f"n{index:02d}").obj()
        pods.append(placed)
        cluster.add_pod(Pod.from_dict(placed))
    assert run_filter(plugin, cluster, pod) == run_filter(
        new_plugin({}), build_cluster(nodes, pods), pod
    )


def test_filter_when_followed_counts_are_forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TotalsFollower, "_MAX_ENTRIES", 1)
    cluster = build_cluster(zone_nodes(), x_pods("n1", "n3", "n3"))
    plugin = new_plugin({})
    pod = (
        make_pod("p")
        .labels(app="x")
        .spread(ZONE, 1, selector=APP_X)
        .spread(HOST, 2, selector=APP_X)
        .build()
    )
    for _ in range(2):
        assert run_filter(plugin, cluster, pod) == {
            "n1": None,
            "n2": None,
            "n3": SKEW,
            "n4": NO_LABEL,
        }
