"""Backoff: durations, rejection vs error counts, the 1-second window, flushing, PopFromBackoffQ."""

from __future__ import annotations

import pytest

from berth.engine.framework.events import ClusterEventWithHint, QueueingHint
from berth.engine.model.pod import Pod
from berth.scheduling.queue import QueuedPodInfo
from berth.scheduling.queued_pod import BackoffPolicy
from tests.builders import make_pod
from tests.unit.scheduling.fakes import NODE_ADD, FakeRejector, Harness, always, make_queue


def pod(name: str, priority: int = 0) -> Pod:
    return make_pod(name).priority(priority).build()


def harness(*, max_backoff: float = 10.0, start: float = 1000.0) -> Harness:
    fit = FakeRejector("Fit", [ClusterEventWithHint(NODE_ADD, always(QueueingHint.QUEUE))])
    return make_queue(fit, max_backoff=max_backoff, start=start)


def pop(h: Harness) -> QueuedPodInfo:
    info = h.queue.pop_nowait()
    assert info is not None
    return info


@pytest.mark.parametrize(
    ("initial", "maximum", "durations"),
    [
        (1.0, 10.0, [0, 1, 2, 4, 8, 10, 10, 10]),
        (0.5, 3.0, [0, 0.5, 1, 2, 3, 3]),
        (2.0, 2.0, [0, 2, 2, 2]),
        (5.0, 1.0, [0, 1, 1]),
    ],
    ids=["defaults", "custom", "flat", "initial-above-max"],
)
def test_backoff_duration_doubles_from_initial_up_to_max(
    initial: float, maximum: float, durations: list[float]
) -> None:
    policy = BackoffPolicy(initial, maximum)
    assert [policy.duration(count) for count in range(len(durations))] == durations
    assert policy.duration(10_000) == maximum


@pytest.mark.parametrize("error", [False, True], ids=["rejections", "errors"])
def test_backoff_grows_1_2_4_8_10_10_with_each_failure(error: bool) -> None:
    h = harness()
    h.queue.add(pod("a"))
    seen = []
    for _ in range(6):
        info = pop(h)
        failed_at = h.clock.now()
        if error:
            h.queue.requeue_after_bind_failure(info)
        else:
            h.queue.add_unschedulable(info, unschedulable_plugins={"Fit"})
            h.queue.on_cluster_event(NODE_ADD, None, object())
        assert h.queue.queue_of(info.uid) == "backoff"
        expiry = h.queue.backoff_expiry(info)
        assert expiry is not None
        seen.append(expiry - failed_at)
        # Still backing off for the whole window the expiry falls in; released after it.
        h.clock.t = expiry + 0.999
        h.queue.flush()
        assert h.queue.queue_of(info.uid) == "backoff"
        h.clock.t = expiry + 1.0
        h.queue.flush()
        assert h.queue.queue_of(info.uid) == "active"
    assert seen == [1, 2, 4, 8, 10, 10]


def test_expiry_is_truncated_to_the_one_second_window() -> None:
    h = harness(start=1000.3)
    h.queue.add(pod("a"))
    info = pop(h)
    h.queue.requeue_after_bind_failure(info)  # ends at 1001.3, window 1001
    assert h.queue.backoff_expiry(info) == 1001.0
    h.queue.flush(1001.9)
    assert h.queue.queue_of(info.uid) == "backoff"
    h.queue.flush(1002.0)
    assert h.queue.queue_of(info.uid) == "active"


def test_error_count_drives_backoff_after_an_error_and_resets_on_rejection() -> None:
    h = harness()
    h.queue.add(pod("a"))
    info = pop(h)
    for plugins, expected in [
        ({"Fit"}, (1, 0, 1)),
        ({"Fit"}, (2, 0, 2)),
        (set(), (2, 1, 1)),  # error: error count 1 -> 1 s although rejected twice
        (set(), (2, 2, 2)),
        ({"Fit"}, (3, 0, 4)),  # rejection: errors forgotten, third rejection -> 4 s
    ]:
        h.queue.add_unschedulable(info, unschedulable_plugins=plugins)
        counts = (info.unschedulable_count, info.consecutive_errors_count)
        expiry = h.queue.backoff_expiry(info)
        assert expiry is not None
        assert (*counts, expiry - h.clock.now()) == expected
        h.queue.delete(info.pod)
        h.queue.add(info.pod)
        assert pop(h).pod is info.pod


def test_error_goes_to_backoff_even_without_events_rejection_waits_for_one() -> None:
    h = harness()
    h.queue.add(pod("rejected"))
    h.queue.add(pod("broken"))
    rejected, broken = pop(h), pop(h)
    h.queue.add_unschedulable(rejected, unschedulable_plugins={"Fit"})
    h.queue.add_unschedulable(broken, unschedulable_plugins=(), error=False)  # nobody to blame
    assert h.queue.queue_of(rejected.uid) == "unschedulable"
    assert h.queue.queue_of(broken.uid) == "backoff"
    assert broken.consecutive_errors_count == 1


def test_error_flag_overrides_plugins() -> None:
    h = harness()
    h.queue.add(pod("a"))
    info = pop(h)
    h.queue.add_unschedulable(info, unschedulable_plugins={"Fit"}, error=True)
    assert (info.unschedulable_plugins, info.consecutive_errors_count) == (set(), 1)
    assert h.queue.queue_of(info.uid) == "backoff"


def test_zero_max_backoff_disables_backoff() -> None:
    h = harness(max_backoff=0.0)
    h.queue.add(pod("a"))
    info = pop(h)
    h.queue.requeue_after_bind_failure(info)
    assert h.queue.backoff_expiry(info) is None
    assert h.queue.queue_of(info.uid) == "active"


def test_event_after_backoff_is_over_moves_straight_to_active() -> None:
    h = harness()
    h.queue.add(pod("a"))
    info = pop(h)
    h.queue.add_unschedulable(info, unschedulable_plugins={"Fit"})
    h.clock.advance(2.0)  # expiry 1001, window 1001 is over at 1002
    h.queue.on_cluster_event(NODE_ADD, None, object())
    assert h.queue.queue_of(info.uid) == "active"


# ---------------------------------------------------------------------- PopFromBackoffQ


def _to_rejection_backoff(h: Harness, *pods: Pod) -> list[QueuedPodInfo]:
    infos = []
    for p in pods:
        h.queue.add(p)
        infos.append(pop(h))
    for info in infos:
        h.queue.add_unschedulable(info, unschedulable_plugins={"Fit"})
    h.queue.on_cluster_event(NODE_ADD, None, object())
    assert all(h.queue.queue_of(info.uid) == "backoff" for info in infos)
    return infos


def test_pop_takes_the_rejection_backoff_head_early_when_active_is_empty() -> None:
    h = harness()
    (info,) = _to_rejection_backoff(h, pod("a"))
    h.incoming.clear()
    assert h.queue.pop_nowait() is info
    assert h.incoming == [("active", "PopFromBackoffQ")]
    assert info.attempts == 2


def test_active_pods_pop_before_backoff_pods() -> None:
    h = harness()
    _to_rejection_backoff(h, pod("backing-off", priority=100))
    h.queue.add(pod("fresh", priority=0))
    assert [pop(h).pod.name, pop(h).pod.name] == ["fresh", "backing-off"]


def test_error_backoff_is_never_popped_early() -> None:
    h = harness()
    h.queue.add(pod("a"))
    info = pop(h)
    h.queue.requeue_after_bind_failure(info)
    assert h.queue.pop_nowait() is None
    h.clock.advance(2)
    h.queue.flush()
    assert h.queue.pop_nowait() is info


def test_backoff_pops_by_expiry_then_priority_within_a_window() -> None:
    h = harness()
    h.queue.add(pod("early", priority=5))
    early = pop(h)
    h.queue.add_unschedulable(early, unschedulable_plugins={"Fit"})  # expiry 1001
    h.clock.advance(0.5)
    h.queue.add(pod("low", priority=1))
    h.queue.add(pod("high", priority=9))
    high, low = pop(h), pop(h)
    assert (high.pod.name, low.pod.name) == ("high", "low")
    for info in (low, high):
        h.queue.add_unschedulable(info, unschedulable_plugins={"Fit"})  # 1001.5 -> window 1001
    h.clock.advance(0.5)
    h.queue.add(pod("late"))
    late = pop(h)
    h.queue.add_unschedulable(late, unschedulable_plugins={"Fit"})  # 1002 -> window 1002
    h.queue.on_cluster_event(NODE_ADD, None, object())
    order = [pop(h).pod.name for _ in range(4)]
    assert order == ["high", "early", "low", "late"]


def test_flush_releases_a_whole_window_in_priority_order() -> None:
    h = harness()
    infos = _to_rejection_backoff(h, pod("p1", 1), pod("p5", 5), pod("p3", 3))
    h.queue.flush(1002.0)
    assert [h.queue.queue_of(info.uid) for info in infos] == ["active"] * 3
    assert [pop(h).pod.name for _ in range(3)] == ["p5", "p3", "p1"]
