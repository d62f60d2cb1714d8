"""Which pending pods a preemption nominated to which node (kube-scheduler's nominator).

The queue owns it, as upstream's does: a pod's nomination follows the pod into
and out of the queue, and the scheduling cycle reads it so that capacity promised
to a preemptor is not handed to someone else.
"""

from __future__ import annotations

from berth.engine.framework.handle import NominatedPods
from berth.engine.model.pod import Pod


class Nominator:
    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, Pod]] = {}
        self._node_of: dict[str, str] = {}

    def nominate(self, pod: Pod, node_name: str) -> None:
        """Record (or with "" drop) the node `pod` is nominated to."""
        previous = self._node_of.pop(pod.uid, None)
        if previous is not None:
            pods = self._by_node.get(previous, {})
            pods.pop(pod.uid, None)
            if not pods:
                self._by_node.pop(previous, None)
        if node_name:
            self._node_of[pod.uid] = node_name
            self._by_node.setdefault(node_name, {})[pod.uid] = pod

    def nominated_pods(self) -> NominatedPods:
        return {node: tuple(pods.values()) for node, pods in self._by_node.items()}

    def clear(self) -> None:
        self._by_node.clear()
        self._node_of.clear()

    def __bool__(self) -> bool:
        return bool(self._node_of)
