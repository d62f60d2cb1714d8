"""PrioritySort: the active queue pops higher `spec.priority` first, then the pod queued earliest."""

from __future__ import annotations

from berth.engine.framework import names
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import PluginArgs
from berth.engine.model.pod import Pod

__all__ = ["PrioritySort", "new_plugin"]


class PrioritySort:
    """QueueSort. `queued_at` is when the pod last entered the queue (refreshed on each requeue),
    not its creation time."""

    name = names.PRIORITY_SORT

    def sort_key(self, pod: Pod, queued_at: float) -> tuple[int, float]:
        """Smaller keys pop first: negated priority, then the queue timestamp."""
        return (-pod.priority, queued_at)


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> PrioritySort:
    """No args (kube-scheduler ignores any given to an argless plugin)."""
    return PrioritySort()
