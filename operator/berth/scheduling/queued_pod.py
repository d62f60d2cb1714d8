"""What the queue knows about a waiting pod, and how long a pod backs off after a failure.

Mirrors kube-scheduler's QueuedPodInfo (framework/types.go) and the backoff rules of
backend/queue/backoff_queue.go (v1.37, SchedulerPopFromBackoffQ on).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from berth.engine.model.pod import Pod

__all__ = ["BACKOFF_WINDOW", "BackoffPolicy", "QueuedPodInfo"]

BACKOFF_WINDOW = 1.0
"""backoffQOrderingWindowDuration: backoff expiries are truncated to whole seconds, and a pod
whose expiry lies in the current window is still backing off. Pods whose backoff ends in the same
window are released together, in activeQ order."""


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    pod: Pod
    timestamp: float
    """Time the pod last entered the queue; refreshed on every requeue after an attempt. Orders
    activeQ among equal priorities and starts the backoff."""
    initial_attempt_timestamp: float | None = None
    """First time the pod entered activeQ (start of scheduler_pod_scheduling_sli_duration_seconds)."""
    attempts: int = 0
    """Times popped for a scheduling attempt."""
    unschedulable_count: int = 0
    """Attempts that plugins rejected; drives rejection backoff."""
    consecutive_errors_count: int = 0
    """Errors since the last plugin rejection; drives error backoff."""
    unschedulable_plugins: set[str] = field(default_factory=set)
    """Plugins that rejected the last attempt (or gate the pod): only their hints can move it."""
    pending_plugins: set[str] = field(default_factory=set)
    """Plugins that answered Pending: a Queue hint from one of them skips backoff."""
    gating_plugin: str = ""
    """The PreEnqueue plugin holding the pod back; "" when not gated."""
    gating_message: str = ""
    """The gating plugin's status message (e.g. `waiting for scheduling gates: [a]`)."""
    flush_timestamp: float | None = None
    """Last time the UnschedulableTimeout flush moved the pod (so it is not flushed again at once)."""

    @property
    def uid(self) -> str:
        return self.pod.uid

    @property
    def gated(self) -> bool:
        return self.gating_plugin != ""

    @property
    def rejector_plugins(self) -> set[str]:
        return self.unschedulable_plugins | self.pending_plugins

    @property
    def failed_with_error(self) -> bool:
        """No plugin is to blame: the last failure was an error (goes to the error backoffQ)."""
        return not self.unschedulable_plugins and not self.pending_plugins


@dataclass(frozen=True, slots=True)
class BackoffPolicy:
    initial: float = 1.0
    maximum: float = 10.0

    def duration(self, count: int) -> float:
        """`initial * 2**(count-1)` capped at `maximum`; no backoff before the first failure."""
        if count <= 0:
            return 0.0
        shift = count - 1
        if shift >= 64 or self.initial * 2.0**shift > self.maximum:
            return self.maximum
        return self.initial * 2.0**shift

    def count_of(self, info: QueuedPodInfo) -> int:
        """The error count after an error, else the rejection count (v1.34+ rules)."""
        if info.consecutive_errors_count > 0:
            return info.consecutive_errors_count
        return info.unschedulable_count

    def expiry(self, info: QueuedPodInfo) -> float | None:
        """When the backoff ends, truncated to its window; None when the pod has no backoff."""
        count = self.count_of(info)
        if self.maximum == 0 or count == 0:
            return None
        return _window_of(info.timestamp + self.duration(count))

    def is_backing_off(self, info: QueuedPodInfo, now: float) -> bool:
        expiry = self.expiry(info)
        return expiry is not None and expiry >= _window_of(now)


def _window_of(t: float) -> float:
    return math.floor(t / BACKOFF_WINDOW) * BACKOFF_WINDOW
