"""The small protocols through which the scheduling layer talks out: time, binding, reporting.

The kube layer implements them against the API server; tests use fakes. Nothing
in `berth.scheduling` does I/O of its own. The Binding port is the framework's
(plugins bind through their handle), so it is defined in the engine and named here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import Protocol

from berth.engine.extended_decision import CandidateVictims, ExtenderFailed
from berth.engine.extenders import ExtenderConfig, FilterResult, HostPriority, MetaVictims
from berth.engine.framework.handle import Binder, BindOutcome, BindResult
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod

__all__ = [
    "BindOutcome",
    "BindResult",
    "Binder",
    "Clock",
    "ExtenderCalls",
    "MonotonicClock",
    "NullObserver",
    "Preemptor",
    "Reporter",
    "SchedulingObserver",
    "SchedulingReason",
    "Timer",
    "TimerClock",
]


class ExtenderCalls(Protocol):
    """Calls scheduler extenders (the kube layer: over HTTP, one keep-alive client per
    extender, timed and counted). A failure is answered, never raised, with kube-scheduler's
    text for it."""

    async def filter(
        self, extender: ExtenderConfig, pod: Pod, nodes: Sequence[Node]
    ) -> FilterResult | ExtenderFailed: ...

    async def prioritize(
        self, extender: ExtenderConfig, pod: Pod, nodes: Sequence[Node]
    ) -> tuple[HostPriority, ...] | ExtenderFailed: ...

    async def bind(
        self, extender: ExtenderConfig, pod: Pod, node_name: str
    ) -> ExtenderFailed | None: ...

    async def preempt(
        self, extender: ExtenderConfig, pod: Pod, victims: Mapping[str, CandidateVictims]
    ) -> dict[str, MetaVictims] | ExtenderFailed: ...


class Timer(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> float:
        """Monotonic seconds."""
        ...


class TimerClock(Clock, Protocol):
    """A clock that can also fire callbacks (Permit timeouts)."""

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        """Run `callback` on the event loop after `delay` seconds of this clock."""
        ...


class MonotonicClock:
    def now(self) -> float:
        return time.monotonic()

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        # The running loop's clock is monotonic too.
        return asyncio.get_running_loop().call_later(delay, callback)


class SchedulingReason(Enum):
    UNSCHEDULABLE = "Unschedulable"
    SCHEDULER_ERROR = "SchedulerError"


class Reporter(Protocol):
    """What users see: events and the PodScheduled condition. Calls must not block."""

    def scheduled(self, pod: Pod, node_name: str, *, profile: str) -> None: ...

    def failed(self, pod: Pod, message: str, *, reason: SchedulingReason, profile: str) -> None: ...

    def forget(self, pod_uid: str) -> None:
        """The pod is gone: drop whatever is still pending or remembered for it."""
        ...


class Preemptor(Protocol):
    """Carries out what DefaultPreemption decided; calls must not block."""

    def preempt(
        self, preemptor: Pod, node_name: str, victims: Sequence[Pod], *, profile: str
    ) -> None: ...

    def nominate(self, pod: Pod, node_name: str) -> None:
        """Set (or with "" clear) the pod's status.nominatedNodeName."""
        ...


class SchedulingObserver(Protocol):
    """Hooks for metrics; the kube layer backs them with Prometheus. All must be cheap."""

    def attempt(self, *, result: str, profile: str, seconds: float) -> None: ...

    def algorithm(self, *, seconds: float) -> None: ...

    def scheduled(self, *, attempts: int, seconds_since_first_attempt: float) -> None: ...

    def pending(self, counts: dict[str, int]) -> None: ...

    def cache_size(self, *, nodes: int, pods: int, assumed: int) -> None: ...

    def preemption(self, *, victims: int | None) -> None:
        """A PostFilter ran; `victims` is how many were chosen when it found a candidate."""
        ...

    def permit_wait(self, *, result: str, seconds: float) -> None:
        """A pod waited at Permit for `seconds`, ending with status `result`."""
        ...

    def cycle(
        self,
        *,
        profile: str,
        points: list[tuple[str, str, float]],
        plugins: list[tuple[str, str, str, float]],
    ) -> None:
        """Extension-point durations of one cycle, and (sampled) plugin durations."""
        ...

    def incoming(self, queue: str, event: str) -> None:
        """A pod entered `queue` because of `event`."""
        ...

    def unschedulable(self, counts: dict[tuple[str, str], int]) -> None:
        """Pods in the unschedulable pool per (profile, rejecting plugin)."""
        ...


class NullObserver:
    def attempt(self, *, result: str, profile: str, seconds: float) -> None:
        pass

    def algorithm(self, *, seconds: float) -> None:
        pass

    def scheduled(self, *, attempts: int, seconds_since_first_attempt: float) -> None:
        pass

    def pending(self, counts: dict[str, int]) -> None:
        pass

    def cache_size(self, *, nodes: int, pods: int, assumed: int) -> None:
        pass

    def preemption(self, *, victims: int | None) -> None:
        pass

    def permit_wait(self, *, result: str, seconds: float) -> None:
        pass

    def cycle(
        self,
        *,
        profile: str,
        points: list[tuple[str, str, float]],
        plugins: list[tuple[str, str, str, float]],
    ) -> None:
        pass

    def incoming(self, queue: str, event: str) -> None:
        pass

    def unschedulable(self, counts: dict[tuple[str, str], int]) -> None:
        pass
