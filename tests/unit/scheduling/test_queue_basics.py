"""Queue order, membership and bookkeeping: add, update and delete in every sub-queue."""

from __future__ import annotations

from dataclasses import replace

import pytest

from berth.engine.framework.events import ClusterEventWithHint, QueueingHint
from berth.engine.model.pod import Pod
from berth.scheduling.queue import QueuedPodInfo
from tests.builders import make_pod
from tests.unit.scheduling.fakes import (
    NODE_ADD,
    FakeGate,
    FakeRejector,
    Harness,
    always,
    make_queue,
)


def pod(name: str, priority: int = 0, **labels: str) -> Pod:
    return make_pod(name).priority(priority).labels(**labels).build()


def pop(h: Harness) -> QueuedPodInfo:
    info = h.queue.pop_nowait()
    assert info is not None
    return info


def drain(h: Harness) -> list[str]:
    names = []
    while (info := h.queue.pop_nowait()) is not None:
        names.append(info.pod.name)
    return names


def harness() -> Harness:
    return make_queue(
        FakeRejector("Fit", [ClusterEventWithHint(NODE_ADD, always(QueueingHint.QUEUE))]),
        FakeGate(),
    )


def place(h: Harness, p: Pod, where: str) -> None:
    """Put `p` into sub-queue `where` through the public API."""
    if where == "gated":
        h.queue.add(replace(p, labels={**p.labels, "hold": "yes"}))
        return
    h.queue.add(p)
    if where == "active":
        return
    info = pop(h)
    if where == "unschedulable":
        h.queue.add_unschedulable(info, unschedulable_plugins={"Fit"})
    elif where == "backoff":
        h.queue.add_unschedulable(info, unschedulable_plugins={"Fit"})
        h.queue.on_cluster_event(NODE_ADD, None, object())
    elif where == "error-backoff":
        h.queue.requeue_after_bind_failure(info)
    elif where == "in-flight":
        pass
    expected = {"error-backoff": "backoff", "in-flight": None}.get(where, where)
    assert h.queue.queue_of(p.uid) == expected


SUB_QUEUES = ["active", "backoff", "error-backoff", "unschedulable", "gated"]


# ---------------------------------------------------------------------- ordering


@pytest.mark.parametrize(
    ("arrivals", "expected"),
    [
        ([("a", 0), ("b", 0), ("c", 0)], ["a", "b", "c"]),
        ([("low", 0), ("high", 100), ("mid", 10)], ["high", "mid", "low"]),
        ([("a", 5), ("b", 10), ("c", 5), ("d", 10)], ["b", "d", "a", "c"]),
        ([("neg", -5), ("zero", 0)], ["zero", "neg"]),
    ],
    ids=["fifo-among-equals", "priority-first", "priority-then-time", "negative-priority"],
)
def test_active_queue_pops_by_priority_then_queue_time(
    arrivals: list[tuple[str, int]], expected: list[str]
) -> None:
    h = harness()
    for name, priority in arrivals:
        h.queue.add(pod(name, priority))
        h.clock.advance(0.1)
    assert drain(h) == expected


def test_requeued_pod_goes_behind_equal_priority_pods_that_arrived_before_its_failure() -> None:
    h = harness()
    h.queue.add(pod("first"))
    info = pop(h)
    h.clock.advance(5)
    h.queue.add(pod("second"))
    h.clock.advance(5)
    h.queue.add_unschedulable(info, unschedulable_plugins={"Fit"})
    h.clock.advance(20)  # backoff long over
    h.queue.on_cluster_event(NODE_ADD, None, object())
    h.queue.add(pod("third"))
    assert drain(h) == ["second", "first", "third"]


def test_attempts_and_initial_attempt_timestamp() -> None:
    h = harness()
    h.queue.add(pod("a"))
    info = pop(h)
    assert (info.attempts, info.initial_attempt_timestamp) == (1, 1000.0)
    h.clock.advance(30)
    h.queue.add_unschedulable(info, unschedulable_plugins={"Fit"})
    assert info.timestamp == 1030.0
    h.queue.on_cluster_event(NODE_ADD, None, object())
    h.clock.advance(30)
    h.queue.flush()
    again = pop(h)
    assert again is info
    assert (info.attempts, info.initial_attempt_timestamp) == (2, 1000.0)


# ---------------------------------------------------------------------- membership


@pytest.mark.parametrize("where", SUB_QUEUES)
def test_pending_counts_len_and_contains(where: str) -> None:
    h = harness()
    p = pod("a")
    place(h, p, where)
    expected = {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 0}
    expected["backoff" if where == "error-backoff" else where] = 1
    assert h.queue.pending_counts() == expected
    assert len(h.queue) == 1
    assert p.uid in h.queue
    assert h.queue.get(p.uid) is not None
    assert [info.pod.name for info in h.queue] == ["a"]


def test_in_flight_pod_is_not_pending() -> None:
    h = harness()
    p = pod("a")
    place(h, p, "in-flight")
    assert len(h.queue) == 0
    assert p.uid not in h.queue
    assert h.queue.is_in_flight(p.uid)
    h.queue.done(p.uid)
    assert not h.queue.is_in_flight(p.uid)


def test_pod_of_another_scheduler_is_ignored() -> None:
    h = make_queue(framework_for=lambda pod: None)
    h.queue.add(pod("a"))
    assert len(h.queue) == 0


def test_adding_a_known_pod_again_does_not_duplicate_it() -> None:
    h = harness()
    p = pod("a")
    h.queue.add(p)
    h.queue.add(p)
    assert drain(h) == ["a"]
    h.queue.add(p)  # re-listed while in flight
    assert len(h.queue) == 0


def test_clear_drops_everything() -> None:
    h = harness()
    pods = [pod(f"p{index}") for index in range(5)]
    place(h, pods[0], "in-flight")
    place(h, pods[1], "error-backoff")
    place(h, pods[2], "unschedulable")
    place(h, pods[3], "gated")
    place(h, pods[4], "active")
    assert len(h.queue) == 4
    h.queue.clear()
    assert len(h.queue) == 0
    assert h.queue.pop_nowait() is None
    assert not h.queue.is_in_flight(pods[0].uid)
    assert not any(p.uid in h.queue for p in pods)


# ---------------------------------------------------------------------- delete


@pytest.mark.parametrize("where", SUB_QUEUES)
def test_delete_removes_the_pod_from_any_sub_queue(where: str) -> None:
    h = harness()
    p = pod("a")
    place(h, p, where)
    h.queue.delete(p)
    assert p.uid not in h.queue
    assert len(h.queue) == 0
    h.clock.advance(600)
    h.queue.flush()
    h.queue.on_cluster_event(NODE_ADD, None, object())
    assert h.queue.pop_nowait() is None


@pytest.mark.parametrize("error", [False, True], ids=["rejected", "error"])
def test_pod_deleted_while_in_flight_is_not_requeued(error: bool) -> None:
    h = harness()
    p = pod("a")
    h.queue.add(p)
    info = pop(h)
    h.queue.delete(p)
    h.queue.add_unschedulable(info, unschedulable_plugins=set() if error else {"Fit"})
    assert len(h.queue) == 0
    assert not h.queue.is_in_flight(p.uid)


# ---------------------------------------------------------------------- update


@pytest.mark.parametrize("where", ["active", "backoff", "error-backoff"])
def test_update_in_active_or_backoff_replaces_the_pod_in_place(where: str) -> None:
    h = harness()
    p = pod("a")
    place(h, p, where)
    before = h.queue.get(p.uid)
    newer = replace(p, labels={"v": "2"}, resource_version="2")
    h.queue.update(p, newer)
    info = h.queue.get(p.uid)
    assert info is before
    assert info is not None and info.pod is newer
    assert h.queue.queue_of(p.uid) == ("active" if where == "active" else "backoff")


def test_update_of_unschedulable_pod_stays_when_no_hint_helps() -> None:
    h = harness()
    p = pod("a")
    place(h, p, "unschedulable")
    newer = replace(p, labels={"v": "2"}, resource_version="2")
    h.queue.update(p, newer)
    info = h.queue.get(p.uid)
    assert info is not None and info.pod is newer
    assert h.queue.queue_of(p.uid) == "unschedulable"


def test_update_of_unknown_pod_adds_it() -> None:
    h = harness()
    p = pod("a")
    h.queue.update(p, replace(p, resource_version="2"))
    assert h.queue.queue_of(p.uid) == "active"


def test_update_with_the_same_resource_version_is_a_redelivery() -> None:
    h = harness()
    p = replace(pod("a"), resource_version="7")
    place(h, p, "unschedulable")
    h.queue.update(p, replace(p, labels={"v": "2"}))
    info = h.queue.get(p.uid)
    assert info is not None and info.pod is p


def test_update_while_in_flight_is_kept_for_its_return() -> None:
    h = harness()
    p = pod("a")
    h.queue.add(p)
    info = pop(h)
    newer = replace(p, labels={"v": "2"}, resource_version="2")
    h.queue.update(p, newer)
    assert len(h.queue) == 0  # not re-added while being scheduled
    h.queue.add_unschedulable(info, unschedulable_plugins={"Fit"})
    assert info.pod is newer
    assert h.queue.queue_of(p.uid) == "unschedulable"


# ---------------------------------------------------------------------- metrics


def test_incoming_pods_are_counted_per_queue_and_event() -> None:
    h = harness()
    h.queue.add(pod("a"))
    info = pop(h)
    h.queue.add_unschedulable(info, unschedulable_plugins={"Fit"})
    h.queue.on_cluster_event(NODE_ADD, None, object())  # still backing off
    h.clock.advance(5)
    h.queue.flush()
    info = pop(h)
    h.queue.requeue_after_bind_failure(info)
    h.queue.add(pod("gated", hold="yes"))
    assert h.incoming == [
        ("active", "UnscheduledPodAdd"),
        ("unschedulable", "ScheduleAttemptFailure"),
        ("backoff", "NodeAdd"),
        ("active", "BackoffComplete"),
        ("backoff", "ScheduleAttemptFailure"),
        ("unschedulable", "UnscheduledPodAdd"),
    ]
