"""NodeResourcesFit: filter reasons and codes, scoring strategies, args and queueing hints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.cluster import ClusterState
from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import Action, QueueingHint, Resource
from berth.engine.framework.status import Code
from berth.engine.model.pod import Pod
from berth.engine.plugins.node_resources_fit import (
    NodeResourcesFit,
    ScoringStrategyType,
    hints,
    new_plugin,
)
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.engine.plugins.resource_cluster_strategies import (
    RESOURCE_NAMES,
    RandomCluster,
    random_clusters,
)
from tests.unit.engine.reference import node_resources_fit as reference

CODE_NAMES = {
    0: "ok",
    Code.UNSCHEDULABLE: "unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "unresolvable",
}


def cluster_of(nodes: Sequence[NodeBuilder], pods: Sequence[PodBuilder] = ()) -> ClusterState:
    cluster = ClusterState(capacity=2)
    for node in nodes:
        cluster.upsert_node(node.build())
    for pod in pods:
        cluster.add_pod(pod.build())
    return cluster


def run_filter(
    plugin: NodeResourcesFit, pod: Pod, cluster: ClusterState
) -> list[tuple[str, tuple[str, ...]]]:
    state = CycleState(cluster)
    assert plugin.pre_filter(state, pod).status.is_success
    slots = np.asarray([cluster.slot_of(n.name) for n in cluster.nodes()], dtype=np.intp)
    verdicts = plugin.filter(state, pod, slots)
    return [
        (CODE_NAMES[int(code)], verdicts.reasons_at(i)) for i, code in enumerate(verdicts.codes)
    ]


def run_score(plugin: NodeResourcesFit, pod: Pod, cluster: ClusterState) -> list[int]:
    state = CycleState(cluster)
    slots = np.asarray([cluster.slot_of(n.name) for n in cluster.nodes()], dtype=np.intp)
    assert plugin.pre_score(state, pod, slots).is_success
    return [int(s) for s in plugin.score(state, pod, slots)]


def node(**allocatable: str | int) -> NodeBuilder:
    return make_node("n1").capacity(**allocatable)


def on_node(pod: PodBuilder) -> PodBuilder:
    return pod.node("n1")


# ---------------------------------------------------------------------------------------- filter

FILTER_CASES: list[
    tuple[
        str, dict[str, Any], NodeBuilder, list[PodBuilder], PodBuilder, tuple[str, tuple[str, ...]]
    ]
] = [
    (
        "no-requests-fits",
        {},
        node(cpu="1", memory="1Gi", pods=2),
        [],
        make_pod("p"),
        ("ok", ()),
    ),
    (
        "no-requests-but-node-full-of-pods",
        {},
        node(cpu="1", memory="1Gi", pods=1),
        [on_node(make_pod("a"))],
        make_pod("p"),
        ("unschedulable", ("Too many pods",)),
    ),
    (
        "no-pods-allocatable",
        {},
        node(cpu="1", memory="1Gi"),
        [],
        make_pod("p"),
        ("unschedulable", ("Too many pods",)),
    ),
    (
        "cpu-short",
        {},
        node(cpu="1", memory="1Gi", pods=10),
        [on_node(make_pod("a").req(cpu="600m"))],
        make_pod("p").req(cpu="500m"),
        ("unschedulable", ("Insufficient cpu",)),
    ),
    (
        "cpu-exact-fit",
        {},
        node(cpu="1", memory="1Gi", pods=10),
        [on_node(make_pod("a").req(cpu="500m"))],
        make_pod("p").req(cpu="500m"),
        ("ok", ()),
    ),
    (
        "cpu-beyond-node-total-is-unresolvable",
        {},
        node(cpu="1", memory="1Gi", pods=10),
        [],
        make_pod("p").req(cpu="1500m"),
        ("unresolvable", ("Insufficient cpu",)),
    ),
    (
        "memory-short",
        {},
        node(cpu="1", memory="1000", pods=10),
        [on_node(make_pod("a").req(memory="600"))],
        make_pod("p").req(memory="500"),
        ("unschedulable", ("Insufficient memory",)),
    ),
    (
        "ephemeral-storage-short",
        {},
        node(cpu="1", memory="1Gi", ephemeral_storage="10", pods=10),
        [on_node(make_pod("a").req(ephemeral_storage="6"))],
        make_pod("p").req(ephemeral_storage="5"),
        ("unschedulable", ("Insufficient ephemeral-storage",)),
    ),
    (
        "extended-resource-short",
        {},
        node(cpu="1", memory="1Gi", example_com__gpu=2, pods=10),
        [on_node(make_pod("a").req(example_com__gpu=1))],
        make_pod("p").req(example_com__gpu=2),
        ("unschedulable", ("Insufficient example.com/gpu",)),
    ),
    (
        "extended-resource-node-lacks-is-unresolvable",
        {},
        node(cpu="1", memory="1Gi", pods=10),
        [],
        make_pod("p").req(example_com__gpu=1),
        ("unresolvable", ("Insufficient example.com/gpu",)),
    ),
    (
        "hugepages-short",
        {},
        node(cpu="1", memory="1Gi", hugepages_2Mi="4Mi", pods=10),
        [on_node(make_pod("a").req(hugepages_2Mi="2Mi"))],
        make_pod("p").req(hugepages_2Mi="4Mi"),
        ("unschedulable", ("Insufficient hugepages-2Mi",)),
    ),
    (
        "all-reasons-in-order",
        {},
        node(cpu="1", memory="1000", ephemeral_storage="10", example_com__gpu=1, pods=1),
        [
            on_node(
                make_pod("a").req(
                    cpu="900m", memory="900", ephemeral_storage="9", example_com__gpu=1
                )
            )
        ],
        make_pod("p").req(example_com__gpu=1, ephemeral_storage="2", memory="200", cpu="200m"),
        (
            "unschedulable",
            (
                "Too many pods",
                "Insufficient cpu",
                "Insufficient memory",
                "Insufficient ephemeral-storage",
                "Insufficient example.com/gpu",
            ),
        ),
    ),
    (
        "scalars-reported-in-name-order",
        {},
        node(cpu="1", memory="1Gi", pods=10),
        [],
        make_pod("p").req(zeta_io__x=1, alpha_io__y=1),
        ("unresolvable", ("Insufficient alpha.io/y", "Insufficient zeta.io/x")),
    ),
    (
        "one-unresolvable-reason-makes-the-node-unresolvable",
        {},
        node(cpu="1", memory="1000", pods=10),
        [on_node(make_pod("a").req(cpu="900m"))],
        make_pod("p").req(cpu="200m", memory="2000"),
        ("unresolvable", ("Insufficient cpu", "Insufficient memory")),
    ),
    (
        "too-many-pods-is-never-unresolvable",
        {},
        node(cpu="1", memory="1Gi", pods=0),
        [],
        make_pod("p").req(cpu="100m"),
        ("unschedulable", ("Too many pods",)),
    ),
    (
        "zero-request-not-checked-on-overcommitted-node",
        {},
        node(cpu="1", memory="1Gi", pods=10),
        [on_node(make_pod("a").req(cpu="3"))],
        make_pod("p").req(memory="1Mi"),
        ("ok", ()),
    ),
    (
        "filter-uses-actual-requests-not-nonzero-defaults",
        {},
        node(cpu="100m", memory="100", pods=10),
        [on_node(make_pod("a").req(cpu="100m", memory="100"))],
        make_pod("p").container().container(),
        ("ok", ()),
    ),
    (
        "ignored-resource-skipped",
        {"ignoredResources": ["example.com/gpu"]},
        node(cpu="1", memory="1Gi", pods=10),
        [],
        make_pod("p").req(example_com__gpu=1, other_io__fpga=1),
        ("unresolvable", ("Insufficient other.io/fpga",)),
    ),
    (
        "ignored-resource-group-skipped",
        {"ignoredResourceGroups": ["example.com"]},
        node(cpu="1", memory="1Gi", pods=10),
        [],
        make_pod("p").req(example_com__gpu=1, example_com__fpga=1, other_io__x=1),
        ("unresolvable", ("Insufficient other.io/x",)),
    ),
    (
        "ignore-args-do-not-apply-to-non-extended-resources",
        {"ignoredResources": ["hugepages-2Mi"], "ignoredResourceGroups": ["kubernetes.io"]},
        node(cpu="1", memory="1Gi", pods=10),
        [],
        make_pod("p").req(hugepages_2Mi="2Mi").req(**{"kubernetes_io__foo": 1}),
        ("unresolvable", ("Insufficient hugepages-2Mi", "Insufficient kubernetes.io/foo")),
    ),
    (
        "init-container-peak-counts",
        {},
        node(cpu="1", memory="1Gi", pods=10),
        [],
        make_pod("p").req(cpu="100m").init_container(cpu="1500m"),
        ("unresolvable", ("Insufficient cpu",)),
    ),
]


@pytest.mark.parametrize(
    ("args", "node_builder", "existing", "pod", "expected"),
    [case[1:] for case in FILTER_CASES],
    ids=[case[0] for case in FILTER_CASES],
)
def test_filter(
    args: dict[str, Any],
    node_builder: NodeBuilder,
    existing: list[PodBuilder],
    pod: PodBuilder,
    expected: tuple[str, tuple[str, ...]],
) -> None:
    cluster = cluster_of([node_builder], existing)
    assert run_filter(new_plugin(args), pod.build(), cluster) == [expected]


def test_filter_judges_many_nodes_independently() -> None:
    cluster = cluster_of(
        [
            make_node("big").capacity(cpu="4", memory="4Gi", pods=10),
            make_node("busy").capacity(cpu="4", memory="4Gi", pods=1),
            make_node("small").capacity(cpu="1", memory="4Gi", pods=10),
        ],
        [make_pod("a").node("busy")],
    )
    result = run_filter(new_plugin(None), make_pod("p").req(cpu="2").build(), cluster)
    assert result == [
        ("ok", ()),
        ("unschedulable", ("Too many pods",)),
        ("unresolvable", ("Insufficient cpu",)),
    ]


def test_pre_filter_never_skips_and_filter_works_without_it() -> None:
    cluster = cluster_of([node(cpu="1", memory="1Gi", pods=10)])
    plugin = new_plugin(None)
    pod = make_pod("p").build()
    state = CycleState(cluster)
    assert plugin.pre_filter(state, pod).status.code is Code.SUCCESS
    verdicts = plugin.filter(
        CycleState(cluster), make_pod("q").req(cpu="2").build(), np.asarray([0])
    )
    assert verdicts.reasons_at(0) == ("Insufficient cpu",)


def test_a_resource_no_node_had_fits_once_a_node_offers_it() -> None:
    # The plugin remembers what it worked out per request; a new column must not be missed.
    cluster = cluster_of([node(cpu="1", memory="1Gi", pods=10)])
    plugin = new_plugin(None)
    pod = make_pod("p").req(example_com__gpu=1).build()
    assert run_filter(plugin, pod, cluster) == [("unresolvable", ("Insufficient example.com/gpu",))]
    cluster.upsert_node(
        make_node("gpu").capacity(cpu="1", memory="1Gi", pods=10, example_com__gpu=1).build()
    )
    assert run_filter(plugin, pod, cluster) == [
        ("unresolvable", ("Insufficient example.com/gpu",)),
        ("ok", ()),
    ]


def test_one_plugin_judges_clusters_whose_columns_are_laid_out_differently() -> None:
    plugin = new_plugin(None)
    pod = make_pod("p").req(example_com__gpu=2).build()
    gpu_first = cluster_of(
        [make_node("a").capacity(cpu="1", pods=9, example_com__gpu=1, hugepages_2Mi=4)]
    )
    hugepages_first = cluster_of(
        [
            make_node("b").capacity(cpu="1", pods=9, hugepages_2Mi=4),
            make_node("c").capacity(cpu="1", pods=9, example_com__gpu=4),
        ]
    )
    assert gpu_first.resource_width == hugepages_first.resource_width
    assert run_filter(plugin, pod, gpu_first) == [
        ("unresolvable", ("Insufficient example.com/gpu",))
    ]
    assert run_filter(plugin, pod, hugepages_first) == [
        ("unresolvable", ("Insufficient example.com/gpu",)),
        ("ok", ()),
    ]


# ---------------------------------------------------------------------------------------- score

LEAST = {"scoringStrategy": {"type": "LeastAllocated"}}
MOST = {"scoringStrategy": {"type": "MostAllocated"}}


def rtcr(
    shape: list[tuple[int, int]], resources: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    strategy: dict[str, Any] = {
        "type": "RequestedToCapacityRatio",
        "requestedToCapacityRatio": {"shape": [{"utilization": u, "score": s} for u, s in shape]},
    }
    if resources is not None:
        strategy["resources"] = resources
    return {"scoringStrategy": strategy}


SCORE_CASES: list[
    tuple[str, dict[str, Any] | None, NodeBuilder, list[PodBuilder], PodBuilder, int]
] = [
    (
        # the worked example: (4000 - 1100) * 100 / 4000 = 72 (memory not allocatable: left out)
        "worked-example-least-allocated",
        None,
        node(cpu="4", pods=10),
        [on_node(make_pod("a").req(cpu="900m")), on_node(make_pod("b"))],
        make_pod("p"),
        72,
    ),
    (
        # cpu (4000-1000)*100/4000 = 75; memory (1000-500)*100/1000 = 50; mean 62
        "least-allocated-cpu-and-memory",
        None,
        node(cpu="4", memory="1000", pods=10),
        [on_node(make_pod("a").req(cpu="500m", memory="250"))],
        make_pod("p").req(cpu="500m", memory="250"),
        62,
    ),
    (
        # cpu 75 * 3 + memory 50 * 1 = 275 / 4 = 68
        "least-allocated-weights",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 3}, {"name": "memory"}],
            }
        },
        node(cpu="4", memory="1000", pods=10),
        [on_node(make_pod("a").req(cpu="500m", memory="250"))],
        make_pod("p").req(cpu="500m", memory="250"),
        68,
    ),
    (
        # memory over capacity scores 0; cpu (1000-200)*100/1000 = 80; mean 40
        "least-allocated-over-capacity-is-zero",
        LEAST,
        node(cpu="1", memory="1000", pods=10),
        [],
        make_pod("p").req(cpu="200m", memory="5000"),
        40,
    ),
    (
        # nonzero defaults per container: two request-less containers = 200m cpu
        "least-allocated-nonzero-defaults-per-container",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 1}],
            }
        },
        node(cpu="1", memory="1Gi", pods=10),
        [],
        make_pod("p").container(),
        80,
    ),
    (
        # cpu 1000m -> 25 ; memory nonzero 200Mi of 800Mi -> 25 ; mean 25
        "most-allocated",
        MOST,
        node(cpu="4", memory="800Mi", pods=10),
        [on_node(make_pod("a").req(cpu="500m", memory="100Mi"))],
        make_pod("p").req(cpu="500m", memory="100Mi"),
        25,
    ),
    (
        # requested clamped to capacity: 100 for cpu, memory 200Mi/1000Mi = 20 -> 60
        "most-allocated-clamps-to-capacity",
        MOST,
        node(cpu="1", memory="1000Mi", pods=10),
        [],
        make_pod("p").req(cpu="3"),
        60,
    ),
    (
        # shape 0->0, 100->10: utilization itself. cpu 50, memory 25 -> 37.5 -> 38 (half away from zero)
        "rtcr-rounds-half-up",
        rtcr([(0, 0), (100, 10)]),
        node(cpu="1", memory="800", pods=10),
        [],
        make_pod("p").req(cpu="500m", memory="200"),
        38,
    ),
    (
        # decreasing shape 0->10, 100->0: f(u) = 100 + (-100 * u) / 100 truncated toward zero.
        # cpu u=33 -> 67 ; memory u=10 -> 90 ; mean 78.5 -> 79
        "rtcr-decreasing-shape",
        rtcr([(0, 10), (100, 0)]),
        node(cpu="3", memory="1000", pods=10),
        [],
        make_pod("p").req(cpu="1", memory="100"),
        79,
    ),
    (
        # f=0 resources drop out of the weight sum: cpu u=100 -> f 0 (ignored), memory u=50 -> 50
        "rtcr-zero-scores-leave-the-average",
        rtcr([(0, 10), (100, 0)]),
        node(cpu="1", memory="1000", pods=10),
        [],
        make_pod("p").req(cpu="1", memory="500"),
        50,
    ),
    (
        # flat before the first point and after the last; utilization over capacity counts as 100
        "rtcr-flat-outside-points",
        rtcr([(20, 3), (60, 7)], [{"name": "cpu", "weight": 1}]),
        node(cpu="1", memory="1000", pods=10),
        [],
        make_pod("p").req(cpu="5"),
        70,
    ),
    (
        # 10% -> below first point: 30
        "rtcr-below-first-point",
        rtcr([(20, 3), (60, 7)], [{"name": "cpu", "weight": 1}]),
        node(cpu="1", memory="1000", pods=10),
        [],
        make_pod("p").req(cpu="100m"),
        30,
    ),
    (
        # scalar the pod does not request is left out: only cpu (75) counts
        "unrequested-scalar-left-out",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [
                    {"name": "cpu", "weight": 1},
                    {"name": "example.com/gpu", "weight": 5},
                ],
            }
        },
        node(cpu="4", memory="1000", example_com__gpu=4, pods=10),
        [],
        make_pod("p").req(cpu="1"),
        75,
    ),
    (
        # requested scalar: cpu 75*1 + gpu (4-1-1)*100/4 = 50*5 -> 325 / 6 = 54
        "requested-scalar-uses-actual-requests",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [
                    {"name": "cpu", "weight": 1},
                    {"name": "example.com/gpu", "weight": 5},
                ],
            }
        },
        node(cpu="4", memory="1000", example_com__gpu=4, pods=10),
        [on_node(make_pod("a").req(cpu="0", example_com__gpu=1))],
        make_pod("p").req(cpu="1", example_com__gpu=1),
        54,
    ),
    (
        # ephemeral storage counts even unrequested (not a scalar): (10-4)*100/10 = 60
        "ephemeral-storage-counts-when-unrequested",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "ephemeral-storage", "weight": 1}],
            }
        },
        node(cpu="4", memory="1000", ephemeral_storage="10", pods=10),
        [on_node(make_pod("a").req(ephemeral_storage="4"))],
        make_pod("p"),
        60,
    ),
    (
        # "pods" has no allocatable on the scoring side; nothing scored -> 0
        "pods-resource-never-scored",
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "resources": [{"name": "pods", "weight": 1}],
            }
        },
        node(cpu="4", memory="1000", pods=10),
        [on_node(make_pod("a"))],
        make_pod("p"),
        0,
    ),
    (
        "no-allocatable-at-all-scores-zero",
        LEAST,
        node(pods=10),
        [],
        make_pod("p").req(cpu="1"),
        0,
    ),
]


@pytest.mark.parametrize(
    ("args", "node_builder", "existing", "pod", "expected"),
    [case[1:] for case in SCORE_CASES],
    ids=[case[0] for case in SCORE_CASES],
)
def test_score(
    args: dict[str, Any] | None,
    node_builder: NodeBuilder,
    existing: list[PodBuilder],
    pod: PodBuilder,
    expected: int,
) -> None:
    cluster = cluster_of([node_builder], existing)
    assert run_score(new_plugin(args), pod.build(), cluster) == [expected]


def test_score_works_without_pre_score() -> None:
    cluster = cluster_of(
        [node(cpu="4", pods=10)], [on_node(make_pod("a").req(cpu="900m")), on_node(make_pod("b"))]
    )
    plugin = new_plugin(None)
    scores = plugin.score(
        CycleState(cluster), make_pod("p").build(), np.asarray([0], dtype=np.intp)
    )
    assert scores.tolist() == [72]


# ---------------------------------------------------------------------------------------- args


def test_default_args() -> None:
    plugin = new_plugin(None)
    strategy = plugin.args.scoring_strategy
    assert strategy.type is ScoringStrategyType.LEAST_ALLOCATED
    assert [(r.name, r.weight) for r in strategy.resources] == [("cpu", 1), ("memory", 1)]
    assert plugin.args.ignored_resources == frozenset()
    assert plugin.args.ignored_resource_groups == frozenset()


@pytest.mark.parametrize(
    ("args", "resources"),
    [
        ({"scoringStrategy": {"type": "MostAllocated"}}, [("cpu", 1), ("memory", 1)]),
        (
            {"scoringStrategy": {"type": "MostAllocated", "resources": []}},
            [("cpu", 1), ("memory", 1)],
        ),
        (
            {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 0}, {"name": "x.io/y"}],
                }
            },
            [("cpu", 1), ("x.io/y", 1)],
        ),
        (
            {"kind": "NodeResourcesFitArgs", "apiVersion": "kubescheduler.config.k8s.io/v1"},
            [("cpu", 1), ("memory", 1)],
        ),
    ],
    ids=[
        "no-resources",
        "empty-resources",
        "zero-and-missing-weights",
        "kind-and-apiversion-allowed",
    ],
)
def test_args_defaults(args: dict[str, Any], resources: list[tuple[str, int]]) -> None:
    strategy = new_plugin(args).args.scoring_strategy
    assert [(r.name, r.weight) for r in strategy.resources] == resources


BAD_ARGS: list[tuple[str, dict[str, Any], str]] = [
    ("unknown-field", {"scoringStrateg": {}}, "scoringStrateg"),
    ("unknown-type", {"scoringStrategy": {"type": "Balanced"}}, "scoringStrategy.type"),
    ("empty-type", {"scoringStrategy": {}}, "scoringStrategy.type"),
    (
        "weight-too-big",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 101}],
            }
        },
        "scoringStrategy.resources[0].weight",
    ),
    (
        "weight-negative",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": -1}],
            }
        },
        "scoringStrategy.resources[0].weight",
    ),
    (
        "weight-not-int",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": "2"}],
            }
        },
        "scoringStrategy.resources[0].weight",
    ),
    (
        "rtcr-without-params",
        {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
        "scoringStrategy.requestedToCapacityRatio",
    ),
    ("rtcr-empty-shape", rtcr([]), "scoringStrategy.requestedToCapacityRatio.shape"),
    (
        "rtcr-unsorted",
        rtcr([(50, 1), (50, 2)]),
        "scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
    ),
    (
        "rtcr-utilization-range",
        rtcr([(0, 1), (101, 2)]),
        "scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
    ),
    (
        "rtcr-score-range",
        rtcr([(0, 11)]),
        "scoringStrategy.requestedToCapacityRatio.shape[0].score",
    ),
    (
        "rtcr-negative-score",
        rtcr([(0, -1)]),
        "scoringStrategy.requestedToCapacityRatio.shape[0].score",
    ),
    (
        "shape-forbidden-for-other-types",
        {"scoringStrategy": {"type": "LeastAllocated", "requestedToCapacityRatio": {"shape": []}}},
        "scoringStrategy.requestedToCapacityRatio",
    ),
    ("ignored-resource-invalid", {"ignoredResources": ["not valid!"]}, "ignoredResources[0]"),
    ("ignored-resource-bad-prefix", {"ignoredResources": ["Example.COM/x"]}, "ignoredResources[0]"),
    (
        "ignored-group-with-slash",
        {"ignoredResourceGroups": ["example.com/gpu"]},
        "ignoredResourceGroups[0]",
    ),
    ("ignored-group-invalid", {"ignoredResourceGroups": ["-bad"]}, "ignoredResourceGroups[0]"),
    ("ignored-not-a-list", {"ignoredResources": "example.com/gpu"}, "ignoredResources"),
]


@pytest.mark.parametrize(("args", "field"), [c[1:] for c in BAD_ARGS], ids=[c[0] for c in BAD_ARGS])
def test_bad_args(args: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidPluginArgsError) as caught:
        new_plugin(args)
    assert caught.value.plugin == "NodeResourcesFit"
    assert caught.value.field == field


# ---------------------------------------------------------------------------------------- events


def test_events_registered() -> None:
    events = {
        (e.event.resource, e.event.action): e.hint for e in new_plugin(None).events_to_register()
    }
    node_change = events.pop((Resource.NODE, Action.ADD | Action.UPDATE_NODE_ALLOCATABLE))
    assert node_change is not None  # after_node_change with the live cluster's device classes
    assert events == {
        (Resource.ASSIGNED_POD, Action.DELETE): hints.after_assigned_pod_delete,
        (Resource.ASSIGNED_POD, Action.UPDATE_POD_SCALE_DOWN): hints.after_assigned_pod_scale_down,
        (Resource.TARGET_POD, Action.UPDATE_POD_SCALE_DOWN): hints.after_own_scale_down,
        (Resource.DEVICE_CLASS, Action.ADD | Action.UPDATE): hints.after_device_class_change,
    }


NODE_HINT_CASES = [
    ("added-node-fits", None, node(cpu="2", pods=1), QueueingHint.QUEUE),
    ("added-node-too-small", None, node(cpu="500m", pods=1), QueueingHint.SKIP),
    ("added-node-without-pod-room", None, node(cpu="2", pods=0), QueueingHint.SKIP),
    ("cpu-grew-and-fits", node(cpu="500m", pods=1), node(cpu="2", pods=1), QueueingHint.QUEUE),
    ("pods-grew", node(cpu="2", pods=1), node(cpu="2", pods=2), QueueingHint.QUEUE),
    (
        "unrequested-resource-grew",
        node(cpu="2", memory="1", pods=1),
        node(cpu="2", memory="2", pods=1),
        QueueingHint.SKIP,
    ),
    ("shrank-but-still-fits", node(cpu="4", pods=1), node(cpu="2", pods=1), QueueingHint.SKIP),
]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [c[1:] for c in NODE_HINT_CASES],
    ids=[c[0] for c in NODE_HINT_CASES],
)
def test_node_change_hint(
    old: NodeBuilder | None, new: NodeBuilder, expected: QueueingHint
) -> None:
    pod = make_pod("p").req(cpu="1").build()
    assert hints.after_node_change(pod, old.build() if old else None, new.build()) is expected


def test_node_change_hint_checks_ignored_resources_too() -> None:
    # kube-scheduler's hint fits the pod without the ignore args: a node lacking an
    # ignored resource is still skipped
    pod = make_pod("p").req(example_com__gpu=1).build()
    assert hints.after_node_change(pod, None, node(cpu="1", pods=1).build()) is QueueingHint.SKIP
    assert hints.after_node_change(pod, None, "garbage") is QueueingHint.QUEUE


@pytest.mark.parametrize(
    ("deleted", "expected"),
    [
        (make_pod("a").node("n1"), QueueingHint.QUEUE),
        (make_pod("a").nominated("n1"), QueueingHint.QUEUE),
        (make_pod("a"), QueueingHint.SKIP),
    ],
    ids=["bound", "nominated", "never-placed"],
)
def test_assigned_pod_delete_hint(deleted: PodBuilder, expected: QueueingHint) -> None:
    assert hints.after_assigned_pod_delete(make_pod("p").build(), deleted.build(), None) is expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            make_pod("a").node("n1").req(cpu="2"),
            make_pod("a").node("n1").req(cpu="1"),
            QueueingHint.QUEUE,
        ),
        (
            make_pod("a").node("n1").req(memory="2"),
            make_pod("a").node("n1").req(memory="1"),
            QueueingHint.SKIP,
        ),
        (make_pod("a").req(cpu="2"), make_pod("a").req(cpu="1"), QueueingHint.SKIP),
    ],
    ids=["requested-resource-shrank", "other-resource-shrank", "unbound-pod"],
)
def test_assigned_pod_scale_down_hint(
    old: PodBuilder, new: PodBuilder, expected: QueueingHint
) -> None:
    pod = make_pod("p").req(cpu="1").build()
    assert hints.after_assigned_pod_scale_down(pod, old.build(), new.build()) is expected


def test_own_scale_down_hint() -> None:
    pod = make_pod("p").uid("me").req(cpu="1").build()
    assert hints.after_own_scale_down(pod, pod, pod) is QueueingHint.QUEUE
    other = make_pod("q").uid("other").build()
    assert hints.after_own_scale_down(pod, other, other) is QueueingHint.SKIP


# ---------------------------------------------------------------------------------------- properties


@st.composite
def fit_args(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from([t.value for t in ScoringStrategyType]))
    names = draw(st.lists(st.sampled_from(RESOURCE_NAMES), unique=True, max_size=4))
    strategy: dict[str, Any] = {
        "type": kind,
        "resources": [{"name": n, "weight": draw(st.integers(1, 5))} for n in names],
    }
    if kind == "RequestedToCapacityRatio":
        utilizations = sorted(
            draw(st.lists(st.integers(0, 100), unique=True, min_size=1, max_size=4))
        )
        strategy["requestedToCapacityRatio"] = {
            "shape": [{"utilization": u, "score": draw(st.integers(0, 10))} for u in utilizations]
        }
    args: dict[str, Any] = {"scoringStrategy": strategy}
    if draw(st.booleans()):
        args["ignoredResources"] = ["example.com/gpu"]
    return args


@settings(max_examples=150, deadline=None)
@given(world=random_clusters(), args=fit_args())
def test_filter_and_score_equal_the_reference(world: RandomCluster, args: dict[str, Any]) -> None:
    plugin = new_plugin(args)
    strategy = plugin.args.scoring_strategy
    state = CycleState(world.cluster)
    assert plugin.pre_filter(state, world.pod).status.is_success
    verdicts = plugin.filter(state, world.pod, world.slots)
    assert plugin.pre_score(state, world.pod, world.slots).is_success
    scores = plugin.score(state, world.pod, world.slots)
    for index, each in enumerate(world.nodes):
        pods = world.pods_by_node[each.name]
        code, reasons = reference.fit_filter(
            world.pod, each, pods, ignored_resources=plugin.args.ignored_resources
        )
        assert (CODE_NAMES[int(verdicts.codes[index])], list(verdicts.reasons_at(index))) == (
            code,
            reasons,
        )
        expected = reference.fit_score(
            world.pod,
            each,
            pods,
            strategy=strategy.type.value,
            resources=[(r.name, r.weight) for r in strategy.resources],
            shape=strategy.shape,
        )
        assert int(scores[index]) == expected
