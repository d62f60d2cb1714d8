"""TaintToleration per node, straight from the behaviour notes (§2.3, §3.7)."""

from __future__ import annotations

from typing import Any


def tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint["effect"]:
        return False
    key = toleration.get("key") or ""
    if key and key != taint["key"]:
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return (toleration.get("value") or "") == (taint.get("value") or "")


def node_passes(pod: dict[str, Any], node: dict[str, Any]) -> bool:
    tolerations = pod["spec"].get("tolerations", [])
    for taint in node["spec"].get("taints", []):
        if taint["effect"] == "PreferNoSchedule":
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return False
    return True


def raw_score(pod: dict[str, Any], node: dict[str, Any]) -> int:
    tolerations = [
        t
        for t in pod["spec"].get("tolerations", [])
        if (t.get("effect") or "") in ("", "PreferNoSchedule")
    ]
    return sum(
        1
        for taint in node["spec"].get("taints", [])
        if taint["effect"] == "PreferNoSchedule"
        and not any(tolerates(t, taint) for t in tolerations)
    )


def normalized_scores(pod: dict[str, Any], nodes: list[dict[str, Any]]) -> list[int]:
    raw = [raw_score(pod, node) for node in nodes]
    highest = max(raw, default=0)
    if highest == 0:
        return [100] * len(raw)
    return [100 - (100 * r) // highest for r in raw]
