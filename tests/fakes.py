"""The one fake clock, the one fake binder and the one fake volume writer every test shares."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from berth.engine.framework.handle import BindOutcome, BindResult, ClaimReference, VolumeWrite
from berth.engine.model.pod import Pod
from berth.scheduling.ports import SchedulingReason


class FakeTimer:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


@dataclass
class FakeClock:
    """Monotonic time that moves only when told; timers fire as `advance` passes them."""

    t: float = 1000.0
    _timers: list[tuple[float, int, FakeTimer, Callable[[], None]]] = field(default_factory=list)
    _order: itertools.count[int] = field(default_factory=itertools.count)

    def now(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        until = self.t + seconds
        while self._timers and self._timers[0][0] <= until:
            due, _, timer, callback = heapq.heappop(self._timers)
            self.t = max(self.t, due)
            if not timer.cancelled:
                callback()
        self.t = until

    def call_later(self, delay: float, callback: Callable[[], None]) -> FakeTimer:
        timer = FakeTimer()
        heapq.heappush(self._timers, (self.t + delay, next(self._order), timer, callback))
        return timer

    @property
    def pending_timers(self) -> int:
        return sum(not timer.cancelled for _, _, timer, _ in self._timers)


@dataclass
class FakeBinder:
    """The Binding port: records every bind, answers `outcomes` by pod name (default BOUND),
    and holds binds while `gate` is set and not yet open."""

    outcomes: dict[str, BindOutcome] = field(default_factory=dict)
    posted: list[tuple[str, str]] = field(default_factory=list)  # (pod name, node)
    bindings: list[tuple[str, str]] = field(default_factory=list)  # (pod uid, node)
    gate: asyncio.Event | None = None

    async def bind(self, pod: Pod, node_name: str) -> BindResult:
        if self.gate is not None:
            await self.gate.wait()
        self.posted.append((pod.name, node_name))
        self.bindings.append((pod.uid, node_name))
        return BindResult(self.outcomes.get(pod.name, BindOutcome.BOUND), "test")


@dataclass
class FakeVolumeWriter:
    """The volume-binding port: records writes, refuses those named in `refuse` (name ->
    message), answers versions counting up from `next_version`, and on each `pause`
    advances `clock` and then runs `on_pause` (a test's stand-in for the PV controller)."""

    clock: FakeClock = field(default_factory=FakeClock)
    refuse: dict[str, str] = field(default_factory=dict)
    next_version: int = 100
    volumes: list[tuple[str, str, ClaimReference, bool]] = field(default_factory=list)
    claims: list[tuple[str, str, str, str]] = field(default_factory=list)  # ns, name, rv, node
    on_pause: Callable[[], None] | None = None
    pauses: int = 0

    def _answer(self, name: str) -> VolumeWrite:
        if name in self.refuse:
            return VolumeWrite(error=self.refuse[name])
        self.next_version += 1
        return VolumeWrite(resource_version=str(self.next_version))

    async def bind_volume(
        self,
        *,
        volume: str,
        resource_version: str,
        claim: ClaimReference,
        bound_by_controller: bool,
    ) -> VolumeWrite:
        self.volumes.append((volume, resource_version, claim, bound_by_controller))
        return self._answer(volume)

    async def select_node(
        self, *, namespace: str, claim: str, resource_version: str, node_name: str
    ) -> VolumeWrite:
        self.claims.append((namespace, claim, resource_version, node_name))
        return self._answer(claim)

    def now(self) -> float:
        return self.clock.now()

    async def pause(self, seconds: float) -> None:
        self.pauses += 1
        self.clock.advance(seconds)
        if self.on_pause is not None:
            self.on_pause()


@dataclass
class FakeReporter:
    """Collects what users would see: Scheduled and FailedScheduling reports."""

    scheduled_pods: list[tuple[str, str, str]] = field(default_factory=list)
    failures: list[tuple[str, str, SchedulingReason]] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)

    def scheduled(self, pod: Pod, node_name: str, *, profile: str) -> None:
        self.scheduled_pods.append((pod.name, node_name, profile))

    def failed(self, pod: Pod, message: str, *, reason: SchedulingReason, profile: str) -> None:
        self.failures.append((pod.name, message, reason))

    def forget(self, pod_uid: str) -> None:
        self.forgotten.append(pod_uid)
