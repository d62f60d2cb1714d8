"""schedule_one: node search bounds, round-robin start, first failure per node, message, tie-break."""

from __future__ import annotations

import random

import pytest

from berth.engine.algorithm import (
    Scheduled,
    SchedulingError,
    SearchState,
    Unschedulable,
    num_feasible_nodes_to_find,
    schedule_one,
)
from berth.engine.framework.status import Code, Status
from tests.builders import make_node, make_pod
from tests.unit.engine.fakes import FakeFilter, FakePreFilter, FakeScore, cluster_of, framework_with


@pytest.mark.parametrize(
    ("nodes", "percentage", "expected"),
    [
        (50, None, 50),
        (150, None, 100),
        (500, None, 230),
        (5000, None, 500),
        (6000, None, 300),
        (5000, 100, 5000),
        (1000, 1, 100),
    ],
    ids=[
        "small-cluster-all",
        "150-floor-100",
        "500-adaptive-46pct",
        "5000-adaptive-10pct",
        "6000-floor-5pct",
        "profile-100pct",
        "min-100",
    ],
)
def test_num_feasible_nodes_to_find(nodes: int, percentage: int | None, expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, 0, nodes) == expected


def _nodes(count: int) -> list[dict[str, object]]:
    return [make_node(f"n{i:03d}").obj() for i in range(count)]


def test_empty_cluster_reports_no_nodes_available() -> None:
    decision = schedule_one(
        framework_with(),
        cluster_of(),
        make_pod("p").build(),
        search=SearchState(),
        rng=random.Random(1),
    )
    assert isinstance(decision, SchedulingError)
    assert decision.message == "no nodes available to schedule pods"


def test_first_failing_filter_wins_and_message_sorts_counts_as_strings() -> None:
    first = FakeFilter("First", reject={f"n{i:03d}" for i in range(10)}, reason="node(s) b")
    second = FakeFilter("Second", reject={f"n{i:03d}" for i in range(12)}, reason="node(s) a")
    cluster = cluster_of(*_nodes(12))
    decision = schedule_one(
        framework_with(first, second),
        cluster,
        make_pod("p").build(),
        search=SearchState(),
        rng=random.Random(1),
    )
    assert isinstance(decision, Unschedulable)
    # "10 node(s) b" sorts before "2 node(s) a" because the histogram is sorted as strings.
    assert decision.message == "0/12 nodes are available: 10 node(s) b, 2 node(s) a."
    assert decision.unschedulable_plugins == {"First", "Second"}
    assert second.calls == [2]  # only nodes that passed the first filter reach the second


def test_pre_filter_rejection_replaces_the_histogram() -> None:
    pre = FakePreFilter(
        "Pre", Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("pod affinity terms conflict",))
    )
    decision = schedule_one(
        framework_with(pre),
        cluster_of(*_nodes(3)),
        make_pod("p").build(),
        search=SearchState(),
        rng=random.Random(1),
    )
    assert isinstance(decision, Unschedulable)
    assert decision.message == "0/3 nodes are available: pod affinity terms conflict."


def test_pre_filter_node_names_mark_the_rest_absent() -> None:
    pre = FakePreFilter("Narrow", node_names=frozenset({"n000"}))
    deny = FakeFilter("Deny", reject={"n000"}, reason="node(s) nope")
    decision = schedule_one(
        framework_with(pre, deny),
        cluster_of(*_nodes(3)),
        make_pod("p").build(),
        search=SearchState(),
        rng=random.Random(1),
    )
    assert isinstance(decision, Unschedulable)
    assert (
        decision.message
        == "0/3 nodes are available: 1 node(s) nope, 2 node(s) didn't satisfy plugin(s) [Narrow]."
    )


def test_disjoint_pre_filter_node_names_are_unresolvable() -> None:
    one = FakePreFilter("A", node_names=frozenset({"n000"}))
    two = FakePreFilter("B", node_names=frozenset({"n001"}))
    decision = schedule_one(
        framework_with(one, two),
        cluster_of(*_nodes(3)),
        make_pod("p").build(),
        search=SearchState(),
        rng=random.Random(1),
    )
    assert isinstance(decision, Unschedulable)
    assert (
        decision.message
        == "0/3 nodes are available: node(s) didn't satisfy plugin(s) [A B] simultaneously."
    )


def test_search_stops_after_enough_feasible_nodes_and_advances_start() -> None:
    scorer = FakeScore("S")
    cluster = cluster_of(*_nodes(500))
    search = SearchState()
    decision = schedule_one(
        framework_with(FakeFilter("F"), scorer),
        cluster,
        make_pod("p").build(),
        search=search,
        rng=random.Random(1),
    )
    assert isinstance(decision, Scheduled)
    assert decision.feasible_nodes == 230
    assert search.next_start_index == 230
    schedule_one(
        framework_with(FakeFilter("F"), scorer),
        cluster,
        make_pod("p").build(),
        search=search,
        rng=random.Random(1),
    )
    assert search.next_start_index == 460


def test_without_score_plugins_the_first_feasible_node_wins() -> None:
    search = SearchState(next_start_index=7)
    decision = schedule_one(
        framework_with(FakeFilter("F")),
        cluster_of(*_nodes(20)),
        make_pod("p").build(),
        search=search,
        rng=random.Random(1),
    )
    assert isinstance(decision, Scheduled)
    assert decision.node_name == "n007"


def test_highest_weighted_score_wins() -> None:
    scorer = FakeScore("S", {"n002": 60, "n001": 50})
    decision = schedule_one(
        framework_with(FakeFilter("F"), scorer, weights={"S": 2}),
        cluster_of(*_nodes(5)),
        make_pod("p").build(),
        search=SearchState(),
        rng=random.Random(1),
    )
    assert isinstance(decision, Scheduled)
    assert decision.node_name == "n002"


def test_ties_are_broken_uniformly_at_random() -> None:
    cluster = cluster_of(*_nodes(4))
    chosen = {
        schedule_one(
            framework_with(FakeFilter("F"), FakeScore("S")),
            cluster,
            make_pod("p").build(),
            search=SearchState(),
            rng=random.Random(seed),
        ).node_name  # type: ignore[union-attr]
        for seed in range(40)
    }
    assert chosen == {"n000", "n001", "n002", "n003"}


def test_out_of_range_score_is_an_error_naming_the_plugin() -> None:
    decision = schedule_one(
        framework_with(FakeScore("Big", {"n000": 101})),
        cluster_of(*_nodes(2)),
        make_pod("p").build(),
        search=SearchState(),
        rng=random.Random(1),
    )
    assert isinstance(decision, SchedulingError)
    assert (
        decision.message
        == 'plugin "Big" returns an invalid score 101, it should in the range of [0, 100] after normalizing'
    )


def test_negative_score_is_an_error_naming_the_plugin() -> None:
    decision = schedule_one(
        framework_with(FakeScore("Fine"), FakeScore("Low", {"n001": -1})),
        cluster_of(*_nodes(2)),
        make_pod("p").build(),
        search=SearchState(),
        rng=random.Random(1),
    )
    assert isinstance(decision, SchedulingError)
    assert decision.message.startswith('plugin "Low" returns an invalid score -1,')


def test_nominated_node_is_tried_first() -> None:
    pod = make_pod("p").nominated("n003").build()
    decision = schedule_one(
        framework_with(FakeFilter("F"), FakeScore("S", {"n001": 100})),
        cluster_of(*_nodes(5)),
        pod,
        search=SearchState(),
        rng=random.Random(1),
    )
    assert isinstance(decision, Scheduled)
    assert decision.node_name == "n003"


def test_zones_are_interleaved_in_node_order() -> None:
    nodes = [make_node(f"{zone}{i}").zone(zone).obj() for zone in "ab" for i in range(2)]
    cluster = cluster_of(*nodes)
    assert [cluster.node_at(int(s)).name for s in cluster.node_order()] == ["a0", "b0", "a1", "b1"]
