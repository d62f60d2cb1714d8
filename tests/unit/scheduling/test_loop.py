"""The scheduling loop: assume before bind, bounded concurrent binds, failures forget and requeue."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field

import pytest

from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.scheduling.loop import Scheduler
from berth.scheduling.ports import BindOutcome, NullObserver, SchedulingReason
from tests.builders import make_node, make_pod
from tests.fakes import FakeBinder, FakeClock, FakeReporter
from tests.unit.engine.fakes import FakeFilter, FakeScore, framework_with


def _scheduler(binder: FakeBinder, reporter: FakeReporter, *plugins: object) -> Scheduler:
    scheduler = Scheduler(binder=binder, reporter=reporter, clock=FakeClock(), rng=random.Random(1))
    scheduler.set_profile(framework_with(*plugins))
    scheduler.activate()
    return scheduler


def _cycle(scheduler: Scheduler) -> None:
    info = scheduler.queue.pop_nowait()
    assert info is not None
    scheduler.schedule_next(info)


def _pod(name: str) -> Pod:
    return make_pod(name).scheduler("test").req(cpu="1").build()


def _node(name: str) -> Node:
    return make_node(name).capacity(cpu="1", memory="1Gi", pods=10).build()


async def test_assumes_before_binding_so_the_next_decision_sees_the_pod() -> None:
    binder = FakeBinder(gate=asyncio.Event())
    reporter = FakeReporter()
    fits = FakeFilter("Fits")
    scheduler = _scheduler(binder, reporter, fits)
    scheduler.on_node(_node("a"))
    scheduler.on_pod(_pod("first"))
    _cycle(scheduler)
    slot = scheduler.cache.cluster.slot_of("a")
    assert slot is not None
    assert scheduler.cache.assumed_count == 1
    assert int(scheduler.cache.cluster.requested[0, slot]) == 1000  # reserved before the bind lands
    binder.gate.set()  # type: ignore[union-attr]
    await scheduler.drain_binds()
    assert binder.posted == [("first", "a")]
    assert reporter.scheduled_pods == [("first", "a", "test")]


async def test_conflict_forgets_the_assumption_and_requeues() -> None:
    binder = FakeBinder(outcomes={"p": BindOutcome.CONFLICT})
    reporter = FakeReporter()
    scheduler = _scheduler(binder, reporter, FakeFilter("Fits"))
    scheduler.on_node(_node("a"))
    pod = _pod("p")
    scheduler.on_pod(pod)
    _cycle(scheduler)
    await scheduler.drain_binds()
    assert not scheduler.cache.is_assumed(pod.uid)
    assert scheduler.cache.cluster.pod(pod.uid) is None
    assert scheduler.queue.queue_of(pod.uid) == "backoff"
    assert reporter.failures and reporter.failures[0][2] is SchedulingReason.SCHEDULER_ERROR


async def test_gone_pod_is_dropped_not_requeued() -> None:
    binder = FakeBinder(outcomes={"p": BindOutcome.GONE})
    scheduler = _scheduler(binder, FakeReporter(), FakeFilter("Fits"))
    scheduler.on_node(_node("a"))
    pod = _pod("p")
    scheduler.on_pod(pod)
    _cycle(scheduler)
    await scheduler.drain_binds()
    assert pod.uid not in scheduler.queue
    assert scheduler.cache.cluster.pod(pod.uid) is None


async def test_no_bind_is_posted_after_losing_leadership() -> None:
    binder = FakeBinder(gate=asyncio.Event())
    scheduler = _scheduler(binder, FakeReporter(), FakeFilter("Fits"))
    scheduler.on_node(_node("a"))
    scheduler.on_pod(_pod("p"))
    _cycle(scheduler)
    scheduler.deactivate()
    binder.gate.set()  # type: ignore[union-attr]
    await scheduler.drain_binds()
    assert binder.posted == []
    assert scheduler.cache.assumed_count == 0


async def test_unschedulable_pod_reports_and_waits_for_a_helpful_event() -> None:
    reporter = FakeReporter()
    scheduler = _scheduler(
        FakeBinder(), reporter, FakeFilter("Deny", reject={"a"}, reason="node(s) nope")
    )
    scheduler.on_node(_node("a"))
    pod = _pod("p")
    scheduler.on_pod(pod)
    _cycle(scheduler)
    assert reporter.failures == [
        ("p", "0/1 nodes are available: 1 node(s) nope.", SchedulingReason.UNSCHEDULABLE)
    ]
    assert scheduler.queue.queue_of(pod.uid) == "unschedulable"


async def test_bound_pod_from_the_watch_confirms_the_assumption() -> None:
    scheduler = _scheduler(FakeBinder(), FakeReporter(), FakeFilter("Fits"))
    scheduler.on_node(_node("a"))
    pod = _pod("p")
    scheduler.on_pod(pod)
    _cycle(scheduler)
    await scheduler.drain_binds()
    scheduler.on_pod(make_pod("p").uid(pod.uid).scheduler("test").req(cpu="1").node("a").build())
    assert not scheduler.cache.is_assumed(pod.uid)
    assert scheduler.cache.cluster.pod(pod.uid) is not None


async def test_pods_wait_for_their_profile_to_appear() -> None:
    scheduler = Scheduler(
        binder=FakeBinder(), reporter=FakeReporter(), clock=FakeClock(), rng=random.Random(1)
    )
    scheduler.on_node(_node("a"))
    pod = _pod("p")
    scheduler.on_pod(pod)
    assert pod.uid not in scheduler.queue
    scheduler.set_profile(framework_with(FakeFilter("Fits"), FakeScore("S")))
    assert pod.uid in scheduler.queue


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
async def test_terminal_pods_leave_queue_and_cache(phase: str) -> None:
    scheduler = _scheduler(FakeBinder(), FakeReporter(), FakeFilter("Fits"))
    scheduler.on_node(_node("a"))
    bound = make_pod("b").req(cpu="1").node("a").build()
    scheduler.on_pod(bound)
    assert scheduler.cache.cluster.pod(bound.uid) is not None
    scheduler.on_pod(make_pod("b").uid(bound.uid).req(cpu="1").node("a").phase(phase).build())
    assert scheduler.cache.cluster.pod(bound.uid) is None


class ExplodingFilter(FakeFilter):
    def filter(self, state, pod, slots):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")


async def test_a_plugin_bug_costs_one_attempt_not_the_loop() -> None:
    reporter = FakeReporter()
    scheduler = _scheduler(FakeBinder(), reporter, ExplodingFilter("Explodes"))
    scheduler.on_node(_node("a"))
    pod = _pod("p")
    scheduler.on_pod(pod)
    task = asyncio.create_task(scheduler.run())
    try:
        for _ in range(100):
            if reporter.failures:
                break
            await asyncio.sleep(0)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    message = 'running Filter plugin "Explodes": RuntimeError: boom'  # the plugin is named
    assert reporter.failures == [("p", message, SchedulingReason.SCHEDULER_ERROR)]
    assert scheduler.queue.queue_of(pod.uid) == "backoff"


@dataclass
class RecordingObserver(NullObserver):
    cycles: list[tuple[str, list[tuple[str, str, float]], list[tuple[str, str, str, float]]]] = (
        field(default_factory=list)
    )
    attempts: list[tuple[str, str]] = field(default_factory=list)

    def cycle(
        self,
        *,
        profile: str,
        points: list[tuple[str, str, float]],
        plugins: list[tuple[str, str, str, float]],
    ) -> None:
        self.cycles.append((profile, points, plugins))

    def attempt(self, *, result: str, profile: str, seconds: float) -> None:
        self.attempts.append((result, profile))


async def test_each_cycle_reports_extension_point_durations() -> None:
    observer = RecordingObserver()
    scheduler = Scheduler(
        binder=FakeBinder(),
        reporter=FakeReporter(),
        clock=FakeClock(),
        rng=random.Random(1),
        observer=observer,
    )
    scheduler.set_profile(framework_with(FakeFilter("Fits"), FakeScore("S")))
    scheduler.activate()
    for name in ("a", "b"):
        scheduler.on_node(_node(name))
    scheduler.on_pod(_pod("p"))
    _cycle(scheduler)
    await scheduler.drain_binds()
    (profile, points, _plugins), (binding_profile, binding_points, _) = observer.cycles
    assert profile == "test"
    assert [point for point, _status, _seconds in points] == ["PreFilter", "PreScore", "Score"]
    # The binding cycle's points follow when it ends, as kube-scheduler times them.
    assert binding_profile == "test"
    assert [point for point, _status, _seconds in binding_points] == [
        "Reserve",
        "Permit",
        "PreBindPreFlight",
        "PreBind",
        "Bind",
        "PostBind",
    ]
    assert observer.attempts == [("scheduled", "test")]


async def test_a_listing_never_undoes_what_the_watch_saw_while_it_was_taken() -> None:
    scheduler = _scheduler(FakeBinder(), FakeReporter(), FakeFilter("Fits"))
    scheduler.on_node(_node("old"))
    bound = make_pod("bound").req(cpu="1").node("old").build()
    scheduler.on_pod(bound)
    scheduler.begin_listing()
    # While the LIST is in flight the watch reports a new node and a deletion.
    scheduler.on_node(_node("new"))
    scheduler.on_pod_deleted(bound)
    # The listing was taken before either: it has "old" and the bound pod, not "new".
    scheduler.reconcile([_node("old")], [bound])
    cluster = scheduler.cache.cluster
    assert cluster.node_named("new") is not None, "a node the watch added is no ghost"
    assert cluster.pod(bound.uid) is None, "a pod the watch deleted is not revived"


async def test_a_listing_drops_true_ghosts() -> None:
    scheduler = _scheduler(FakeBinder(), FakeReporter(), FakeFilter("Fits"))
    scheduler.on_node(_node("gone"))
    scheduler.on_pod(make_pod("ghost").req(cpu="1").node("gone").build())
    scheduler.begin_listing()
    scheduler.reconcile([_node("kept")], [])
    cluster = scheduler.cache.cluster
    assert cluster.node_named("gone") is None
    assert cluster.node_named("kept") is not None
    assert cluster.pod_total == 0
