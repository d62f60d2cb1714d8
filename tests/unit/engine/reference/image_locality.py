"""ImageLocality per node from raw objects, straight from the behaviour notes (§3.6) and the v1.37
source: node image names as reported, the first-recorded size per name, spread over all nodes."""

from __future__ import annotations

from typing import Any

MB = 1024 * 1024


def normalize(name: str) -> str:
    return name if name.rfind(":") > name.rfind("/") else name + ":latest"


def score(pod: dict[str, Any], node: dict[str, Any], all_nodes: list[dict[str, Any]]) -> int:
    sizes: dict[str, int] = {}
    holders: dict[str, set[str]] = {}
    for other in all_nodes:
        for image in other["status"].get("images", []):
            for name in image["names"]:
                sizes.setdefault(name, image["sizeBytes"])
                holders.setdefault(name, set()).add(other["metadata"]["name"])
    on_node = {name for image in node["status"].get("images", []) for name in image["names"]}
    spec = pod["spec"]
    references = [c.get("image", "") for c in spec.get("initContainers", [])]
    references += [c.get("image", "") for c in spec.get("containers", [])]
    references += [v["image"]["reference"] for v in spec.get("volumes", []) if "image" in v]
    total = 0
    for reference in references:
        name = normalize(reference)
        if reference and name in on_node:
            total += int(sizes[name] * (len(holders[name]) / len(all_nodes)))
    high = 1000 * MB * len(references)
    clamped = min(max(total, 23 * MB), high)
    return 100 * (clamped - 23 * MB) // (high - 23 * MB)
