"""Leaving the unschedulable pool: queueing hints, events seen in flight, gates, the 5-minute flush."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from berth.engine.framework.events import (
    UNSCHEDULABLE_TIMEOUT,
    Action,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    QueueingHintFn,
    Resource,
)
from berth.engine.model.pod import Pod
from berth.engine.plugins.scheduling_gates import SchedulingGates
from berth.scheduling.pod_events import EVENT_FORCE_ACTIVATE
from berth.scheduling.queue import QueuedPodInfo
from berth.scheduling.queueing_hints import HintTable, Strategy, worth_requeuing
from tests.builders import make_pod
from tests.unit.scheduling.fakes import (
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    NODE_LABEL,
    NODE_TAINT,
    FakeGate,
    FakeRejector,
    Harness,
    SilentFilter,
    always,
    broken,
    make_queue,
)

QUEUE = always(QueueingHint.QUEUE)
SKIP = always(QueueingHint.SKIP)


def pod(name: str, priority: int = 0) -> Pod:
    return make_pod(name).priority(priority).build()


def pop(h: Harness) -> QueuedPodInfo:
    info = h.queue.pop_nowait()
    assert info is not None
    return info


def rejected(h: Harness, p: Pod, *plugins: str, pending: tuple[str, ...] = ()) -> QueuedPodInfo:
    """`p` tried once and rejected by `plugins`: now in the unschedulable pool."""
    h.queue.add(p)
    info = pop(h)
    h.queue.add_unschedulable(info, unschedulable_plugins=plugins, pending_plugins=pending)
    assert h.queue.queue_of(p.uid) == "unschedulable"
    return info


def registers(name: str, *pairs: tuple[ClusterEvent, QueueingHintFn | None]) -> FakeRejector:
    return FakeRejector(name, [ClusterEventWithHint(event, hint) for event, hint in pairs])


# ---------------------------------------------------------------------- hints


@dataclass(frozen=True)
class HintCase:
    plugins: tuple[object, ...]
    rejectors: tuple[str, ...]
    event: ClusterEvent
    wait: float  # seconds after the failure before the event
    expected: str


HINT_CASES = {
    "queue-after-backoff-over": HintCase(
        (registers("Fit", (NODE_ADD, QUEUE)),), ("Fit",), NODE_ADD, 5, "active"
    ),
    "queue-while-backing-off": HintCase(
        (registers("Fit", (NODE_ADD, QUEUE)),), ("Fit",), NODE_ADD, 0, "backoff"
    ),
    "skip-stays": HintCase(
        (registers("Fit", (NODE_ADD, SKIP)),), ("Fit",), NODE_ADD, 5, "unschedulable"
    ),
    "no-hint-means-queue": HintCase(
        (registers("Fit", (NODE_ADD, None)),), ("Fit",), NODE_ADD, 5, "active"
    ),
    "hint-error-counts-as-queue": HintCase(
        (registers("Fit", (NODE_ADD, broken)),), ("Fit",), NODE_ADD, 5, "active"
    ),
    "event-not-registered-by-rejector": HintCase(
        (registers("Fit", (NODE_ADD, SKIP)), registers("Taint", (NODE_TAINT, QUEUE))),
        ("Fit",),
        NODE_TAINT,
        5,
        "unschedulable",
    ),
    "any-rejector-queue-wins": HintCase(
        (registers("Fit", (NODE_ADD, SKIP)), registers("Taint", (NODE_ADD, QUEUE))),
        ("Fit", "Taint"),
        NODE_ADD,
        5,
        "active",
    ),
    "event-nobody-registered": HintCase(
        (registers("Fit", (NODE_ADD, QUEUE)),), ("Fit",), ASSIGNED_POD_DELETE, 5, "unschedulable"
    ),
    "plugin-without-registrations-hears-everything": HintCase(
        (SilentFilter("Old"), registers("Fit", (NODE_ADD, QUEUE))),
        ("Old",),
        NODE_TAINT,
        5,
        "active",
    ),
    "pod-registration-covers-assigned-pod": HintCase(
        (registers("Affinity", (ClusterEvent(Resource.POD, Action.DELETE), QUEUE)),),
        ("Affinity",),
        ASSIGNED_POD_DELETE,
        5,
        "active",
    ),
    "specific-update-matches-registered-flavour": HintCase(
        (
            registers(
                "Aff", (ClusterEvent(Resource.NODE, Action.ADD | Action.UPDATE_NODE_LABEL), QUEUE)
            ),
        ),
        ("Aff",),
        NODE_LABEL,
        5,
        "active",
    ),
    "generic-update-does-not-match-one-flavour": HintCase(
        (
            registers(
                "Aff", (ClusterEvent(Resource.NODE, Action.ADD | Action.UPDATE_NODE_LABEL), QUEUE)
            ),
        ),
        ("Aff",),
        ClusterEvent(Resource.NODE, Action.UPDATE),
        5,
        "unschedulable",
    ),
    "combined-flavours-match-each": HintCase(
        (registers("Aff", (ClusterEvent(Resource.NODE, Action.UPDATE_NODE_LABEL), QUEUE)),),
        ("Aff",),
        ClusterEvent(Resource.NODE, Action.UPDATE_NODE_LABEL | Action.UPDATE_NODE_TAINT),
        5,
        "active",
    ),
    "wildcard-registration-matches-anything": HintCase(
        (registers("Any", (ClusterEvent(Resource.WILDCARD, Action.ALL), QUEUE)),),
        ("Any",),
        ASSIGNED_POD_DELETE,
        5,
        "active",
    ),
}


@pytest.mark.parametrize("case", HINT_CASES.values(), ids=HINT_CASES.keys())
def test_cluster_event_moves_unschedulable_pods_its_hints_approve(case: HintCase) -> None:
    h = make_queue(*case.plugins)
    p = pod("a")
    rejected(h, p, *case.rejectors)
    h.clock.advance(case.wait)
    h.queue.on_cluster_event(case.event, None, object())
    assert h.queue.queue_of(p.uid) == case.expected


def test_only_the_rejectors_hints_run() -> None:
    fit = registers("Fit", (NODE_ADD, SKIP))
    other = registers("Other", (NODE_ADD, QUEUE))
    h = make_queue(fit, other)
    rejected(h, pod("a"), "Fit")
    h.queue.on_cluster_event(NODE_ADD, None, object())
    assert (len(fit.hint_calls), len(other.hint_calls)) == (1, 0)


def test_hints_see_the_rejected_pod_and_the_event_objects() -> None:
    seen: list[tuple[str, object, object]] = []

    def hint(p: Pod, old: object, new: object) -> QueueingHint:
        seen.append((p.name, old, new))
        return QueueingHint.SKIP

    h = make_queue(registers("Fit", (NODE_ADD, hint)))
    rejected(h, pod("a"), "Fit")
    h.queue.on_cluster_event(NODE_ADD, "old", "new")
    assert seen == [("a", "old", "new")]


def test_pending_plugin_queue_skips_backoff() -> None:
    h = make_queue(registers("Claims", (NODE_ADD, QUEUE)))
    p = pod("a")
    rejected(h, p, pending=("Claims",))
    h.queue.on_cluster_event(NODE_ADD, None, object())  # still within its backoff
    assert h.queue.queue_of(p.uid) == "active"


def test_pre_check_limits_which_pods_move() -> None:
    h = make_queue(registers("Fit", (ASSIGNED_POD_DELETE, QUEUE)))
    low, high = pod("low", 1), pod("high", 10)
    rejected(h, low, "Fit")
    rejected(h, high, "Fit")
    h.clock.advance(5)
    h.queue.on_cluster_event(ASSIGNED_POD_DELETE, None, None, pre_check=lambda p: p.priority <= 5)
    assert (h.queue.queue_of(low.uid), h.queue.queue_of(high.uid)) == ("active", "unschedulable")


def test_force_activate_with_a_pod_moves_only_that_pod() -> None:
    h = make_queue(registers("Fit", (NODE_ADD, SKIP)))
    a, b = pod("a"), pod("b")
    rejected(h, a, "Fit")
    rejected(h, b, "Fit")
    h.clock.advance(5)
    h.queue.on_cluster_event(EVENT_FORCE_ACTIVATE, None, b)
    assert (h.queue.queue_of(a.uid), h.queue.queue_of(b.uid)) == ("unschedulable", "active")


@pytest.mark.parametrize(
    ("rejectors", "pending", "expected"),
    [
        ((), (), Strategy.AFTER_BACKOFF),
        (("Fit",), (), Strategy.AFTER_BACKOFF),
        (("Other",), (), Strategy.SKIP),
        ((), ("Fit",), Strategy.IMMEDIATELY),
    ],
    ids=["no-rejectors-move", "rejector-queues", "rejector-not-registered", "pending-immediately"],
)
def test_worth_requeuing(
    rejectors: tuple[str, ...], pending: tuple[str, ...], expected: Strategy
) -> None:
    h = make_queue(registers("Fit", (NODE_ADD, QUEUE)))
    info = QueuedPodInfo(
        pod("a"), 0.0, unschedulable_plugins=set(rejectors), pending_plugins=set(pending)
    )
    assert worth_requeuing(info, NODE_ADD, None, None, HintTable(h.framework)) is expected


# ---------------------------------------------------------------------- events while in flight


@pytest.mark.parametrize(
    ("when", "expected"),
    [("before-pop", "unschedulable"), ("in-flight", "backoff"), ("never", "unschedulable")],
)
def test_event_seen_while_in_flight_requeues_on_failure(when: str, expected: str) -> None:
    h = make_queue(registers("Fit", (NODE_ADD, QUEUE)))
    p = pod("a")
    h.queue.add(p)
    if when == "before-pop":
        h.queue.on_cluster_event(NODE_ADD, None, object())
    info = pop(h)
    assert info.pod.name == "a"
    if when == "in-flight":
        h.queue.on_cluster_event(NODE_ADD, None, object())
    h.queue.add_unschedulable(info, unschedulable_plugins={"Fit"})
    assert h.queue.queue_of(p.uid) == expected


def test_in_flight_events_are_kept_only_while_someone_may_need_them() -> None:
    h = make_queue(registers("Fit", (NODE_ADD, QUEUE)))
    first, second = pod("first", 2), pod("second", 1)
    h.queue.add(first)
    h.queue.add(second)
    info_first = pop(h)
    h.queue.on_cluster_event(NODE_ADD, None, object())  # seen by `first` only
    info_second = pop(h)
    h.queue.done(info_first.uid)  # bound: the event is no longer needed by anyone
    h.queue.add_unschedulable(info_second, unschedulable_plugins={"Fit"})
    assert h.queue.queue_of(second.uid) == "unschedulable"


def test_own_update_while_in_flight_is_judged_on_return() -> None:
    gate_release = registers(
        "Taint", (ClusterEvent(Resource.POD, Action.UPDATE_POD_TOLERATIONS), QUEUE)
    )
    h = make_queue(gate_release)
    p = pod("a")
    h.queue.add(p)
    info = pop(h)
    tolerant = make_pod("a").uid(p.uid).toleration(key="k", operator="Exists").build()
    h.queue.update(p, replace(tolerant, resource_version="2"))
    h.queue.add_unschedulable(info, unschedulable_plugins={"Taint"})
    assert h.queue.queue_of(p.uid) == "backoff"
    assert info.pod.tolerations


def test_error_returns_to_backoff_regardless_of_events() -> None:
    h = make_queue(registers("Fit", (NODE_ADD, QUEUE)))
    h.queue.add(pod("a"))
    info = pop(h)
    h.queue.add_unschedulable(info, unschedulable_plugins=(), error=True)
    assert h.queue.queue_of(info.uid) == "backoff"


# ---------------------------------------------------------------------- own updates


def test_own_update_that_a_rejector_cares_about_moves_the_pod() -> None:
    toleration_change = ClusterEvent(Resource.POD, Action.UPDATE_POD_TOLERATIONS)
    h = make_queue(registers("Taint", (toleration_change, QUEUE)))
    p = pod("a")
    rejected(h, p, "Taint")
    h.clock.advance(5)
    tolerant = make_pod("a").uid(p.uid).toleration(key="k", operator="Exists").build()
    h.queue.update(p, replace(tolerant, resource_version="2"))
    assert h.queue.queue_of(p.uid) == "active"
    assert h.incoming[-1] == ("active", "TargetPodUpdatePodToleration")


def test_own_update_nobody_cares_about_keeps_the_pod() -> None:
    toleration_change = ClusterEvent(Resource.POD, Action.UPDATE_POD_TOLERATIONS)
    h = make_queue(registers("Taint", (toleration_change, QUEUE)))
    p = pod("a")
    rejected(h, p, "Taint")
    relabelled = replace(p, labels={"x": "y"}, resource_version="2")
    h.queue.update(p, relabelled)
    assert h.queue.queue_of(p.uid) == "unschedulable"


# ---------------------------------------------------------------------- gates


def gated_pod(name: str, *gates: str) -> Pod:
    builder = make_pod(name)
    for gate in gates:
        builder.gate(gate)
    return builder.build()


def test_gated_pod_waits_in_the_gated_set_with_the_plugin_message() -> None:
    h = make_queue(SchedulingGates())
    p = gated_pod("a", "example.com/wait", "other")
    h.queue.add(p)
    assert h.queue.pending_counts()["gated"] == 1
    assert h.queue.pop_nowait() is None
    info = h.queue.get(p.uid)
    assert info is not None
    assert (info.gating_plugin, info.gating_message) == (
        "SchedulingGates",
        "waiting for scheduling gates: [example.com/wait other]",
    )
    assert h.incoming == [("unschedulable", "UnscheduledPodAdd")]


def test_removing_the_gates_moves_the_pod_to_active() -> None:
    h = make_queue(SchedulingGates(), registers("Fit", (NODE_ADD, QUEUE)))
    p = gated_pod("a", "wait")
    h.queue.add(p)
    ungated = make_pod("a").uid(p.uid).build()
    h.queue.update(p, replace(ungated, resource_version="2"))
    assert h.queue.queue_of(p.uid) == "active"
    info = pop(h)
    assert (info.gated, info.initial_attempt_timestamp) == (False, 1000.0)


def test_removing_one_of_two_gates_keeps_the_pod_gated() -> None:
    h = make_queue(SchedulingGates())
    p = gated_pod("a", "one", "two")
    h.queue.add(p)
    h.queue.update(p, replace(gated_pod("a", "two"), uid=p.uid, resource_version="2"))
    assert h.queue.queue_of(p.uid) == "gated"


def test_gated_pod_ignores_events_its_gate_did_not_register() -> None:
    gate = FakeGate(events=[ClusterEventWithHint(NODE_LABEL, QUEUE)])
    fit = registers("Fit", (NODE_ADD, QUEUE))
    h = make_queue(gate, fit)
    p = replace(pod("a"), labels={"hold": "yes"})
    h.queue.add(p)
    calls = gate.calls
    h.queue.on_cluster_event(NODE_ADD, None, object())
    assert (h.queue.queue_of(p.uid), gate.calls) == ("gated", calls)
    h.queue.on_cluster_event(NODE_LABEL, None, object())  # its gate listens: PreEnqueue reruns
    assert (h.queue.queue_of(p.uid), gate.calls) == ("gated", calls + 1)


def test_gate_that_lifts_on_an_event_releases_the_pod() -> None:
    gate = FakeGate(events=[ClusterEventWithHint(NODE_LABEL, QUEUE)])
    h = make_queue(gate)
    p = replace(pod("a"), labels={"hold": "yes"})
    h.queue.add(p)
    info = h.queue.get(p.uid)
    assert info is not None
    info.pod = replace(p, labels={})  # what the gate checks has changed
    h.queue.on_cluster_event(NODE_LABEL, None, object())
    assert h.queue.queue_of(p.uid) == "active"


def test_pre_enqueue_runs_when_entering_backoff_not_when_leaving_it() -> None:
    gate = FakeGate()
    h = make_queue(gate, registers("Fit", (NODE_ADD, QUEUE)))
    h.queue.add(pod("a"))
    info = pop(h)
    h.queue.add_unschedulable(info, unschedulable_plugins={"Fit"})
    h.queue.on_cluster_event(NODE_ADD, None, object())
    calls = gate.calls
    h.clock.advance(5)
    h.queue.flush()
    assert (h.queue.queue_of(info.uid), gate.calls) == ("active", calls)


# ---------------------------------------------------------------------- the 5-minute flush


def test_unschedulable_pod_is_flushed_after_five_minutes() -> None:
    h = make_queue(registers("Fit", (NODE_ADD, SKIP)))
    p = pod("a")
    rejected(h, p, "Fit")
    h.queue.flush(1000.0 + 300.0)
    assert h.queue.queue_of(p.uid) == "unschedulable"
    h.queue.flush(1000.0 + 300.5)
    assert h.queue.queue_of(p.uid) == "active"
    assert h.incoming[-1] == ("active", "UnschedulableTimeout")


def test_flush_timeout_is_configurable_and_uses_the_last_failure_time() -> None:
    h = make_queue(registers("Fit", (NODE_ADD, SKIP)), max_in_unschedulable=60.0)
    p = pod("a")
    h.queue.add(p)
    h.clock.advance(200)  # time in activeQ does not count
    info = pop(h)
    h.queue.add_unschedulable(info, unschedulable_plugins={"Fit"})
    h.queue.flush(1200.0 + 60.0)
    assert h.queue.queue_of(p.uid) == "unschedulable"
    h.queue.flush(1200.0 + 61.0)
    assert h.queue.queue_of(p.uid) == "active"


def test_flushed_gated_pod_is_rechecked_then_left_for_another_period() -> None:
    gate = FakeGate()
    h = make_queue(gate)
    p = replace(pod("a"), labels={"hold": "yes"})
    h.queue.add(p)
    calls = gate.calls
    h.queue.flush(1301.0)
    assert (h.queue.queue_of(p.uid), gate.calls) == ("gated", calls + 1)
    h.queue.flush(1302.0)
    assert gate.calls == calls + 1
    h.queue.flush(1602.0)
    assert gate.calls == calls + 2


def test_unschedulable_timeout_seen_in_flight_requeues_the_returning_pod() -> None:
    h = make_queue(registers("Fit", (NODE_ADD, SKIP)))
    stale = pod("stale", 0)
    rejected(h, stale, "Fit")
    h.queue.add(pod("flying", 5))
    flying = pop(h)
    h.queue.flush(1400.0)
    assert h.queue.queue_of(stale.uid) == "active"
    h.clock.t = 1400.0
    h.queue.add_unschedulable(flying, unschedulable_plugins={"Fit"})
    assert h.queue.queue_of(flying.uid) == "backoff"


def test_unschedulable_timeout_is_a_wildcard() -> None:
    assert UNSCHEDULABLE_TIMEOUT.resource is Resource.WILDCARD
