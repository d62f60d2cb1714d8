"""NodeName per node, straight from the behaviour notes (§2.2)."""

from __future__ import annotations

from typing import Any


def node_passes(pod: dict[str, Any], node: dict[str, Any]) -> bool:
    wanted = pod["spec"].get("nodeName") or ""
    return not wanted or wanted == node["metadata"]["name"]
