"""The reference's "things a faithful re-implementation most often gets wrong" (§12), one by one.

Each test is named after its item (test_NN_...) and checks the point through the real
default profile (`build_framework(default_profile_config())`), the scheduling queue, the
cache, the binder or the message renderer. Where the reference is wrong for v1.37 the
upstream source wins: InterPodAffinity normalises by plain min-max over the scored nodes,
BalancedAllocation is `50 + (50 + with - without) / 2`, and the taint reason is
`node(s) had untolerated taint(s)`.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest

from berth.engine.algorithm import (
    Decision,
    Scheduled,
    SearchState,
    Unschedulable,
    schedule_one,
)
from berth.engine.cluster import ClusterState, Workload
from berth.engine.extenders import encode_binding_args, encode_extender_args, scaled_extender_score
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.interfaces import NormalizeScorePlugin
from berth.engine.framework.runtime import Framework, build_framework
from berth.engine.model.pdb import PodDisruptionBudget
from berth.engine.model.pod import Pod
from berth.kube.binder import ApiBinder, binding_body, binding_path
from berth.kube.reporting import ApiReporter
from berth.profiles import default_profile_config
from berth.scheduling.cache import SchedulerCache
from berth.scheduling.cluster_events import NODE_ADD
from berth.scheduling.loop import Scheduler
from berth.scheduling.ports import BindOutcome
from berth.scheduling.queue import QueuedPodInfo, SchedulingQueue
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.fakes import FakeBinder, FakeClock, FakeReporter
from tests.unit.kube.fakes import FakeSession, FakeWallClock

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
MI = 1024 * 1024

# ---------------------------------------------------------------------------- helpers


def default_framework(name: str = "default-scheduler") -> Framework:
    """A fresh default profile (fresh: DefaultPreemption keeps its own random state)."""
    return build_framework(default_profile_config(name))


def cluster(
    *nodes: NodeBuilder, pods: Iterable[PodBuilder] = (), pdbs: Iterable[dict[str, Any]] = ()
) -> ClusterState:
    state = ClusterState()
    for node in nodes:
        state.upsert_node(node.build())
    for pod in pods:
        state.add_pod(pod.build())
    for pdb in pdbs:
        state.set_pdb(PodDisruptionBudget.from_dict(pdb))
    return state


def decide(
    state: ClusterState,
    pod: PodBuilder | Pod,
    *,
    seed: int = 1,
    search: SearchState | None = None,
    nominated: Mapping[str, Sequence[Pod]] | None = None,
) -> Decision:
    return schedule_one(
        default_framework(),
        state,
        pod if isinstance(pod, Pod) else pod.build(),
        search=search or SearchState(),
        rng=random.Random(seed),
        nominated=nominated,
    )


def message(state: ClusterState, pod: PodBuilder) -> str:
    decision = decide(state, pod)
    assert isinstance(decision, Unschedulable), decision
    return decision.message


def node_of(state: ClusterState, pod: PodBuilder | Pod, **options: Any) -> str:
    decision = decide(state, pod, **options)
    assert isinstance(decision, Scheduled), decision
    return decision.node_name


def feasible(state: ClusterState, pod: PodBuilder) -> set[str]:
    """Names of the nodes that pass the default profile's PreFilter and Filter plugins."""
    framework = default_framework()
    cycle = CycleState(state)
    built = pod.build()
    status, allowed = framework.run_pre_filter(cycle, built)
    if not status.is_success:
        return set()
    outcome = framework.run_filters(cycle, built, state.node_order())
    names = {state.node_at(int(slot)).name for slot in outcome.feasible}
    return names if allowed is None else names & set(allowed)


def scores(state: ClusterState, pod: PodBuilder, plugin_name: str) -> dict[str, int] | None:
    """One default-profile plugin's normalised scores over all nodes; None if PreScore skipped it."""
    framework = default_framework()
    cycle = CycleState(state)
    built = pod.build()
    status, _ = framework.run_pre_filter(cycle, built)
    assert status.is_success, status
    slots = state.node_order()
    assert framework.run_pre_score(cycle, built, slots).is_success
    if plugin_name in cycle.skip_score_plugins:
        return None
    plugin: Any = framework.plugins[plugin_name]
    raw = plugin.score(cycle, built, slots)
    if isinstance(plugin, NormalizeScorePlugin):
        raw = plugin.normalize_scores(cycle, built, slots, raw)
    return {
        state.node_at(int(slot)).name: int(value) for slot, value in zip(slots, raw, strict=True)
    }


def nodes(count: int) -> list[NodeBuilder]:
    return [make_node(f"n{i:04d}") for i in range(count)]


def small(name: str, cpu: str = "1") -> NodeBuilder:
    return make_node(name).capacity(cpu=cpu, memory="4Gi", pods=110)


# ---------------------------------------------------------------------------- 1


def test_01_filter_ignores_nonzero_defaults() -> None:
    """The 100m/200Mi defaults are for scoring only: a pod without requests fits a node with
    next to nothing free, and a full pod count is the only thing that can stop it."""
    tiny = make_node("tiny").capacity(cpu="10m", memory="10Mi", pods=110)
    assert node_of(cluster(tiny), make_pod("p")) == "tiny"

    full = make_node("full").capacity(cpu="64", memory="64Gi", pods=1)
    assert message(cluster(full, pods=[make_pod("x").node("full")]), make_pod("p")) == (
        "0/1 nodes are available: 1 Too many pods. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )


# ---------------------------------------------------------------------------- 2


@pytest.mark.parametrize(
    ("pod", "expected_millis"),
    [
        # max(1 + 0.5 sidecar, 2 init + 0.5 sidecar started before it) + 0.1 overhead
        (
            make_pod("p")
            .req(cpu="1")
            .init_container(sidecar=True, cpu="500m")
            .init_container(cpu="2")
            .set("spec.overhead", {"cpu": "100m"}),
            2600,
        ),
        # the sidecar starts after the init container: it does not add to it
        (
            make_pod("p")
            .req(cpu="1")
            .init_container(cpu="2")
            .init_container(sidecar=True, cpu="500m")
            .set("spec.overhead", {"cpu": "100m"}),
            2100,
        ),
        # regular containers (summed) dominate a smaller init container
        (make_pod("p").req(cpu="1").req(1, cpu="1").init_container(cpu="1500m"), 2000),
    ],
    ids=["sidecar-then-init", "init-then-sidecar", "regular-sum-dominates"],
)
def test_02_init_container_math(pod: PodBuilder, expected_millis: int) -> None:
    """Effective request = max(sum(regular) + sidecars, max over init containers of (own +
    sidecars started before it)) + overhead; "sum everything" would over-reserve."""
    exact = make_node("exact").capacity(cpu=f"{expected_millis}m", memory="4Gi", pods=10)
    short = make_node("short").capacity(cpu=f"{expected_millis - 1}m", memory="4Gi", pods=10)
    assert node_of(cluster(exact), pod) == "exact"
    assert message(cluster(short), pod).startswith("0/1 nodes are available: 1 Insufficient cpu.")


# ---------------------------------------------------------------------------- 3


def test_03_nonzero_defaults_apply_per_container() -> None:
    """Scoring counts 100m/200Mi for *each* container without requests: three such containers
    weigh 300m/600Mi, so LeastAllocated on a 1-cpu/2000Mi node gives (70 + 70) / 2."""
    node = make_node("n").capacity(cpu="1", memory="2000Mi", pods=10)
    three = make_pod("three").container().container()
    one = make_pod("one")
    assert (three.build().nonzero_cpu, three.build().nonzero_memory) == (300, 600 * MI)
    assert scores(cluster(node), three, "NodeResourcesFit") == {"n": 70}
    assert scores(cluster(node), one, "NodeResourcesFit") == {"n": 90}


# ---------------------------------------------------------------------------- 4


def test_04_balanced_allocation_uses_actual_requests_and_skips_best_effort() -> None:
    """BalancedAllocation sees the real requests (a cpu-only pod asks 0 memory, not 200Mi) and
    is skipped for a pod requesting none of its resources. On a 1-cpu/400Mi node a 500m pod
    gives balance 75 with it, 100 without: 50 + (50 + 75 - 100) // 2 = 62 (with the 200Mi
    default it would be a perfectly balanced 75)."""
    node = make_node("n").capacity(cpu="1", memory="400Mi", pods=10)
    assert scores(
        cluster(node), make_pod("cpu-only").req(cpu="500m"), "NodeResourcesBalancedAllocation"
    ) == {"n": 62}
    assert scores(cluster(node), make_pod("best-effort"), "NodeResourcesBalancedAllocation") is None


# ---------------------------------------------------------------------------- 5


def test_05_taint_message_is_generic_and_prefer_no_schedule_never_filters() -> None:
    """Since 1.35 the reason no longer prints the taint: `node(s) had untolerated taint(s)`.
    A PreferNoSchedule taint only lowers the score, it never rejects."""
    tainted = make_node("tainted").taint("gpu", "true", "NoSchedule")
    assert message(cluster(tainted), make_pod("p")) == (
        "0/1 nodes are available: 1 node(s) had untolerated taint(s). "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    preferred = make_node("preferred").taint("gpu", "true", "PreferNoSchedule")
    assert node_of(cluster(preferred), make_pod("p")) == "preferred"


# ---------------------------------------------------------------------------- 6

NOT_HELPFUL = "Preemption is not helpful for scheduling."


@pytest.mark.parametrize(
    ("state", "pod", "expected"),
    [
        pytest.param(
            lambda: cluster(
                *[make_node(f"t{i:02d}").taint("dedicated", "x") for i in range(10)],
                small("s0"),
                small("s1"),
            ),
            make_pod("p").req(cpu="2"),
            "0/12 nodes are available: 10 node(s) had untolerated taint(s), 2 Insufficient cpu. "
            f"preemption: 0/12 nodes are available: 12 {NOT_HELPFUL}",
            id="sorted-as-strings",
        ),
        pytest.param(
            lambda: cluster(small("s0")),
            make_pod("p").req(cpu="2", memory="8Gi"),
            "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. "
            f"preemption: 0/1 nodes are available: 1 {NOT_HELPFUL}",
            id="counts-exceed-node-count",
        ),
        pytest.param(
            lambda: cluster(small("s0"), small("s1"), small("s2")),
            make_pod("p")
            .req(cpu="2")
            .required_node_terms(
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["s0"]}]}
            ),
            "0/3 nodes are available: 1 Insufficient cpu, "
            "2 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
            f"preemption: 0/3 nodes are available: 3 {NOT_HELPFUL}",
            id="absent-nodes-from-absent-status",
        ),
        pytest.param(
            lambda: cluster(small("s0"), small("s1")),
            make_pod("p").required_node_terms(
                {
                    "matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": ["s0"]},
                        {"key": "metadata.name", "operator": "In", "values": ["s1"]},
                    ]
                }
            ),
            # DynamicResources' PostFilter runs first and fails to read the state its
            # PreFilter (never reached) would have written: kube-scheduler's words.
            "0/2 nodes are available: pod affinity terms conflict. not found",
            id="pre-filter-replaces-histogram",
        ),
        pytest.param(
            lambda: cluster(small("s0"), pods=[make_pod("low").node("s0").req(cpu="1")]),
            make_pod("p").req(cpu="1").priority(10),
            "0/1 nodes are available: 1 Insufficient cpu. "
            "preemption: found a potential placement for pod on node s0, preempting 1 victims",
            id="preemption-suffix-single-space",
        ),
    ],
)
def test_06_failed_scheduling_histogram(state: Any, pod: PodBuilder, expected: str) -> None:
    """The histogram sorts "<count> <reason>" as strings, counts every reason of a node,
    counts never-judged nodes under the absent-node status, is replaced by a PreFilter
    rejection, and gets the PostFilter message after a single space."""
    assert message(state(), pod) == expected


# ---------------------------------------------------------------------------- 7


def test_07_only_first_failing_filter_per_node() -> None:
    """A node that fails several filters is reported (and requeued) for the first one only:
    the tainted small node counts as tainted, never as short of cpu."""
    tainted_and_small = small("both").taint("dedicated", "x")
    decision = decide(cluster(tainted_and_small), make_pod("p").req(cpu="2"))
    assert isinstance(decision, Unschedulable)
    assert decision.message.startswith(
        "0/1 nodes are available: 1 node(s) had untolerated taint(s)."
    )
    assert decision.unschedulable_plugins == {"TaintToleration"}

    decision = decide(cluster(tainted_and_small, small("plain")), make_pod("p").req(cpu="2"))
    assert isinstance(decision, Unschedulable)
    assert decision.message.startswith(
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s)."
    )
    assert decision.unschedulable_plugins == {"TaintToleration", "NodeResourcesFit"}


# ---------------------------------------------------------------------------- 8


def test_08_taint_toleration_normalisation_is_reversed() -> None:
    """TaintToleration counts intolerable PreferNoSchedule taints and reverses the max-scaled
    count (100 - 100*c//max, so 1 of 3 gives 67); nobody tainted means 100 everywhere."""
    prefer = "PreferNoSchedule"
    state = cluster(
        make_node("three")
        .taint("a", effect=prefer)
        .taint("b", effect=prefer)
        .taint("c", effect=prefer),
        make_node("one").taint("a", effect=prefer),
        make_node("none"),
    )
    assert scores(state, make_pod("p"), "TaintToleration") == {"three": 0, "one": 67, "none": 100}
    clean = cluster(make_node("x"), make_node("y"))
    assert scores(clean, make_pod("p"), "TaintToleration") == {"x": 100, "y": 100}


def test_08_pod_topology_spread_normalisation() -> None:
    """Raw score round(count * log(domains + 2)) per node, then 100 * (max + min - s) // max;
    a node without the topology key is ignored and scores 0. Zones hold 2/1/0 matching pods:
    raw 3 (rounded from 3.2), 2 (from 1.6), 0 -> 0, 33, 100."""
    state = cluster(
        make_node("a").zone("z1"),
        make_node("b").zone("z2"),
        make_node("c").zone("z3"),
        make_node("d"),
        pods=[
            make_pod("w1").labels(app="web").node("a"),
            make_pod("w2").labels(app="web").node("a"),
            make_pod("w3").labels(app="web").node("b"),
        ],
    )
    pod = make_pod("p").spread(
        ZONE, when="ScheduleAnyway", selector={"matchLabels": {"app": "web"}}
    )
    assert scores(state, pod, "PodTopologySpread") == {"a": 0, "b": 33, "c": 100, "d": 0}


def test_08_inter_pod_affinity_normalisation_is_plain_min_max() -> None:
    """v1.37 scales (s - min) / (max - min) over the scored nodes, min and max *not* seeded at
    0 (the reference says seeded; the source wins): raw 40/20/10 -> 100, 33, 0."""
    web = [("a", 4), ("b", 2), ("c", 1)]
    state = cluster(
        make_node("a"),
        make_node("b"),
        make_node("c"),
        pods=[
            make_pod(f"{n}{i}").labels(app="web").node(n) for n, count in web for i in range(count)
        ],
    )
    pod = make_pod("p").pod_affinity(
        "podAffinity",
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST},
        weight=10,
    )
    assert scores(state, pod, "InterPodAffinity") == {"a": 100, "b": 33, "c": 0}


def test_08_node_affinity_normalisation_scales_by_max() -> None:
    """Preferred node affinity sums matching weights and scales by the max, truncating:
    8, 3, 0 -> 100, 37, 0."""
    state = cluster(
        make_node("a").labels(x="1", y="1"),
        make_node("b").labels(y="1"),
        make_node("c"),
    )
    pod = (
        make_pod("p")
        .preferred_node_term(5, {"matchExpressions": [{"key": "x", "operator": "Exists"}]})
        .preferred_node_term(3, {"matchExpressions": [{"key": "y", "operator": "Exists"}]})
    )
    assert scores(state, pod, "NodeAffinity") == {"a": 100, "b": 37, "c": 0}


# ---------------------------------------------------------------------------- 9


@pytest.mark.parametrize(
    ("node_count", "expected"),
    [(50, 50), (150, 100), (500, 230), (1000, 420)],
    ids=["all-below-100", "min-100", "adaptive-46pct", "adaptive-42pct"],
)
def test_09_adaptive_percentage_of_nodes_to_score(node_count: int, expected: int) -> None:
    """The search stops after max(100, n * max(5, 50 - n/125) %) feasible nodes, not all."""
    decision = decide(cluster(*nodes(node_count)), make_pod("p"))
    assert isinstance(decision, Scheduled)
    assert (decision.feasible_nodes, decision.evaluated_nodes) == (expected, expected)


def test_09_round_robin_start_index_across_cycles() -> None:
    """Each cycle starts where the previous one stopped (modulo the node count)."""
    state = cluster(*nodes(500))
    search = SearchState()
    for expected in (230, 460, 190):
        decide(state, make_pod("p"), search=search)
        assert search.next_start_index == expected


def test_09_zone_interleaved_node_order() -> None:
    """Nodes are visited one zone at a time, round robin, not in insertion order."""
    state = cluster(*[make_node(f"{zone}{i}").zone(zone) for zone in "abc" for i in range(2)])
    order = [state.node_at(int(slot)).name for slot in state.node_order()]
    assert order == ["a0", "b0", "c0", "a1", "b1", "c1"]


def test_09_random_tie_break_among_top_scores() -> None:
    """Equal top scores are broken at random, never "first node alphabetically"."""
    state = cluster(*nodes(4))
    chosen = {node_of(state, make_pod("p"), seed=seed) for seed in range(40)}
    assert chosen == {"n0000", "n0001", "n0002", "n0003"}


# ---------------------------------------------------------------------------- 10


def real_queue(clock: FakeClock) -> SchedulingQueue:
    framework = default_framework()
    return SchedulingQueue(clock=clock, framework_for=lambda pod: framework)


def pop(queue: SchedulingQueue) -> QueuedPodInfo:
    info = queue.pop_nowait()
    assert info is not None
    return info


def test_10_queue_orders_by_priority_then_queue_time_not_creation_time() -> None:
    """PrioritySort: higher priority first, then the earlier *queue* timestamp; an old
    creationTimestamp buys nothing."""
    clock = FakeClock()
    queue = real_queue(clock)
    queue.add(make_pod("young").set("metadata.creationTimestamp", "2026-01-01T00:00:00Z").build())
    clock.advance(1)
    queue.add(make_pod("old").set("metadata.creationTimestamp", "2020-01-01T00:00:00Z").build())
    clock.advance(1)
    queue.add(make_pod("urgent").priority(100).build())
    assert [pop(queue).pod.name for _ in range(3)] == ["urgent", "young", "old"]


def test_10_requeue_refreshes_the_queue_timestamp() -> None:
    """A pod that failed goes behind equal-priority pods queued before its failure."""
    clock = FakeClock()
    queue = real_queue(clock)
    queue.add(make_pod("first").build())
    first = pop(queue)
    clock.advance(1)
    queue.add(make_pod("second").build())
    clock.advance(1)
    queue.add_unschedulable(first, unschedulable_plugins={"NodeResourcesFit"})
    clock.advance(60)
    queue.on_cluster_event(NODE_ADD, None, make_node("big").build())
    assert [pop(queue).pod.name for _ in range(2)] == ["second", "first"]


def test_10_backoff_doubles_from_one_to_ten_seconds() -> None:
    """Backoff after each failure: 1, 2, 4, 8, then capped at 10 seconds."""
    clock = FakeClock()
    queue = real_queue(clock)
    queue.add(make_pod("p").build())
    waited = []
    for _ in range(6):
        info = pop(queue)
        queue.add_unschedulable(info, unschedulable_plugins={"NodeResourcesFit"})
        queue.on_cluster_event(NODE_ADD, None, make_node("big").build())
        expiry = queue.backoff_expiry(info)
        assert expiry is not None and queue.queue_of(info.uid) == "backoff"
        waited.append(expiry - clock.now())
        clock.t = expiry + 1
        queue.flush()
    assert waited == [1, 2, 4, 8, 10, 10]


def test_10_unschedulable_pods_wait_for_a_helpful_event_or_five_minutes() -> None:
    """An unschedulable pod leaves the pool only on an event its rejector's hint deems
    helpful (a node it fits), or after 5 minutes there; not on a fixed retry loop."""
    clock = FakeClock()
    queue = real_queue(clock)
    queue.add(make_pod("p").req(cpu="8").build())
    info = pop(queue)
    queue.add_unschedulable(info, unschedulable_plugins={"NodeResourcesFit"})
    queue.on_cluster_event(NODE_ADD, None, small("too-small").build())
    clock.advance(299)
    queue.flush()
    assert queue.queue_of(info.uid) == "unschedulable"
    queue.on_cluster_event(NODE_ADD, None, small("fits", cpu="16").build())
    assert queue.queue_of(info.uid) == "active"

    info = pop(queue)
    queue.add_unschedulable(info, unschedulable_plugins={"NodeResourcesFit"})
    clock.advance(300)
    queue.flush()
    assert queue.queue_of(info.uid) == "unschedulable"
    clock.advance(1)
    queue.flush()
    assert queue.queue_of(info.uid) == "active"


# ---------------------------------------------------------------------------- 11


def test_11_assumed_pods_reserve_immediately_are_forgotten_on_bind_failure_and_never_expire() -> (
    None
):
    """Assuming accounts the pod at once (the next decision sees it before the informer does);
    a failed bind forgets it; nothing times an assumption out."""
    cache = SchedulerCache()
    cache.upsert_node(small("only").build())
    first, second = make_pod("first").req(cpu="1").build(), make_pod("second").req(cpu="1").build()

    cache.assume(first, node_of(cache.cluster, first))
    assert message(cache.cluster, make_pod("second").req(cpu="1")).startswith(
        "0/1 nodes are available: 1 Insufficient cpu."
    )
    cache.forget(first.uid)  # bind failed
    assert node_of(cache.cluster, second) == "only"

    cache.assume(second, "only")
    cache.finish_binding(second.uid)  # bound, but the watch has not confirmed it yet
    assert cache.is_assumed(second.uid)
    assert int(cache.cluster.pod_count[cache.cluster.slot_of("only")]) == 1
    cache.upsert_pod(second.assigned_to("only"))  # the watch confirms: counted once
    assert not cache.is_assumed(second.uid)
    assert cache.cluster.pod_total == 1


# ---------------------------------------------------------------------------- 12


def test_12_nominated_pods_of_equal_or_higher_priority_count_in_filter() -> None:
    """A node promised to an equal/higher-priority nominated pod is judged with that pod on it;
    a lower-priority nomination does not hold the room."""
    state = cluster(small("n0"))
    pod = make_pod("p").req(cpu="1").priority(10)
    for rival_priority, fits in [(10, False), (20, False), (5, True)]:
        rival = make_pod("rival").req(cpu="1").priority(rival_priority).nominated("n0").build()
        decision = decide(state, pod, nominated={"n0": [rival]})
        assert isinstance(decision, Scheduled) is fits, rival_priority


def test_12_nominated_filter_is_two_pass() -> None:
    """The node must pass both with and without the nominated pods: required affinity satisfied
    only by a nominated (not yet running) pod does not count."""
    state = cluster(make_node("n0"))
    rival = make_pod("rival").labels(app="web").priority(10).nominated("n0").build()
    pod = make_pod("p").priority(10).affinity(HOST, app="web")
    assert isinstance(decide(state, pod, nominated={"n0": [rival]}), Unschedulable)


def test_12_nominated_node_is_tried_first_without_scoring() -> None:
    """A pod carrying nominatedNodeName is placed there if it fits, though an idle node would
    score better, and only that node is evaluated."""
    state = cluster(
        small("idle", cpu="8"),
        small("busy", cpu="8"),
        pods=[make_pod("load").node("busy").req(cpu="6")],
    )
    decision = decide(state, make_pod("p").req(cpu="1").nominated("busy"))
    assert isinstance(decision, Scheduled)
    assert (decision.node_name, decision.evaluated_nodes) == ("busy", 1)
    assert node_of(state, make_pod("p").req(cpu="1")) == "idle"


# ---------------------------------------------------------------------------- 13

WEB = {"matchLabels": {"app": "web"}}


def two_zones(*pods: PodBuilder, extra: Sequence[NodeBuilder] = ()) -> ClusterState:
    return cluster(make_node("a").zone("z1"), make_node("b").zone("z2"), *extra, pods=pods)


def spread_pod(**extra: Any) -> PodBuilder:
    return make_pod("p").labels(app="web").spread(ZONE, selector=WEB, **extra)


def test_13_spread_counts_only_the_same_namespace() -> None:
    """Matching pods in another namespace do not count toward the skew."""
    others = [make_pod(f"o{i}", "other").labels(app="web").node("a") for i in range(2)]
    assert feasible(two_zones(*others), spread_pod()) == {"a", "b"}
    mine = [make_pod(f"m{i}").labels(app="web").node("a") for i in range(2)]
    assert feasible(two_zones(*mine), spread_pod()) == {"b"}


def test_13_spread_ignores_terminating_pods() -> None:
    """Pods with a deletionTimestamp are not counted."""
    leaving = [make_pod(f"t{i}").labels(app="web").node("a").terminating() for i in range(2)]
    assert feasible(two_zones(*leaving), spread_pod()) == {"a", "b"}


def test_13_spread_domains_honour_node_affinity_by_default() -> None:
    """nodeAffinityPolicy Honor: a zone the pod may not go to is not a domain (its 0 pods
    would otherwise be the global minimum)."""
    state = two_zones(
        make_pod("w1").labels(app="web").node("a"),
        make_pod("w2").labels(app="web").node("b"),
        extra=[make_node("c").zone("z3")],
    )
    pod = spread_pod().node_affinity_in(ZONE, "z1", "z2")
    assert feasible(state, pod) == {"a", "b"}
    assert (
        feasible(state, spread_pod(nodeAffinityPolicy="Ignore").node_affinity_in(ZONE, "z1", "z2"))
        == set()
    )


def test_13_spread_domains_ignore_taints_by_default() -> None:
    """nodeTaintsPolicy Ignore: a tainted node still makes its zone a domain."""
    state = two_zones(
        make_pod("w1").labels(app="web").node("a"),
        make_pod("w2").labels(app="web").node("b"),
        extra=[make_node("c").zone("z3").taint("dedicated", "x")],
    )
    assert feasible(state, spread_pod()) == set()
    assert message(state, spread_pod()).startswith(
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), "
        "2 node(s) didn't match pod topology spread constraints."
    )
    assert feasible(state, spread_pod(nodeTaintsPolicy="Honor")) == {"a", "b"}


def test_13_spread_min_domains_forces_global_minimum_zero() -> None:
    """With fewer eligible domains than minDomains the global minimum is taken as 0."""
    state = two_zones(
        make_pod("w1").labels(app="web").node("a"), make_pod("w2").labels(app="web").node("b")
    )
    assert feasible(state, spread_pod()) == {"a", "b"}
    assert feasible(state, spread_pod(minDomains=3)) == set()


def test_13_spread_self_match_adds_one() -> None:
    """The incoming pod counts itself only if it matches the selector."""
    state = two_zones(make_pod("w1").labels(app="web").node("a"))
    assert feasible(state, spread_pod()) == {"b"}
    stranger = make_pod("p").labels(app="other").spread(ZONE, selector=WEB)
    assert feasible(state, stranger) == {"a", "b"}


def test_13_system_default_spread_needs_a_selecting_workload() -> None:
    """A pod without constraints gets the system defaults only if a Service, RC, RS or
    StatefulSet selects it; otherwise PodTopologySpread does not score it at all."""
    state = two_zones(*[make_pod(f"w{i}").labels(app="web").node("a") for i in range(3)])
    pod = make_pod("p").labels(app="web")
    assert scores(state, pod, "PodTopologySpread") is None
    state.set_workload(Workload("Service", "default", "web", map_selector=(("app", "web"),)))
    spread = scores(state, pod, "PodTopologySpread")
    assert spread is not None and spread["a"] < spread["b"]


# ---------------------------------------------------------------------------- 14


def test_14_first_pod_exception_for_required_affinity() -> None:
    """Required affinity that no pod satisfies yet is waived if the pod matches its own term
    (the first pod of a group); otherwise it is unschedulable."""
    state = cluster(make_node("n0"))
    assert node_of(state, make_pod("p").labels(app="web").affinity(HOST, app="web")) == "n0"
    assert message(state, make_pod("p").affinity(HOST, app="web")).startswith(
        "0/1 nodes are available: 1 node(s) didn't match pod affinity rules."
    )


def test_14_existing_pods_required_anti_affinity_is_symmetric() -> None:
    """An *existing* pod's required anti-affinity keeps matching newcomers off its domain, even
    though the newcomer has no affinity of its own."""
    state = cluster(
        make_node("a"),
        make_node("b"),
        pods=[make_pod("guard").node("a").anti_affinity(HOST, app="web")],
    )
    assert feasible(state, make_pod("p").labels(app="web")) == {"b"}
    assert message(
        cluster(make_node("a"), pods=[make_pod("guard").node("a").anti_affinity(HOST, app="web")]),
        make_pod("p").labels(app="web"),
    ).startswith(
        "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules."
    )


def test_14_empty_namespaces_mean_own_namespace_but_empty_selector_means_all() -> None:
    """A term without namespaces looks at the pod's own namespace only; `namespaceSelector: {}`
    looks at every namespace."""
    state = cluster(
        make_node("a"), make_node("b"), pods=[make_pod("db", "other").labels(app="db").node("a")]
    )
    term = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": HOST}
    own = make_pod("p").pod_affinity("podAntiAffinity", term)
    every = make_pod("p").pod_affinity("podAntiAffinity", {**term, "namespaceSelector": {}})
    assert feasible(state, own) == {"a", "b"}
    assert feasible(state, every) == {"b"}


# ---------------------------------------------------------------------------- 15


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    raw: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        raw["values"] = list(values)
    return raw


@pytest.mark.parametrize(
    ("labels", "pod", "fits"),
    [
        (
            {"disk": "ssd"},
            make_pod("p").node_selector(disk="ssd").node_affinity_in("zone", "z1"),
            False,
        ),
        (
            {"disk": "ssd", "zone": "z1"},
            make_pod("p").node_selector(disk="ssd").node_affinity_in("zone", "z1"),
            True,
        ),
        (
            {"zone": "z2"},
            make_pod("p").node_affinity_in("zone", "z1").node_affinity_in("zone", "z2"),
            True,
        ),
        (
            {"zone": "z1"},
            make_pod("p").required_node_terms(
                {"matchExpressions": [expr("zone", "In", "z1"), expr("disk", "Exists")]}
            ),
            False,
        ),
        ({"zone": "z1"}, make_pod("p").required_node_terms({}), False),
        (
            {"zone": "z1"},
            make_pod("p").required_node_terms({}, {"matchExpressions": [expr("zone", "Exists")]}),
            True,
        ),
        ({}, make_pod("p").node_affinity_in("zone", "z1", operator="NotIn"), True),
        ({}, make_pod("p").node_affinity_in("zone", operator="DoesNotExist"), True),
        ({"cores": "10"}, make_pod("p").node_affinity_in("cores", "9", operator="Gt"), True),
        ({"cores": "10"}, make_pod("p").node_affinity_in("cores", "9", operator="Lt"), False),
        ({"cores": "9"}, make_pod("p").node_affinity_in("cores", "10", operator="Lt"), True),
        ({"cores": "many"}, make_pod("p").node_affinity_in("cores", "1", operator="Gt"), False),
    ],
    ids=[
        "selector-and-affinity-both-needed",
        "selector-and-affinity-both-met",
        "terms-ored",
        "expressions-anded",
        "empty-term-matches-nothing",
        "empty-term-ored-with-a-real-one",
        "notin-matches-missing-label",
        "doesnotexist-matches-missing-label",
        "gt-is-integer-10-gt-9",
        "lt-is-integer-10-not-lt-9",
        "lt-is-integer-9-lt-10",
        "gt-non-integer-label-never-matches",
    ],
)
def test_15_node_affinity_semantics(labels: dict[str, str], pod: PodBuilder, fits: bool) -> None:
    """nodeSelector AND required affinity; terms ORed, expressions ANDed; an empty term matches
    nothing; NotIn/DoesNotExist match a missing label; Gt/Lt compare integers."""
    node = make_node("n").labels(**labels)
    assert feasible(cluster(node), pod) == ({"n"} if fits else set())


# ---------------------------------------------------------------------------- 16


def full_node(name: str, *victims: PodBuilder) -> tuple[NodeBuilder, list[PodBuilder]]:
    return small(name), [v.node(name) for v in victims]


def test_16_victims_are_strictly_lower_priority() -> None:
    """An equal-priority pod is never a victim (no candidate: the nomination is cleared)."""
    for occupant_priority, nominated in [(10, ""), (9, "n0")]:
        state = cluster(
            small("n0"), pods=[make_pod("o").req(cpu="1").priority(occupant_priority).node("n0")]
        )
        decision = decide(state, make_pod("p").req(cpu="1").priority(10))
        assert isinstance(decision, Unschedulable) and decision.post_filter is not None
        assert decision.post_filter.nominated_node == nominated


def test_16_preemptor_is_nominated_not_bound() -> None:
    """Preemption ends the cycle unschedulable with a nomination and the victims to evict; the
    pod is bound only in a later cycle."""
    state = cluster(small("n0"), pods=[make_pod("low").req(cpu="1").node("n0")])
    decision = decide(state, make_pod("p").req(cpu="1").priority(10))
    assert isinstance(decision, Unschedulable) and decision.post_filter is not None
    assert decision.post_filter.status.is_success
    assert decision.post_filter.nominated_node == "n0"
    assert [v.name for v in decision.post_filter.victims] == ["low"]
    assert state.pod_total == 1  # the dry run left the victim in place


def test_16_pdb_violations_count_with_disruptions_allowed_decremented() -> None:
    """Each covered victim spends one of the budget's disruptionsAllowed; the node whose
    victims break no budget wins even though its victims have higher priority."""
    tight = [
        make_pod(f"t{i}").labels(app="tight").req(cpu="500m").priority(0).node("a")
        for i in range(2)
    ]
    loose = [
        make_pod(f"l{i}").labels(app="loose").req(cpu="500m").priority(5).node("b")
        for i in range(2)
    ]

    def pdb(name: str, allowed: int) -> dict[str, Any]:
        return {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": name}}},
            "status": {"disruptionsAllowed": allowed},
        }

    state = cluster(
        small("a"), small("b"), pods=[*tight, *loose], pdbs=[pdb("tight", 1), pdb("loose", 2)]
    )
    decision = decide(state, make_pod("p").req(cpu="1").priority(10))
    assert isinstance(decision, Unschedulable) and decision.post_filter is not None
    assert decision.post_filter.nominated_node == "b"


def test_16_candidate_cap_is_max_of_ten_percent_and_one_hundred() -> None:
    """The dry run looks for max(10% of the potential nodes, 100) candidates, at most all."""
    plugin: Any = default_framework().plugins["DefaultPreemption"]
    assert [plugin.args.num_candidates(n) for n in (50, 500, 1000, 5000)] == [50, 100, 100, 500]


@pytest.mark.parametrize(
    ("loser", "winner"),
    [
        # 2. lowest highest-priority victim
        ([("a0", 5, "1000m", None)], [("b0", 3, "1000m", None)]),
        # 3. smallest priority sum
        (
            [("a0", 3, "500m", None), ("a1", 3, "500m", None)],
            [("b0", 3, "500m", None), ("b1", 1, "500m", None)],
        ),
        # 4. fewest victims: sums are taken over priority + 2^31, so the int32 minimum adds 0
        (
            [("a0", 1, "500m", None), ("a1", -(2**31), "500m", None)],
            [("b0", 1, "1000m", None)],
        ),
        # 5. latest start time of the highest-priority victims
        (
            [("a0", 1, "1000m", "2026-01-01T00:00:00Z")],
            [("b0", 1, "1000m", "2026-02-01T00:00:00Z")],
        ),
    ],
    ids=["2-lowest-top-priority", "3-smallest-priority-sum", "4-fewest-victims", "5-latest-start"],
)
def test_16_tie_break_picks_the_cheapest_node(
    loser: list[tuple[str, int, str, str | None]],
    winner: list[tuple[str, int, str, str | None]],
) -> None:
    """pickOneNodeForPreemption: fewest PDB violations, then lowest top victim priority, then
    smallest priority sum, then fewest victims, then latest start of the top victims. One
    node is built to win at the step named in the id (the earlier steps tie); swapping the
    nodes' victims swaps the winner, so no fixed order or random draw can pass."""

    def victims(node: str, spec: list[tuple[str, int, str, str | None]]) -> list[PodBuilder]:
        built = []
        for name, priority, cpu, started in spec:
            pod = make_pod(f"{node}-{name}").priority(priority).req(cpu=cpu).node(node)
            if started:
                pod.set("status.startTime", started)
            built.append(pod)
        return built

    for worse, better in [("a", "b"), ("b", "a")]:
        state = cluster(
            small("a"),
            small("b"),
            pods=[*victims(worse, loser), *victims(better, winner)],
        )
        decision = decide(state, make_pod("p").req(cpu="1").priority(10))
        assert isinstance(decision, Unschedulable) and decision.post_filter is not None
        assert decision.post_filter.nominated_node == better


def test_16_preemption_policy_never_still_schedules_but_never_preempts() -> None:
    """preemptionPolicy: Never only forbids evicting others."""
    pod = make_pod("p").req(cpu="1").priority(10).set("spec.preemptionPolicy", "Never")
    assert node_of(cluster(small("free")), pod) == "free"
    state = cluster(small("n0"), pods=[make_pod("low").req(cpu="1").node("n0")])
    decision = decide(state, pod)
    assert isinstance(decision, Unschedulable) and decision.post_filter is not None
    assert decision.post_filter.nominated_node is None
    assert decision.message == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: not eligible due to preemptionPolicy=Never."
    )


# ---------------------------------------------------------------------------- 17


async def test_17_binding_posts_the_binding_subresource_with_the_pod_uid() -> None:
    """Bind = POST pods/{name}/binding with the pod's UID in the Binding metadata; the pod's
    spec is never patched and PodScheduled=True is left to the API server."""
    pod = make_pod("web", "shop").uid("1234-abcd").build()
    assert binding_body(pod, "node-3") == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "web", "namespace": "shop", "uid": "1234-abcd"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "node-3"},
    }
    session = FakeSession()
    result = await ApiBinder(session).bind(pod, "node-3")  # type: ignore[arg-type]
    assert result.outcome is BindOutcome.BOUND
    assert [(c.method, c.path) for c in session.calls] == [
        ("POST", "/api/v1/namespaces/shop/pods/web/binding")
    ]
    assert binding_path(pod) == session.calls[0].path

    clock = FakeClock()
    reporter = ApiReporter(
        session,  # type: ignore[arg-type]
        clock=clock,
        instance="test",
        wall_clock=FakeWallClock(clock),
        qps=None,
    )
    reporter.scheduled(pod, "node-3", profile="default-scheduler")
    await reporter.drain()
    assert session.of("PATCH") == []  # no PodScheduled=True written by the scheduler


# ---------------------------------------------------------------------------- 18


def test_18_extender_json_and_score_scaling() -> None:
    """Extender payloads use capitalised Go field names; their 0-10 scores are scaled x10 x weight.

    (The whole bodies are checked against kube-scheduler's own in test_extender_wire.py.)
    """
    pod = make_pod("p").obj()
    node = make_node("a").obj()
    full = encode_extender_args(pod=pod, nodes=[node], node_cache_capable=False)
    cached = encode_extender_args(pod=pod, nodes=[node], node_cache_capable=True)
    assert set(full) == set(cached) == {"Pod", "Nodes", "NodeNames"}
    assert full["NodeNames"] is None and full["Nodes"]["items"][0]["metadata"]["name"] == "a"
    assert cached["Nodes"] is None and cached["NodeNames"] == ["a"]
    assert set(encode_binding_args(namespace="n", name="p", uid="u", node="a")) == {
        "PodName",
        "PodNamespace",
        "PodUID",
        "Node",
    }
    assert scaled_extender_score(7, 1) == 70
    assert scaled_extender_score(10, 5) == 500


# ---------------------------------------------------------------------------- 19


def test_19_foreign_scheduler_names_are_ignored() -> None:
    """A pod for a schedulerName no profile serves never enters the queue."""
    framework = default_framework()
    queue = SchedulingQueue(
        clock=FakeClock(),
        framework_for=lambda pod: (
            framework if pod.scheduler_name == framework.profile_name else None
        ),
    )
    queue.add(make_pod("theirs").scheduler("other-scheduler").build())
    queue.add(make_pod("ours").build())
    assert [info.pod.name for info in queue] == ["ours"]


def test_19_terminal_pods_are_neither_queued_nor_accounted() -> None:
    """Succeeded/Failed pods stay out of the queue and free their node's resources."""
    scheduler = Scheduler(
        binder=FakeBinder(), reporter=FakeReporter(), clock=FakeClock(), rng=random.Random(1)
    )
    scheduler.set_profile(default_framework())
    scheduler.on_node(small("n0").build())
    scheduler.on_pod(make_pod("done").phase("Succeeded").build())
    scheduler.on_pod(make_pod("failed").phase("Failed").build())
    assert len(scheduler.queue) == 0

    running = make_pod("job").req(cpu="1").node("n0").phase("Running")
    scheduler.on_pod(running.build())
    assert scheduler.cache.cluster.pod_total == 1
    scheduler.on_pod(running.phase("Succeeded").build())  # the job finished
    assert scheduler.cache.cluster.pod_total == 0
    scheduler.on_pod(make_pod("old").req(cpu="1").node("n0").phase("Failed").build())
    assert scheduler.cache.cluster.pod_total == 0
    assert node_of(scheduler.cache.cluster, make_pod("p").req(cpu="1")) == "n0"
