"""NodeUnschedulable per node from raw objects, straight from the behaviour notes (§2.1)."""

from __future__ import annotations

from typing import Any

from tests.unit.engine.reference.taint_toleration import tolerates

UNSCHEDULABLE_TAINT = {
    "key": "node.kubernetes.io/unschedulable",
    "value": "",
    "effect": "NoSchedule",
}


def node_passes(pod: dict[str, Any], node: dict[str, Any]) -> bool:
    if not node["spec"].get("unschedulable"):
        return True
    return any(tolerates(t, UNSCHEDULABLE_TAINT) for t in pod["spec"].get("tolerations", []))
