"""`pop` waits on the event loop for work and wakes when work arrives (no real time passes)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from berth.engine.framework.events import ClusterEventWithHint, QueueingHint
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


def harness() -> Harness:
    return make_queue(
        FakeRejector("Fit", [ClusterEventWithHint(NODE_ADD, always(QueueingHint.QUEUE))])
    )


async def _yield_a_few_times() -> None:
    for _ in range(5):
        await asyncio.sleep(0)  # hands the loop to other tasks; no time passes


def run_waiting_pop(h: Harness, wake: Callable[[], None] | None) -> QueuedPodInfo | None:
    """Start `pop`, let it block, call `wake`, and return what it popped (None: still waiting)."""

    async def scenario() -> QueuedPodInfo | None:
        task = asyncio.ensure_future(h.queue.pop())
        await _yield_a_few_times()
        assert not task.done(), "pop returned although nothing was queued"
        if wake is not None:
            wake()
        await _yield_a_few_times()
        if not task.done():
            task.cancel()
            return None
        return task.result()

    return asyncio.run(scenario())


def test_pop_returns_at_once_when_work_is_queued() -> None:
    h = harness()
    h.queue.add(make_pod("a").build())

    async def scenario() -> QueuedPodInfo:
        return await h.queue.pop()

    assert asyncio.run(scenario()).pod.name == "a"


def test_pop_wakes_when_a_pod_is_added() -> None:
    h = harness()
    info = run_waiting_pop(h, lambda: h.queue.add(make_pod("a").build()))
    assert info is not None and info.pod.name == "a"
    assert h.queue.is_in_flight(info.uid)


def test_pop_keeps_waiting_when_nothing_arrives() -> None:
    assert run_waiting_pop(harness(), None) is None


def test_pop_keeps_waiting_for_a_gated_pod() -> None:
    gated = make_pod("a").labels(hold="yes").build()
    h = make_queue(FakeGate())
    assert run_waiting_pop(h, lambda: h.queue.add(gated)) is None


def test_pop_wakes_for_a_pod_entering_the_rejection_backoff_queue() -> None:
    h = harness()
    h.queue.add(make_pod("a").build())
    info = h.queue.pop_nowait()
    assert info is not None
    h.queue.add_unschedulable(info, unschedulable_plugins={"Fit"})
    woken = run_waiting_pop(h, lambda: h.queue.on_cluster_event(NODE_ADD, None, object()))
    assert woken is info  # taken from backoffQ early (PopFromBackoffQ)


def test_pop_waits_for_the_error_backoff_to_end() -> None:
    h = harness()
    h.queue.add(make_pod("a").build())
    info = h.queue.pop_nowait()
    assert info is not None
    h.queue.requeue_after_bind_failure(info)

    def later() -> None:
        h.clock.advance(2.0)
        h.queue.flush()

    assert run_waiting_pop(h, later) is info
