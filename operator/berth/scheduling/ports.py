"""The small protocols through which the scheduling layer talks out: time, binding, reporting.

The kube layer implements them against the API server; tests use fakes. Nothing
in `berth.scheduling` does I/O of its own.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from berth.engine.model.pod import Pod


class Clock(Protocol):
    def now(self) -> float:
        """Monotonic seconds."""
        ...


class MonotonicClock:
    def now(self) -> float:
        return time.monotonic()


class BindOutcome(Enum):
    BOUND = "bound"
    CONFLICT = "conflict"  # 409: already assigned, UID mismatch, gated or being deleted
    GONE = "gone"  # 404: the pod no longer exists
    FAILED = "failed"  # anything else: retry with backoff


@dataclass(frozen=True, slots=True)
class BindResult:
    outcome: BindOutcome
    message: str = ""


class Binder(Protocol):
    async def bind(self, pod: Pod, node_name: str) -> BindResult:
        """POST a v1 Binding (name, namespace and UID of `pod`; target Node `node_name`)."""
        ...


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

    def binding(self, *, result: str, seconds: float) -> None: ...

    def bindings_in_flight(self, count: int) -> None: ...

    def pending(self, counts: dict[str, int]) -> None: ...

    def cache_size(self, *, nodes: int, pods: int, assumed: int) -> None: ...

    def preemption(self, *, victims: int | None) -> None:
        """A PostFilter ran; `victims` is how many were chosen when it found a candidate."""
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

    def binding(self, *, result: str, seconds: float) -> None:
        pass

    def bindings_in_flight(self, count: int) -> None:
        pass

    def pending(self, counts: dict[str, int]) -> None:
        pass

    def cache_size(self, *, nodes: int, pods: int, assumed: int) -> None:
        pass

    def preemption(self, *, victims: int | None) -> None:
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
