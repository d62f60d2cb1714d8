"""DefaultPreemption with preempting extenders (kube-scheduler's callExtenders): the candidates
are put to each interested extender in turn and the choice is made among those it keeps."""

from __future__ import annotations

import random
from collections.abc import Callable

from berth.engine.algorithm import SearchState, Unschedulable
from berth.engine.extended_decision import (
    ExtenderCall,
    ExtenderFailed,
    PreemptCall,
    schedule_with_extenders,
)
from berth.engine.extenders import ExtenderConfig, MetaVictims
from berth.engine.framework import names
from berth.engine.plugins.default_preemption import DefaultPreemption, parse_args
from tests.unit.engine.fakes import Built, cluster_of, framework_with
from tests.unit.engine.plugins.preemption_fakes import (
    CpuFit,
    cpu_nodes,
    make_preemptor,
    make_victim,
)

PREEMPTING = ExtenderConfig(url_prefix="http://keeper", preempt_verb="preempt")


def _preempt(
    *extenders: ExtenderConfig, answer: Callable[[PreemptCall], object]
) -> tuple[Unschedulable, list[PreemptCall]]:
    # Two full nodes, each with one low-priority pod the preemptor could replace.
    cluster = cluster_of(
        *cpu_nodes("a", "b", cpu="2"),
        pods=(
            make_victim("on-a", "a", cpu="2").obj(),
            make_victim("on-b", "b", cpu="2").obj(),
        ),
    )
    preemption = Built(
        names.DEFAULT_PREEMPTION,
        lambda handle: DefaultPreemption(parse_args(None), handle, rng=random.Random(1)),
    )
    framework = framework_with(CpuFit(), preemption, extenders=extenders)
    steps = schedule_with_extenders(
        framework,
        cluster,
        make_preemptor().build(),
        extenders=framework.extenders,
        search=SearchState(),
        rng=random.Random(1),
    )
    calls: list[PreemptCall] = []
    try:
        call: ExtenderCall = next(steps)
        while True:
            assert isinstance(call, PreemptCall)
            calls.append(call)
            call = steps.send(answer(call))
    except StopIteration as done:
        assert isinstance(done.value, Unschedulable)
        return done.value, calls


def _keep_only(node: str) -> Callable[[PreemptCall], object]:
    def answer(call: PreemptCall) -> object:
        found = call.victims[node]
        return {node: MetaVictims(tuple(p.uid for p in found.pods), found.pdb_violations)}

    return answer


def test_the_preemption_goes_where_the_extender_keeps_a_candidate() -> None:
    for node in ("a", "b"):
        decision, calls = _preempt(PREEMPTING, answer=_keep_only(node))
        assert len(calls) == 1 and set(calls[0].victims) == {"a", "b"}
        result = decision.post_filter
        assert result is not None and result.nominated_node == node
        assert [victim.name for victim in result.victims] == [f"on-{node}"]


def test_the_next_extender_gets_what_the_previous_kept() -> None:
    second = ExtenderConfig(url_prefix="http://second", preempt_verb="preempt", ignorable=True)
    decision, calls = _preempt(second, PREEMPTING, answer=_keep_only("b"))
    assert [(call.extender.url_prefix, sorted(call.victims)) for call in calls] == [
        ("http://keeper", ["a", "b"]),
        ("http://second", ["b"]),
    ]
    assert decision.post_filter is not None and decision.post_filter.nominated_node == "b"


def test_a_failing_extender_fails_preemption_unless_ignorable() -> None:
    failure = "failed preempt with extender at URL http://keeper/preempt, code 500"
    decision, _ = _preempt(PREEMPTING, answer=lambda call: ExtenderFailed(failure))
    assert decision.post_filter is not None
    assert decision.post_filter.nominated_node is None
    assert decision.message.endswith(f" preemption: {failure}")
    ignorable = ExtenderConfig(url_prefix="http://x", preempt_verb="p", ignorable=True)
    decision, _ = _preempt(ignorable, answer=lambda call: ExtenderFailed(failure))
    assert decision.post_filter is not None and decision.post_filter.nominated_node in {"a", "b"}


def test_an_extender_naming_a_pod_not_on_the_node_is_an_error() -> None:
    decision, _ = _preempt(PREEMPTING, answer=lambda call: {"a": MetaVictims(("on-b",), 0)})
    assert decision.message.endswith(
        " preemption: extender: http://keeper claims to preempt pod (UID: &{on-b}) on node: a, "
        "but the pod is not found on that node"
    )


def test_keeping_no_candidate_leaves_no_node_for_preemption() -> None:
    decision, _ = _preempt(PREEMPTING, answer=lambda call: {})
    assert decision.post_filter is not None and decision.post_filter.nominated_node is None
    assert decision.message.endswith(" preemption: no candidate node for preemption")


def test_a_kept_node_without_victims_is_an_error_unless_ignorable() -> None:
    decision, _ = _preempt(PREEMPTING, answer=lambda call: {"a": MetaVictims((), 0)})
    assert decision.message.endswith(' preemption: expected at least one victim pod on node "a"')
