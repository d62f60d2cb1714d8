"""Stand-ins for kube-scheduler plugins whose feature Berth does not implement yet.

A pod that needs such a feature (PersistentVolumeClaims, DRA ResourceClaims) must not be
placed as if it did not: the stand-in sits where the real plugin sits in the default profile,
under its name, and refuses the pod in PreFilter with a message that says why. Preemption cannot
help (UnschedulableAndUnresolvable), and nothing in the cluster can change the answer, so the
stand-in registers for no events; the queue's periodic flush still retries such pods.
"""

from __future__ import annotations

from berth.engine.cluster import NodeSlots
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import ClusterEventWithHint
from berth.engine.framework.interfaces import PreFilterResult
from berth.engine.framework.status import SKIP, Code, unresolvable
from berth.engine.framework.verdicts import Verdicts, accept_all, reject_where
from berth.engine.model.pod import Pod

__all__ = ["UnsupportedFeature"]


class UnsupportedFeature:
    """Refuses the pods for which `refusal` gives a message; skips the others."""

    name: str

    def refusal(self, pod: Pod) -> str | None:
        raise NotImplementedError

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        message = self.refusal(pod)
        if message is None:
            return PreFilterResult(SKIP)
        return PreFilterResult(unresolvable(message))

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        # Reached only when PreFilter did not run: refuse every node for the same reason.
        message = self.refusal(pod)
        if message is None:
            return accept_all(slots.size)
        return reject_where(slots >= 0, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return []
