"""A plugin loaded from an installed package that raises costs one attempt of one pod, never the loop.

The plugin (tests/exploding_plugin.py) is loaded through a real `berth.plugins` entry
point and raises at one extension point for the pod labelled `explode`. The scheduling
loop runs for real: the broken pod gets an Error (a FailedScheduling report naming the
plugin, then backoff), holds no capacity, and the pod queued after it is bound.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from berth.engine.model.pod import Pod
from berth.engine.registry import Registry
from berth.profiles import load_profile, plugin_registry
from berth.scheduling.loop import Scheduler
from berth.scheduling.ports import BindOutcome, SchedulingReason
from tests.builders import make_node, make_pod
from tests.exploding_plugin import LABEL, NAME, POINTS
from tests.fakes import FakeBinder, FakeClock, FakeReporter
from tests.plugin_packages import install_distribution

# How each point's failure is worded: kube-scheduler's name for the point.
POINT_LABELS = {point: point[0].upper() + point[1:] for point in POINTS}


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    install_distribution(
        tmp_path,
        monkeypatch,
        name="berth-test-exploding",
        entry_points={NAME: "tests.exploding_plugin:new_plugin"},
    )
    return plugin_registry(announce=lambda _line: None)


def _profile(at: str) -> dict[str, Any]:
    plugins: dict[str, Any] = {"multiPoint": {"enabled": [{"name": NAME}]}}
    if at == "bind":
        # Ahead of DefaultBinder, which would otherwise bind before it is asked.
        plugins["bind"] = {"enabled": [{"name": NAME}, {"name": "DefaultBinder"}]}
    return {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": "plugged"},
        "spec": {
            "schedulerName": "plugged",
            "plugins": plugins,
            "pluginConfig": [{"name": NAME, "args": {"at": at}}],
        },
    }


@dataclass
class Run:
    scheduler: Scheduler
    binder: FakeBinder
    reporter: FakeReporter
    doomed: Pod
    fine: Pod


async def _until(condition: Callable[[], bool]) -> None:
    """Let the loop and its binding cycles run until `condition` holds (no clock involved)."""
    for _ in range(2000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the scheduler never got there")


async def _run(
    registry: Registry, at: str, *, done: Callable[[Run], bool], binder: FakeBinder | None = None
) -> Run:
    binder = binder or FakeBinder()
    reporter = FakeReporter()
    scheduler = Scheduler(binder=binder, reporter=reporter, clock=FakeClock(), rng=random.Random(1))
    scheduler.set_profile(load_profile(_profile(at), registry=registry).framework)
    scheduler.activate()
    for index in range(2):  # two feasible nodes, so that scoring runs
        scheduler.on_node(make_node(f"n{index}").capacity(cpu="4", memory="4Gi", pods=10).build())
    # Too big for any node when PostFilter is the point under test: it runs only then.
    cpu = "8" if at == "postFilter" else "1"
    doomed = make_pod("doomed").scheduler("plugged").label(LABEL, "yes").req(cpu=cpu).build()
    fine = make_pod("fine").scheduler("plugged").req(cpu="1").build()
    run = Run(scheduler, binder, reporter, doomed, fine)
    scheduler.on_pod(doomed)
    scheduler.on_pod(fine)
    loop = asyncio.create_task(scheduler.run())
    try:
        await _until(lambda: done(run) or loop.done())
        assert not loop.done(), "the scheduling loop ended"
        await scheduler.drain_binds()
    finally:
        loop.cancel()
        await asyncio.gather(loop, return_exceptions=True)
    return run


def _fine_bound(run: Run) -> bool:
    return any(name == "fine" for name, _node, _profile in run.reporter.scheduled_pods)


def _both_settled(run: Run) -> bool:
    return _fine_bound(run) and bool(run.reporter.failures)


SPECIAL = ("eventsToRegister", "preEnqueue", "postFilter", "unreserve", "postBind")
ERRORS = [point for point in POINTS if point not in SPECIAL]


@pytest.mark.parametrize("at", ERRORS)
async def test_a_raising_plugin_costs_the_pod_one_attempt_with_an_error(
    registry: Registry, at: str
) -> None:
    run = await _run(registry, at, done=_both_settled)
    point = POINT_LABELS[at]
    message = f'running {point} plugin "{NAME}": Exploded: {NAME} blew up at {at}'
    assert run.reporter.failures == [("doomed", message, SchedulingReason.SCHEDULER_ERROR)]
    assert [pod for pod, _node in run.binder.posted] == ["fine"]
    cache = run.scheduler.cache
    assert not cache.is_assumed(run.doomed.uid)
    assert cache.cluster.pod(run.doomed.uid) is None  # it holds no capacity
    assert run.scheduler.queue.queue_of(run.doomed.uid) == "backoff"


async def test_a_raising_post_filter_leaves_the_pod_unschedulable_saying_why(
    registry: Registry,
) -> None:
    # As kube-scheduler: a PostFilter error is logged and its message joins the fit error.
    run = await _run(registry, "postFilter", done=_both_settled)
    message = (
        "0/2 nodes are available: 2 Insufficient cpu. "
        f'running PostFilter plugin "{NAME}": Exploded: {NAME} blew up at postFilter'
    )
    assert run.reporter.failures == [("doomed", message, SchedulingReason.UNSCHEDULABLE)]
    assert run.scheduler.queue.queue_of(run.doomed.uid) == "unschedulable"
    assert [pod for pod, _node in run.binder.posted] == ["fine"]


async def test_a_raising_pre_enqueue_holds_the_pod_back(registry: Registry) -> None:
    run = await _run(registry, "preEnqueue", done=_fine_bound)
    queue = run.scheduler.queue
    assert queue.queue_of(run.doomed.uid) == "gated"
    info = queue.get(run.doomed.uid)
    assert info is not None
    assert info.gating_plugin == NAME
    assert info.gating_message.startswith(f'running PreEnqueue plugin "{NAME}": Exploded')
    assert [pod for pod, _node in run.binder.posted] == ["fine"]


async def test_a_raising_unreserve_still_forgets_the_pod_and_requeues_it(
    registry: Registry,
) -> None:
    # The bind fails, so the binding cycle unreserves: the plugin raises there.
    binder = FakeBinder(outcomes={"doomed": BindOutcome.FAILED})
    run = await _run(registry, "unreserve", done=_both_settled, binder=binder)
    message = 'running Bind plugin "DefaultBinder": test'
    assert run.reporter.failures == [("doomed", message, SchedulingReason.SCHEDULER_ERROR)]
    assert not run.scheduler.cache.is_assumed(run.doomed.uid)
    assert run.scheduler.cache.cluster.pod(run.doomed.uid) is None
    assert run.scheduler.queue.queue_of(run.doomed.uid) == "backoff"


async def test_a_raising_post_bind_leaves_the_bound_pod_bound(registry: Registry) -> None:
    run = await _run(registry, "postBind", done=lambda run: len(run.reporter.scheduled_pods) == 2)
    assert sorted(pod for pod, _node in run.binder.posted) == ["doomed", "fine"]
    assert run.reporter.failures == []
    assert run.scheduler.queue.queue_of(run.doomed.uid) is None
    assert run.scheduler.cache.cluster.pod(run.doomed.uid) is not None
