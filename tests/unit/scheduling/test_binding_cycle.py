"""The binding cycle: Permit waits, PreBind, Bind chains and PostBind, and how each fails."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.handle import Handle
from berth.engine.framework.status import SKIP, SUCCESS, Status, error, unschedulable
from berth.engine.model.pod import Pod
from berth.scheduling.loop import Scheduler
from berth.scheduling.ports import BindOutcome, SchedulingReason
from tests.builders import make_node, make_pod
from tests.fakes import FakeBinder, FakeClock, FakeReporter
from tests.gang import GANG_LABEL, SIZE_LABEL, GangPermit
from tests.unit.engine.fakes import Built, FakeBindPlugin, FakeFilter, framework_with


@dataclass
class Journal:
    """What the plugins of one test did, in order."""

    entries: list[str] = field(default_factory=list)


@dataclass
class RecordingReserve:
    name: str
    journal: Journal

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        self.journal.entries.append(f"reserve {self.name}")
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.journal.entries.append(f"unreserve {self.name}")


@dataclass
class ScriptedPreBind:
    name: str
    journal: Journal
    pre_flight: Status = SUCCESS
    outcome: Status = SUCCESS

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return self.pre_flight

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        self.journal.entries.append(f"pre-bind {self.name}")
        return self.outcome


@dataclass
class RecordingPostBind:
    journal: Journal
    name: str = "Post"

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.journal.entries.append(f"post-bind {pod.name} {node_name}")


@dataclass
class RejectingPermit:
    name: str = "Picky"

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        return unschedulable("node(s) not permitted"), 0.0


@dataclass
class RecordingPreemptor:
    nominations: list[tuple[str, str]] = field(default_factory=list)

    def preempt(
        self, preemptor: Pod, node_name: str, victims: Sequence[Pod], *, profile: str
    ) -> None:
        pass

    def nominate(self, pod: Pod, node_name: str) -> None:
        self.nominations.append((pod.name, node_name))


@dataclass
class Rig:
    scheduler: Scheduler
    binder: FakeBinder
    reporter: FakeReporter
    clock: FakeClock
    preemptor: RecordingPreemptor


def _rig(*plugins: object, binder: FakeBinder | None = None, nodes: int = 1) -> Rig:
    binder = binder or FakeBinder()
    reporter = FakeReporter()
    clock = FakeClock()
    preemptor = RecordingPreemptor()
    scheduler = Scheduler(
        binder=binder, reporter=reporter, clock=clock, rng=random.Random(1), preemptor=preemptor
    )
    scheduler.set_profile(framework_with(FakeFilter("Fits"), *plugins))
    scheduler.activate()
    for index in range(nodes):
        scheduler.on_node(make_node(f"n{index}").capacity(cpu="4", memory="4Gi", pods=10).build())
    return Rig(scheduler, binder, reporter, clock, preemptor)


def _gang(timeout: float = 10.0) -> Built:
    return Built("Gang", lambda handle: GangPermit(handle, timeout))


def _pod(name: str, *, group: str | None = None, size: int = 2) -> Pod:
    builder = make_pod(name).scheduler("test").req(cpu="1")
    if group is not None:
        builder = builder.label(GANG_LABEL, group).label(SIZE_LABEL, str(size))
    return builder.build()


def _schedule(rig: Rig, pod: Pod) -> None:
    rig.scheduler.on_pod(pod)
    info = rig.scheduler.queue.pop_nowait()
    assert info is not None and info.pod.uid == pod.uid
    rig.scheduler.schedule_next(info)


async def _settle() -> None:
    """Let started binding cycles run up to their next real wait."""
    for _ in range(10):
        await asyncio.sleep(0)


def _waiting(rig: Rig, pod: Pod) -> bool:
    framework = rig.scheduler.profiles.get("test")
    assert framework is not None
    return pod.uid in framework.waiting_pods


# ---------------------------------------------------------------------------- Permit


async def test_a_waiting_pod_binds_once_its_gang_is_complete() -> None:
    rig = _rig(_gang())
    first, second = _pod("a", group="g"), _pod("b", group="g")
    _schedule(rig, first)
    await _settle()
    assert _waiting(rig, first)
    assert rig.binder.posted == []
    assert rig.scheduler.cache.is_assumed(first.uid)  # it holds its node while it waits
    _schedule(rig, second)
    await rig.scheduler.drain_binds()
    assert sorted(rig.binder.posted) == [("a", "n0"), ("b", "n0")]
    assert sorted(name for name, _node, _profile in rig.reporter.scheduled_pods) == ["a", "b"]
    assert not _waiting(rig, first)


async def test_a_rejected_waiting_pod_is_forgotten_and_reported_unschedulable() -> None:
    rig = _rig(_gang())
    pod = _pod("a", group="g")
    _schedule(rig, pod)
    await _settle()
    framework = rig.scheduler.profiles.get("test")
    assert framework is not None
    waiting = framework.waiting_pods.get(pod.uid)
    assert waiting is not None
    waiting.reject("Gang", "gang g cannot be placed")
    await rig.scheduler.drain_binds()
    assert rig.binder.posted == []
    assert not rig.scheduler.cache.is_assumed(pod.uid)
    assert rig.scheduler.cache.cluster.pod(pod.uid) is None
    assert rig.reporter.failures == [
        (
            "a",
            "0/1 nodes are available: 1 gang g cannot be placed.",
            SchedulingReason.UNSCHEDULABLE,
        )
    ]
    assert rig.scheduler.queue.queue_of(pod.uid) == "unschedulable"


async def test_a_lone_gang_member_is_rejected_at_its_timeout() -> None:
    rig = _rig(_gang(timeout=10.0))
    pod = _pod("lonely", group="g")
    _schedule(rig, pod)
    await _settle()
    rig.clock.advance(9.9)
    await _settle()
    assert _waiting(rig, pod)
    rig.clock.advance(0.1)
    await rig.scheduler.drain_binds()
    assert rig.binder.posted == []
    assert rig.reporter.failures == [
        (
            "lonely",
            "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Gang.",
            SchedulingReason.UNSCHEDULABLE,
        )
    ]
    assert rig.scheduler.cache.cluster.pod(pod.uid) is None
    assert rig.clock.pending_timers == 0


async def test_permit_waits_are_capped_at_fifteen_minutes() -> None:
    rig = _rig(_gang(timeout=3600.0))
    pod = _pod("a", group="g")
    _schedule(rig, pod)
    await _settle()
    rig.clock.advance(900.0)
    await rig.scheduler.drain_binds()
    assert rig.reporter.failures[0][1].endswith("after waiting 15m0s at plugin Gang.")


async def test_a_pod_deleted_while_it_waits_is_never_bound_nor_requeued() -> None:
    rig = _rig(_gang())
    pod = _pod("a", group="g")
    _schedule(rig, pod)
    await _settle()
    rig.scheduler.on_pod_deleted(pod)
    await rig.scheduler.drain_binds()
    assert rig.binder.posted == []
    assert pod.uid not in rig.scheduler.queue
    assert rig.scheduler.cache.cluster.pod(pod.uid) is None


async def test_losing_leadership_releases_waiting_pods_quietly() -> None:
    rig = _rig(_gang())
    pod = _pod("a", group="g")
    _schedule(rig, pod)
    await _settle()
    rig.scheduler.deactivate()
    await rig.scheduler.drain_binds()
    assert rig.binder.posted == []
    assert rig.reporter.failures == []
    assert rig.scheduler.cache.assumed_count == 0


async def test_a_permit_rejection_in_the_scheduling_cycle_names_the_one_node() -> None:
    journal = Journal()
    rig = _rig(RecordingReserve("R", journal), RejectingPermit())
    pod = _pod("a")
    _schedule(rig, pod)
    await rig.scheduler.drain_binds()
    assert rig.reporter.failures == [
        ("a", "0/1 nodes are available: 1 node(s) not permitted.", SchedulingReason.UNSCHEDULABLE)
    ]
    assert journal.entries == ["reserve R", "unreserve R"]
    assert rig.scheduler.queue.queue_of(pod.uid) == "unschedulable"
    assert rig.binder.posted == []


# ---------------------------------------------------------------------------- PreBind


async def test_a_prebind_failure_unreserves_in_reverse_forgets_and_backs_off() -> None:
    journal = Journal()
    broken = ScriptedPreBind("Broken", journal, outcome=error("disk on fire"))
    rig = _rig(RecordingReserve("R1", journal), RecordingReserve("R2", journal), broken)
    pod = _pod("a")
    _schedule(rig, pod)
    await rig.scheduler.drain_binds()
    assert journal.entries == [
        "reserve R1",
        "reserve R2",
        "pre-bind Broken",
        "unreserve R2",
        "unreserve R1",
    ]
    assert rig.binder.posted == []
    assert not rig.scheduler.cache.is_assumed(pod.uid)
    assert rig.scheduler.cache.cluster.pod(pod.uid) is None
    assert rig.scheduler.queue.queue_of(pod.uid) == "backoff"
    assert rig.reporter.failures == [
        ("a", 'running PreBind plugin "Broken": disk on fire', SchedulingReason.SCHEDULER_ERROR)
    ]


async def test_prebind_plugins_that_skip_their_pre_flight_do_not_run() -> None:
    journal = Journal()
    rig = _rig(ScriptedPreBind("Idle", journal, pre_flight=SKIP))
    pod = _pod("a")
    _schedule(rig, pod)
    await rig.scheduler.drain_binds()
    assert journal.entries == []
    assert rig.binder.posted == [("a", "n0")]
    assert rig.preemptor.nominations == []  # nothing to wait for: no nomination is published


async def test_a_pod_with_prebind_work_publishes_its_node_as_nomination_first() -> None:
    journal = Journal()
    rig = _rig(ScriptedPreBind("Volumes", journal))
    _schedule(rig, _pod("a"))
    await rig.scheduler.drain_binds()
    assert rig.preemptor.nominations == [("a", "n0")]
    assert journal.entries == ["pre-bind Volumes"]
    assert rig.binder.posted == [("a", "n0")]


async def test_a_failed_pre_flight_leaves_no_waiting_pod_behind() -> None:
    journal = Journal()
    broken = ScriptedPreBind("Broken", journal, pre_flight=error("no volume plan"))
    rig = _rig(_gang(), broken)
    pod = _pod("a", group="g")
    _schedule(rig, pod)
    await rig.scheduler.drain_binds()
    assert not _waiting(rig, pod)  # a later member cannot count or allow it
    assert rig.reporter.failures == [
        (
            "a",
            'running PreBindPreFlight "Broken": no volume plan',
            SchedulingReason.SCHEDULER_ERROR,
        )
    ]
    assert rig.scheduler.cache.cluster.pod(pod.uid) is None
    assert rig.clock.pending_timers == 0


# ---------------------------------------------------------------------------- Bind and PostBind


async def test_a_bind_plugin_that_skips_hands_the_pod_to_the_next() -> None:
    skipping = FakeBindPlugin("Skipper")
    rig = _rig(skipping)
    framework = rig.scheduler.profiles.get("test")
    assert framework is not None
    assert [plugin.name for plugin in framework.bind] == ["Skipper", names.DEFAULT_BINDER]
    _schedule(rig, _pod("a"))
    await rig.scheduler.drain_binds()
    assert skipping.seen == ["a"]
    assert rig.binder.posted == [("a", "n0")]


async def test_the_first_bind_plugin_that_binds_ends_the_chain() -> None:
    binding = FakeBindPlugin("Mine", status=SUCCESS)
    rig = _rig(binding)
    _schedule(rig, _pod("a"))
    await rig.scheduler.drain_binds()
    assert binding.seen == ["a"]
    assert rig.binder.posted == []  # DefaultBinder was never asked
    assert [name for name, _node, _profile in rig.reporter.scheduled_pods] == ["a"]


async def test_post_bind_runs_after_a_successful_bind_only() -> None:
    journal = Journal()
    binder = FakeBinder(outcomes={"refused": BindOutcome.CONFLICT})
    rig = _rig(RecordingPostBind(journal), binder=binder, nodes=2)
    _schedule(rig, _pod("refused"))
    await rig.scheduler.drain_binds()
    assert journal.entries == []
    assert rig.reporter.failures[0][1] == 'running Bind plugin "DefaultBinder": test'
    _schedule(rig, _pod("fine"))
    await rig.scheduler.drain_binds()
    (entry,) = journal.entries
    assert entry.startswith("post-bind fine ")


def test_the_handle_given_to_plugins_is_their_profile() -> None:
    made: list[Handle] = []

    def make(handle: Handle) -> GangPermit:
        made.append(handle)
        return GangPermit(handle, 1.0)

    framework = framework_with(Built("Gang", make))
    assert made == [framework]
    assert made[0].profile_name == "test"
    assert made[0].waiting_pods is framework.waiting_pods
