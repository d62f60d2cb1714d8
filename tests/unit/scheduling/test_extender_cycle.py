"""The scheduler with extenders: a decision awaits them on a cluster that holds still, and an
interested binding extender binds instead of the Bind plugins."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from berth.engine.extended_decision import ExtenderFailed
from berth.engine.extenders import ExtenderConfig, FilterResult, HostPriority, ManagedResource
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.scheduling.loop import Scheduler
from berth.scheduling.ports import SchedulingReason
from tests.builders import make_node, make_pod
from tests.fakes import FakeBinder, FakeClock, FakeReporter
from tests.unit.engine.fakes import FakeScore, framework_with

FILTERING = ExtenderConfig(url_prefix="http://filter", filter_verb="filter")


@dataclass
class FakeExtenders:
    """The ExtenderCalls port: filter keeps every node (after `gate` opens, if set), records
    what it was offered; bind answers `bind_failure` (None: bound) and records the binding."""

    gate: asyncio.Event | None = None
    offered: list[list[str]] = field(default_factory=list)
    bound: list[tuple[str, str]] = field(default_factory=list)
    bind_failure: str | None = None

    async def filter(
        self, extender: ExtenderConfig, pod: Pod, nodes: Sequence[Node]
    ) -> FilterResult | ExtenderFailed:
        self.offered.append([node.name for node in nodes])
        if self.gate is not None:
            await self.gate.wait()
        return FilterResult(node_names=tuple(node.name for node in nodes))

    async def prioritize(
        self, extender: ExtenderConfig, pod: Pod, nodes: Sequence[Node]
    ) -> tuple[HostPriority, ...] | ExtenderFailed:
        return ()

    async def bind(
        self, extender: ExtenderConfig, pod: Pod, node_name: str
    ) -> ExtenderFailed | None:
        if self.bind_failure is not None:
            return ExtenderFailed(self.bind_failure)
        self.bound.append((pod.name, node_name))
        return None


def _scheduler(
    extenders: FakeExtenders, *configs: ExtenderConfig, binder: FakeBinder | None = None
) -> tuple[Scheduler, FakeReporter]:
    reporter = FakeReporter()
    scheduler = Scheduler(
        binder=binder or FakeBinder(),
        reporter=reporter,
        clock=FakeClock(),
        rng=random.Random(1),
        extenders=extenders,
    )
    # Every node scores the same but the one named "best".
    scheduler.set_profile(framework_with(FakeScore("S", by_name={"best": 100}), extenders=configs))
    scheduler.activate()
    return scheduler, reporter


def _pod(name: str) -> Pod:
    return make_pod(name).scheduler("test").req(cpu="1").build()


def _node(name: str) -> Node:
    return make_node(name).capacity(cpu="1", memory="1Gi", pods=10).build()


async def test_changes_that_arrive_while_extenders_answer_wait_until_the_pod_is_assumed() -> None:
    extenders = FakeExtenders(gate=asyncio.Event())
    scheduler, reporter = _scheduler(extenders, FILTERING)
    scheduler.on_node(_node("a"))
    pod = _pod("p")
    squatter = make_pod("squatter").req(cpu="1").node("a").build()
    scheduler.on_pod(pod)
    task = asyncio.create_task(scheduler.run())
    try:
        while not extenders.offered:
            await asyncio.sleep(0)
        # The decision is waiting on its extender: a better node appears, and a pod
        # takes node a's only CPU. Neither may change the decision under way.
        scheduler.on_node(_node("best"))
        scheduler.on_pod(squatter)
        assert scheduler.cache.cluster.slot_of("best") is None
        extenders.gate.set()  # type: ignore[union-attr]
        while not scheduler.cache.is_assumed(pod.uid) and not reporter.scheduled_pods:
            await asyncio.sleep(0)
        await scheduler.drain_binds()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert extenders.offered == [["a"]]
    assert reporter.scheduled_pods == [("p", "a", "test")]
    # Applied once the pod was assumed: nothing was lost.
    assert scheduler.cache.cluster.slot_of("best") is not None
    assert scheduler.cache.cluster.pod(squatter.uid) is not None


async def test_a_profile_without_interested_extenders_decides_without_awaiting() -> None:
    gpu = ExtenderConfig(
        url_prefix="http://gpu",
        filter_verb="filter",
        managed_resources=(ManagedResource("example.com/gpu"),),
    )
    scheduler, _ = _scheduler(FakeExtenders(), gpu)
    scheduler.on_node(_node("a"))
    pod = _pod("p")
    assert not scheduler.scheduling.calls_extenders(pod)
    assert scheduler.scheduling.calls_extenders(
        make_pod("g").scheduler("test").req(example_com__gpu=1).build()
    )
    scheduler.on_pod(pod)
    info = scheduler.queue.pop_nowait()
    assert info is not None
    scheduler.schedule_next(info)
    assert scheduler.cache.is_assumed(pod.uid)
    await scheduler.drain_binds()


BINDER = ExtenderConfig(url_prefix="http://binder", bind_verb="bind")


@pytest.mark.parametrize("ignorable", [False, True])
async def test_an_interested_binding_extender_binds_instead_of_the_bind_plugins(
    ignorable: bool,
) -> None:
    binder = FakeBinder()
    extenders = FakeExtenders()
    config = ExtenderConfig(url_prefix="http://binder", bind_verb="bind", ignorable=ignorable)
    scheduler, reporter = _scheduler(extenders, config, binder=binder)
    scheduler.on_node(_node("a"))
    scheduler.on_pod(_pod("p"))
    info = scheduler.queue.pop_nowait()
    assert info is not None
    await scheduler.schedule_with_extenders(info, extenders)
    await scheduler.drain_binds()
    assert extenders.bound == [("p", "a")]
    assert binder.posted == []
    assert reporter.scheduled_pods == [("p", "a", "test")]


@pytest.mark.parametrize(("ignorable", "bound_by_plugin"), [(False, False), (True, True)])
async def test_a_failing_binding_extender_fails_the_bind_unless_ignorable(
    ignorable: bool, bound_by_plugin: bool
) -> None:
    binder = FakeBinder()
    failure = 'Post "http://binder/bind": context deadline exceeded'
    extenders = FakeExtenders(bind_failure=failure)
    config = ExtenderConfig(url_prefix="http://binder", bind_verb="bind", ignorable=ignorable)
    scheduler, reporter = _scheduler(extenders, config, binder=binder)
    scheduler.on_node(_node("a"))
    pod = _pod("p")
    scheduler.on_pod(pod)
    info = scheduler.queue.pop_nowait()
    assert info is not None
    await scheduler.schedule_with_extenders(info, extenders)
    await scheduler.drain_binds()
    if bound_by_plugin:
        assert binder.posted == [("p", "a")]
        assert reporter.scheduled_pods == [("p", "a", "test")]
    else:
        assert binder.posted == []
        assert reporter.failures == [("p", failure, SchedulingReason.SCHEDULER_ERROR)]
        assert not scheduler.cache.is_assumed(pod.uid)


async def test_a_pod_extenders_rejected_is_retried_on_any_cluster_event() -> None:
    class RejectAll(FakeExtenders):
        async def filter(
            self, extender: ExtenderConfig, pod: Pod, nodes: Sequence[Node]
        ) -> FilterResult | ExtenderFailed:
            return FilterResult(failed={node.name: "no licence" for node in nodes})

    extenders = RejectAll()
    scheduler, reporter = _scheduler(extenders, FILTERING)
    scheduler.on_node(_node("a"))
    pod = _pod("p")
    scheduler.on_pod(pod)
    info = scheduler.queue.pop_nowait()
    assert info is not None
    await scheduler.schedule_with_extenders(info, extenders)
    assert reporter.failures == [
        ("p", "0/1 nodes are available: 1 no licence.", SchedulingReason.UNSCHEDULABLE)
    ]
    assert scheduler.queue.queue_of(pod.uid) == "unschedulable"
    # kube-scheduler: extenders say nothing of what helps, so any event may.
    scheduler.on_node(make_node("unrelated").label("x", "y").build())
    assert scheduler.queue.queue_of(pod.uid) != "unschedulable"
