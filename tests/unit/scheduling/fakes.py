"""Fakes for queue tests: a clock that only moves when told, plugins that register events
with scripted hints, PreEnqueue gates, and a queue wired to exactly those plugins."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from berth.engine.cluster import NodeSlots
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import (
    Action,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    QueueingHintFn,
    Resource,
)
from berth.engine.framework.runtime import Framework
from berth.engine.framework.status import SUCCESS, Status, unresolvable
from berth.engine.framework.verdicts import Verdicts, accept_all
from berth.engine.model.pod import Pod
from berth.scheduling.queue import SchedulingQueue
from tests.fakes import FakeClock
from tests.unit.engine.fakes import framework_with

NODE_ADD = ClusterEvent(Resource.NODE, Action.ADD)
NODE_LABEL = ClusterEvent(Resource.NODE, Action.UPDATE_NODE_LABEL)
NODE_TAINT = ClusterEvent(Resource.NODE, Action.UPDATE_NODE_TAINT)
ASSIGNED_POD_DELETE = ClusterEvent(Resource.ASSIGNED_POD, Action.DELETE)


def always(hint: QueueingHint) -> QueueingHintFn:
    def fn(pod: Pod, old: object, new: object) -> QueueingHint:
        return hint

    return fn


def broken(pod: Pod, old: object, new: object) -> QueueingHint:
    raise RuntimeError("hint exploded")


@dataclass
class FakeRejector:
    """A Filter plugin (it never rejects by itself: tests name it as the rejector) that
    registers `events`, each with its hint (None: always Queue)."""

    name: str
    events: list[ClusterEventWithHint] = field(default_factory=list)
    hint_calls: list[tuple[str, str]] = field(default_factory=list)

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        return accept_all(slots.size)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(item.event, self._counted(item.hint)) for item in self.events]

    def _counted(self, hint: QueueingHintFn | None) -> QueueingHintFn:
        def fn(pod: Pod, old: object, new: object) -> QueueingHint:
            self.hint_calls.append((pod.name, type(new).__name__))
            return QueueingHint.QUEUE if hint is None else hint(pod, old, new)

        return fn


@dataclass
class SilentFilter:
    """A Filter plugin without events_to_register: every event may help it (Go's default)."""

    name: str

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        return accept_all(slots.size)


@dataclass
class FakeGate:
    """PreEnqueue: holds back pods carrying the label `hold` (or with scheduling gates when
    `use_gates`); registers `events` so that updates can release them."""

    name: str = "FakeGate"
    use_gates: bool = False
    events: list[ClusterEventWithHint] = field(default_factory=list)
    calls: int = 0

    def pre_enqueue(self, pod: Pod) -> Status:
        self.calls += 1
        held = bool(pod.scheduling_gates) if self.use_gates else "hold" in pod.labels
        return unresolvable(f"held by {self.name}") if held else SUCCESS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return list(self.events)


def gates_removed(pod: Pod, old: object, new: object) -> QueueingHint:
    if isinstance(new, Pod) and new.uid == pod.uid and not new.scheduling_gates:
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


@dataclass
class Harness:
    queue: SchedulingQueue
    clock: FakeClock
    framework: Framework
    incoming: list[tuple[str, str]]


def make_queue(
    *plugins: object,
    framework_for: Callable[[Pod], Framework | None] | None = None,
    initial_backoff: float = 1.0,
    max_backoff: float = 10.0,
    max_in_unschedulable: float = 300.0,
    start: float = 1000.0,
) -> Harness:
    """A queue whose only profile has exactly `plugins` (plus a PrioritySort-like sort)."""
    framework = framework_with(*plugins)
    clock = FakeClock(start)
    incoming: list[tuple[str, str]] = []
    queue = SchedulingQueue(
        clock=clock,
        framework_for=framework_for or (lambda pod: framework),
        initial_backoff=initial_backoff,
        max_backoff=max_backoff,
        max_in_unschedulable=max_in_unschedulable,
        on_incoming=lambda queue, event: incoming.append((queue, event)),
    )
    return Harness(queue, clock, framework, incoming)
