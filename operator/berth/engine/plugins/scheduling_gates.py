"""SchedulingGates: a pod with `spec.schedulingGates` waits outside the active queue until they are all removed."""

from __future__ import annotations

from berth.engine.framework import names
from berth.engine.framework.events import (
    Action,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import PluginArgs
from berth.engine.framework.status import SUCCESS, Status, unresolvable
from berth.engine.model.pod import Pod

__all__ = ["SchedulingGates", "gated_message", "new_plugin"]


def gated_message(gates: tuple[str, ...]) -> str:
    """`waiting for scheduling gates: [a b]` — the gate names printed as Go prints a string slice."""
    return f"waiting for scheduling gates: [{' '.join(gates)}]"


def _gates_eliminated(pod: Pod, old: object, new: object) -> QueueingHint:
    # Registered on every pod's update, but only the gated pod's own update can release it.
    if isinstance(new, Pod) and new.uid == pod.uid and not new.scheduling_gates:
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


class SchedulingGates:
    """PreEnqueue: gated pods are held back (UnschedulableAndUnresolvable) and never scheduled."""

    name = names.SCHEDULING_GATES

    def pre_enqueue(self, pod: Pod) -> Status:
        if not pod.scheduling_gates:
            return SUCCESS
        return unresolvable(gated_message(pod.scheduling_gates))

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(Resource.POD, Action.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                _gates_eliminated,
            )
        ]


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> SchedulingGates:
    """No args (kube-scheduler ignores any given to an argless plugin)."""
    return SchedulingGates()
