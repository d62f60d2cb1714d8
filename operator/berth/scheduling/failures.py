"""What happens to a pod whose attempt failed, in either cycle (kube-scheduler's FailureHandler)."""

from __future__ import annotations

from collections.abc import Set

from berth.scheduling.ports import Reporter, SchedulingReason
from berth.scheduling.queue import QueuedPodInfo, SchedulingQueue


class FailureHandler:
    def __init__(self, *, queue: SchedulingQueue, reporter: Reporter) -> None:
        self._queue = queue
        self._reporter = reporter

    def fail(
        self,
        info: QueuedPodInfo,
        message: str,
        *,
        profile: str,
        rejected: bool = False,
        rejected_by: Set[str] = frozenset(),
        pending: Set[str] = frozenset(),
    ) -> None:
        """Report a failed attempt and put the pod back.

        A rejection (the pod fits nowhere) is reported as Unschedulable and waits for an
        event that may help the rejecting plugins; anything else is a SchedulerError and
        backs off. The queue treats a rejection without plugins like an error, as Go does.
        """
        reason = SchedulingReason.UNSCHEDULABLE if rejected else SchedulingReason.SCHEDULER_ERROR
        self._reporter.failed(info.pod, message, reason=reason, profile=profile)
        self._queue.add_unschedulable(
            info,
            unschedulable_plugins=set(rejected_by),
            pending_plugins=set(pending),
            error=not rejected,
        )
