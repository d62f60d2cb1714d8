"""explain_pod agrees with schedule_one: the same message, reasons that add up to it, the same
totals as run_score, a tie set that holds the scheduler's pick, and preemption's victims."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from berth.engine.algorithm import (
    Scheduled,
    SearchState,
    Unschedulable,
    schedule_one,
)
from berth.engine.cluster import ClusterState
from berth.engine.explain import Explanation, explain_pod, rejection_histogram
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.runtime import Framework, build_framework
from berth.engine.framework.status import Code, Status, unschedulable
from berth.engine.model.pod import Pod
from berth.profiles import default_profile_config
from tests.builders import make_node, make_pod
from tests.unit.engine.fakes import FakeFilter, FakePreFilter, FakeScore, cluster_of, framework_with

SEEDS = range(40)


def _random_cluster(rng: random.Random, nodes: int) -> ClusterState:
    cluster = ClusterState()
    for index in range(nodes):
        node = make_node(f"n{index:03d}").capacity(
            cpu=str(rng.choice([1, 2, 4, 8])), memory=f"{rng.choice([2, 4, 8])}Gi", pods=110
        )
        node.zone(rng.choice(["z1", "z2", "z3"])).label("disk", rng.choice(["ssd", "hdd"]))
        if rng.random() < 0.3:
            node.taint("dedicated", rng.choice(["gpu", "db"]))
        if rng.random() < 0.1:
            node.unschedulable()
        cluster.upsert_node(node.build())
    for index in range(nodes * 2):
        slot = rng.randrange(nodes)
        pod = (
            make_pod(f"bound-{index}")
            .req(cpu=f"{rng.choice([100, 500, 1000, 1500])}m", memory="256Mi")
            .priority(rng.choice([0, 10]))
            .labels(app=rng.choice(["web", "db"]))
            .node(f"n{slot:03d}")
            .set("metadata.uid", f"uid-{index}")
        )
        cluster.add_pod(pod.build())
    return cluster


def _random_pod(rng: random.Random) -> Pod:
    pod = make_pod("incoming").req(cpu=f"{rng.choice([200, 1500, 3000, 6000, 9000])}m")
    pod.priority(rng.choice([0, 100])).labels(app="web")
    if rng.random() < 0.5:
        pod.toleration("dedicated", "Equal", rng.choice(["gpu", "db"]), "NoSchedule")
    if rng.random() < 0.4:
        pod.node_selector(disk=rng.choice(["ssd", "hdd"]))
    return pod.set("metadata.uid", "uid-incoming").build()


def _random_case(seed: int) -> tuple[ClusterState, Pod]:
    rng = random.Random(seed)
    cluster = _random_cluster(rng, nodes=rng.randrange(2, 30))
    return cluster, _random_pod(rng)


def _default() -> Framework:
    return build_framework(default_profile_config())


def _message_from(explanation: Explanation) -> str:
    """The FitError's histogram rebuilt from the grouped rejections alone."""
    histogram = sorted(f"{n} {r}" for r, n in rejection_histogram(explanation).items())
    return f"0/{explanation.node_count} nodes are available: {', '.join(histogram)}."


@pytest.mark.parametrize("seed", SEEDS)
def test_explanation_agrees_with_the_decision(seed: int) -> None:
    cluster, pod = _random_case(seed)
    framework = _default()
    explanation = explain_pod(framework, cluster, pod, run_post_filter=False)
    rejected = sum(group.count for group in explanation.rejections)
    assert rejected + explanation.feasible_count == cluster.node_count
    for decision_seed in range(5):
        decision = schedule_one(
            framework,
            cluster,
            pod,
            search=SearchState(next_start_index=decision_seed),
            rng=random.Random(decision_seed),
            run_post_filter=False,
        )
        if isinstance(decision, Scheduled):
            assert decision.node_name in explanation.tie_set
        else:
            assert isinstance(decision, Unschedulable)
            assert explanation.feasible_count == 0
            assert explanation.message == decision.message
            assert explanation.message == _message_from(explanation)


@pytest.mark.parametrize("seed", SEEDS)
def test_with_preemption_the_message_is_the_failed_scheduling_message(seed: int) -> None:
    cluster, pod = _random_case(seed)
    # Two fresh profiles: DefaultPreemption's tie-break generator starts alike in both.
    explanation = explain_pod(_default(), cluster, pod)
    decision = schedule_one(_default(), cluster, pod, search=SearchState(), rng=random.Random(0))
    if isinstance(decision, Unschedulable):
        assert explanation.message == decision.message
        assert explanation.preemption is not None
        post_filter = decision.post_filter
        assert post_filter is not None
        assert explanation.preemption.nominated_node == (post_filter.nominated_node or None)
        assert explanation.preemption.victims == tuple(v.key for v in post_filter.victims)
        if post_filter.nominated_node:
            assert (post_filter.nominated_node, explanation.preemption.victims) in {
                (c.node, c.victims) for c in explanation.preemption.candidates
            }
    else:
        assert explanation.preemption is None


@pytest.mark.parametrize("seed", SEEDS)
def test_totals_are_run_score_totals(seed: int) -> None:
    cluster, pod = _random_case(seed)
    framework = _default()
    explanation = explain_pod(framework, cluster, pod)
    if not explanation.ranking:
        return
    slots = np.asarray([cluster.slot_of(s.node) for s in explanation.ranking], dtype=np.intp)
    state = CycleState(cluster)
    assert framework.run_pre_filter(state, pod)[0].is_success
    assert framework.run_pre_score(state, pod, slots).is_success
    totals = framework.run_score(state, pod, slots)
    assert not isinstance(totals, Status)
    assert [s.total for s in explanation.ranking] == totals.tolist()
    for score in explanation.ranking:
        weights = [weight for _name, weight in explanation.score_plugins]
        assert score.weighted == tuple(
            n * w for n, w in zip(score.normalized, weights, strict=True)
        )
        assert score.total == sum(score.weighted)


def test_every_node_is_judged_where_the_scheduler_samples() -> None:
    nodes = [make_node(f"n{i:03d}").obj() for i in range(300)]
    framework = framework_with(
        FakeFilter("F", reject={f"n{i:03d}" for i in range(0, 300, 3)}), FakeScore("S")
    )
    explanation = explain_pod(framework, cluster_of(*nodes), make_pod("p").build())
    assert explanation.sample_size == 144  # 300 * (50 - 300 // 125) / 100
    assert explanation.feasible_count == 200
    assert [(g.plugin, g.count, g.examples) for g in explanation.rejections] == [
        ("F", 100, ("n000", "n003", "n006"))
    ]
    assert explanation.notes[0] == "evaluated all 300 nodes"
    assert "stops after 144 feasible nodes" in explanation.notes[1]


def test_without_score_plugins_the_scheduler_takes_the_first_feasible_node() -> None:
    framework = framework_with(FakeFilter("F"))
    nodes = [make_node(f"n{i}").obj() for i in range(3)]
    explanation = explain_pod(framework, cluster_of(*nodes), make_pod("p").build())
    assert explanation.sample_size == 1
    assert "stops after 1 feasible nodes" in explanation.notes[1]


def test_a_pre_filter_rejection_applies_to_every_node() -> None:
    framework = framework_with(
        FakePreFilter("P", status=unschedulable("pod waits for something")), FakeFilter("F")
    )
    cluster = cluster_of(*(make_node(name).obj() for name in "abc"))
    pod = make_pod("p").build()
    explanation = explain_pod(framework, cluster, pod)
    decision = schedule_one(framework, cluster, pod, search=SearchState(), rng=random.Random(0))
    assert isinstance(decision, Unschedulable)
    assert explanation.message == decision.message
    assert [(g.plugin, g.code, g.count) for g in explanation.rejections] == [
        ("P", Code.UNSCHEDULABLE, 3)
    ]


def test_narrowed_out_nodes_are_one_group() -> None:
    framework = framework_with(
        FakePreFilter("P", node_names=frozenset({"a"})), FakeFilter("F", reject={"a"})
    )
    cluster = cluster_of(*(make_node(name).obj() for name in "abc"))
    pod = make_pod("p").build()
    explanation = explain_pod(framework, cluster, pod)
    decision = schedule_one(framework, cluster, pod, search=SearchState(), rng=random.Random(0))
    assert isinstance(decision, Unschedulable)
    assert explanation.message == decision.message == _message_from(explanation)
    assert [(g.plugin, g.count) for g in explanation.rejections] == [("", 2), ("F", 1)]


class _Doubling:
    """Scores 10 everywhere and normalizes to twice the node's index: raw and normalized differ."""

    name = "Doubling"

    def score(self, state: CycleState, pod: Pod, slots: np.ndarray) -> np.ndarray:  # type: ignore[type-arg]
        return np.full(slots.size, 10, dtype=np.int64)

    def normalize_scores(
        self,
        state: CycleState,
        pod: Pod,
        slots: np.ndarray,  # type: ignore[type-arg]
        scores: np.ndarray,  # type: ignore[type-arg]
    ) -> np.ndarray:  # type: ignore[type-arg]
        scores[:] = 2 * np.arange(slots.size)  # in place, as a plugin may
        return scores


def test_breakdown_keeps_raw_normalized_and_weighted_scores() -> None:
    framework = framework_with(
        _Doubling(),
        FakeScore("S", by_name={"a": 50, "b": 20, "c": 50}),
        weights={"Doubling": 2, "S": 3},
    )
    cluster = cluster_of(*(make_node(name).obj() for name in "abc"))
    explanation = explain_pod(framework, cluster, make_pod("p").build())
    assert explanation.score_plugins == (("Doubling", 2), ("S", 3))
    by_node = {score.node: score for score in explanation.ranking}
    order = [cluster.node_at(int(slot)).name for slot in cluster.node_order()]
    for index, name in enumerate(order):
        s = {"a": 50, "b": 20, "c": 50}[name]
        assert by_node[name].raw == (10, s)
        assert by_node[name].normalized == (2 * index, s)
        assert by_node[name].weighted == (4 * index, 3 * s)
        assert by_node[name].total == 4 * index + 3 * s
    best = max(score.total for score in explanation.ranking)
    assert explanation.tie_set == tuple(s.node for s in explanation.ranking if s.total == best)


def test_an_out_of_range_score_is_the_same_error_as_run_score() -> None:
    framework = framework_with(FakeScore("S", by_name={"a": 101}), weights={"S": 1})
    cluster = cluster_of(make_node("a").obj(), make_node("b").obj())
    explanation = explain_pod(framework, cluster, make_pod("p").build())
    assert explanation.error
    assert explanation.message.startswith('plugin "S" returns an invalid score 101')


def test_preemption_reports_the_pick_and_every_candidate() -> None:
    nodes = [make_node(name).capacity(cpu="2", pods=110).obj() for name in ("a", "b", "c")]
    bound = tuple(
        make_pod(f"low-{name}").req(cpu=cpu).node(name).set("metadata.uid", f"low-{name}").obj()
        for name, cpu in (("a", "2"), ("b", "1500m"), ("c", "1"))
    )
    cluster = cluster_of(*nodes, pods=bound)
    pod = make_pod("big").req(cpu="2").priority(100).set("metadata.uid", "big").build()
    explanation = explain_pod(_default(), cluster, pod)
    preemption = explanation.preemption
    assert preemption is not None
    assert explanation.message.startswith("0/3 nodes are available: 3 Insufficient cpu. preemption")
    assert preemption.potential_nodes == 3
    assert {(c.node, c.victims) for c in preemption.candidates} == {
        ("a", ("default/low-a",)),
        ("b", ("default/low-b",)),
        ("c", ("default/low-c",)),
    }
    assert preemption.nominated_node in {"a", "b", "c"}
    assert len(preemption.victims) == 1


def test_preemption_policy_never_is_reported_as_a_refusal() -> None:
    cluster = cluster_of(
        make_node("a").capacity(cpu="1", pods=110).obj(),
        pods=(make_pod("low").req(cpu="1").node("a").set("metadata.uid", "low").obj(),),
    )
    pod = make_pod("p").req(cpu="1").priority(5).set("spec.preemptionPolicy", "Never").build()
    explanation = explain_pod(_default(), cluster, pod)
    assert explanation.preemption is not None
    assert explanation.preemption.refusal == "not eligible due to preemptionPolicy=Never."
    assert explanation.preemption.candidates == ()


def test_a_nominated_node_that_fits_is_the_whole_tie_set() -> None:
    framework = framework_with(FakeScore("S", by_name={"a": 90}), weights={"S": 1})
    cluster = cluster_of(make_node("a").obj(), make_node("b").obj())
    explanation = explain_pod(framework, cluster, make_pod("p").nominated("b").build())
    assert explanation.nominated_fast_path == "b"
    assert explanation.tie_set == ("b",)
    assert explanation.ranking[0].node == "a"  # the scores are still shown


def test_no_nodes() -> None:
    explanation = explain_pod(_default(), ClusterState(), make_pod("p").build())
    assert explanation.error
    assert explanation.message == "no nodes available to schedule pods"


def test_histogram_counts_a_node_under_each_of_its_reasons() -> None:
    cluster = cluster_of(make_node("a").capacity(cpu="1", memory="1Gi", pods=110).obj())
    pod = make_pod("p").req(cpu="2", memory="2Gi").build()
    explanation = explain_pod(_default(), cluster, pod)
    assert Counter(rejection_histogram(explanation)) == Counter(
        {"Insufficient cpu": 1, "Insufficient memory": 1}
    )
    assert explanation.message.startswith(_message_from(explanation))
