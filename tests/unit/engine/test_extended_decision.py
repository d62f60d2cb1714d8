"""A decision with scheduler extenders: which calls it makes, and how their answers count.

The engine yields each extender call and is sent the answer; these tests answer
as an extender would (or fail as one can) and check the decision against
kube-scheduler's findNodesThatPassExtenders and prioritizeNodes.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from berth.engine.algorithm import Decision, Scheduled, SchedulingError, SearchState, Unschedulable
from berth.engine.extended_decision import (
    EXTENDER,
    ExtenderCall,
    ExtenderFailed,
    FilterCall,
    PrioritizeCalls,
    schedule_with_extenders,
)
from berth.engine.extenders import ExtenderConfig, FilterResult, HostPriority, ManagedResource
from berth.engine.framework.status import Code
from tests.builders import make_node, make_pod
from tests.unit.engine.fakes import FakeFilter, FakeScore, cluster_of, framework_with

NODES = ("a", "b", "c", "d")
FILTERING = ExtenderConfig(url_prefix="http://filter", filter_verb="filter")
GPU = "example.com/gpu"


def _decide(
    *plugins: object,
    extenders: tuple[ExtenderConfig, ...],
    answer: Callable[[ExtenderCall], object],
    pod: object = None,
    nodes: tuple[str, ...] = NODES,
) -> tuple[Decision, list[ExtenderCall]]:
    framework = framework_with(*plugins, extenders=extenders)
    cluster = cluster_of(*(make_node(name).obj() for name in nodes))
    steps = schedule_with_extenders(
        framework,
        cluster,
        pod or make_pod("p").build(),  # type: ignore[arg-type]
        extenders=framework.extenders,
        search=SearchState(),
        rng=random.Random(0),
    )
    calls: list[ExtenderCall] = []
    try:
        call = next(steps)
        while True:
            calls.append(call)
            call = steps.send(answer(call))
    except StopIteration as done:
        return done.value, calls


def _names(call: ExtenderCall) -> list[str]:
    return [node.name for node in call.nodes]


def _keep(*names: str, failed: dict[str, str] | None = None, **more: object) -> FilterResult:
    return FilterResult(node_names=names, failed=failed or {}, **more)  # type: ignore[arg-type]


def test_the_extender_filters_what_the_plugins_left_and_its_failures_make_the_message() -> None:
    def answer(call: ExtenderCall) -> object:
        return FilterResult(
            node_names=(),
            failed={"b": "no licence", "c": "no licence"},
            failed_and_unresolvable={"d": "wrong rack", "c": "wrong rack"},
        )

    decision, calls = _decide(
        FakeFilter("F", reject={"a"}, reason="node(s) were unlucky"),
        extenders=(FILTERING,),
        answer=answer,
    )
    assert [_names(call) for call in calls] == [["b", "c", "d"]]
    assert isinstance(decision, Unschedulable)
    # FailedAndUnresolvableNodes wins over FailedNodes for a node in both.
    assert decision.message == (
        "0/4 nodes are available: 1 no licence, 1 node(s) were unlucky, 2 wrong rack."
    )
    statuses = decision.diagnosis.node_statuses()
    codes = {decision.state.cluster.node_at(slot).name: s.code for slot, s in statuses.items()}
    assert codes == {
        "a": Code.UNSCHEDULABLE,
        "b": Code.UNSCHEDULABLE,
        "c": Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "d": Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    }
    assert decision.unschedulable_plugins == {"F", EXTENDER}


def test_extenders_filter_in_turn_the_non_ignorable_first() -> None:
    ignorable = ExtenderConfig(url_prefix="http://second", filter_verb="f", ignorable=True)
    keeps = {FILTERING.url_prefix: ("a", "b"), ignorable.url_prefix: ("b",)}

    def answer(call: ExtenderCall) -> object:
        assert isinstance(call, FilterCall)
        return _keep(*keeps[call.extender.url_prefix])

    decision, calls = _decide(extenders=(ignorable, FILTERING), answer=answer)
    assert [(c.extender.url_prefix, _names(c)) for c in calls] == [  # type: ignore[union-attr]
        ("http://filter", ["a", "b", "c", "d"]),
        ("http://second", ["a", "b"]),
    ]
    assert isinstance(decision, Scheduled) and decision.node_name == "b"


@pytest.mark.parametrize(("ignorable", "scheduled"), [(True, True), (False, False)])
def test_a_failing_filter_extender_is_skipped_only_when_ignorable(
    ignorable: bool, scheduled: bool
) -> None:
    extender = ExtenderConfig(url_prefix="http://x", filter_verb="f", ignorable=ignorable)
    message = 'Post "http://x/f": context deadline exceeded'
    decision, _ = _decide(extenders=(extender,), answer=lambda call: ExtenderFailed(message))
    if scheduled:
        assert isinstance(decision, Scheduled)
    else:
        assert isinstance(decision, SchedulingError) and decision.message == message


@pytest.mark.parametrize(("weight", "expected"), [(1, "a"), (5, "c")])
def test_prioritize_scores_are_scaled_weighted_and_added_to_the_plugins(
    weight: int, expected: str
) -> None:
    # The plugin prefers a by 100; the extender gives c 10 and a 5 (each x weight x 10).
    extender = ExtenderConfig(url_prefix="http://p", prioritize_verb="p", weight=weight)

    def answer(call: ExtenderCall) -> object:
        assert isinstance(call, PrioritizeCalls)
        return ((HostPriority("c", 10), HostPriority("a", 5), HostPriority("elsewhere", 10)),)

    decision, calls = _decide(
        FakeScore("S", by_name={"a": 100}),
        extenders=(extender,),
        answer=answer,
    )
    assert len(calls) == 1 and _names(calls[0]) == list(NODES)
    assert isinstance(decision, Scheduled) and decision.node_name == expected


def test_a_failed_prioritize_gives_no_scores_even_when_not_ignorable() -> None:
    extender = ExtenderConfig(url_prefix="http://p", prioritize_verb="p", weight=5)
    decision, _ = _decide(
        FakeScore("S", by_name={"d": 100}),
        extenders=(extender,),
        answer=lambda call: (ExtenderFailed("code 500"),),
    )
    assert isinstance(decision, Scheduled) and decision.node_name == "d"


def test_an_extender_managing_resources_the_pod_does_not_use_is_not_called() -> None:
    extender = ExtenderConfig(
        url_prefix="http://gpu", filter_verb="f", managed_resources=(ManagedResource(GPU),)
    )

    def refuse_everything(call: ExtenderCall) -> object:
        return FilterResult()

    plain, calls = _decide(extenders=(extender,), answer=refuse_everything)
    assert isinstance(plain, Scheduled) and calls == []
    gpu_pod = make_pod("g").req(example_com__gpu=1).build()
    refused, calls = _decide(extenders=(extender,), answer=refuse_everything, pod=gpu_pod)
    assert isinstance(refused, Unschedulable) and len(calls) == 1


def test_a_nominated_node_the_extender_refuses_is_searched_past() -> None:
    def answer(call: ExtenderCall) -> object:
        return _keep(*(name for name in _names(call) if name != "b"))

    decision, calls = _decide(
        extenders=(FILTERING,), answer=answer, pod=make_pod("p").nominated("b").build()
    )
    assert [_names(call) for call in calls] == [["b"], list(NODES)]
    assert isinstance(decision, Scheduled) and decision.node_name != "b"


def test_extenders_mean_every_feasible_node_is_wanted_even_without_score_plugins() -> None:
    # Without score plugins or extenders one feasible node would end the search.
    decision, calls = _decide(extenders=(FILTERING,), answer=lambda call: _keep("d"))
    assert _names(calls[0]) == list(NODES)
    assert isinstance(decision, Scheduled) and decision.node_name == "d"
