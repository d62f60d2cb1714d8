"""A two-line gang: a Permit plugin that holds pods until their whole group is placed.

Written the way an out-of-tree plugin would be: it gets the framework's handle
from its factory and releases waiting pods through the handle's waiting-pods map.
Pods name their group in the label `gang` and its size in `gang-size`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.handle import Handle
from berth.engine.framework.status import SUCCESS, Code, Status
from berth.engine.model.pod import Pod

GANG_LABEL = "gang"
SIZE_LABEL = "gang-size"


@dataclass
class GangPermit:
    handle: Handle
    timeout: float
    name: str = "Gang"
    allowed: list[str] = field(default_factory=list)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        group = pod.labels.get(GANG_LABEL)
        if group is None:
            return SUCCESS, 0.0
        size = int(pod.labels.get(SIZE_LABEL, "1"))
        waiting = [
            member
            for member in self.handle.waiting_pods
            if member.pod.labels.get(GANG_LABEL) == group and member.verdict is None
        ]
        if len(waiting) + 1 < size:
            return Status(Code.WAIT), self.timeout
        for member in waiting:
            self.allowed.append(member.pod.name)
            member.allow(self.name)
        return SUCCESS, 0.0
