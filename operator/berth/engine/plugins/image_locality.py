"""ImageLocality: prefer nodes that already hold the pod's images, weighted by image size and by
how widely each image has spread (so one node holding a big image does not attract everything).

The cluster keeps which nodes list which image (`berth.engine.cluster.images`, kube-scheduler's
cache rules); the pod's images (containers, init containers, image volumes) are looked up with
`:latest` added when they carry no tag.
"""

from __future__ import annotations

import numpy as np

from berth.engine.cluster import NodeSlots
from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import MAX_NODE_SCORE, PluginArgs, Scores
from berth.engine.model.pod import Pod
from berth.engine.scoring.normalize import go_div

__all__ = [
    "MAX_CONTAINER_THRESHOLD",
    "MIN_THRESHOLD",
    "ImageLocality",
    "image_priority",
    "new_plugin",
    "normalized_image_name",
    "scaled_image_score",
]

MIB = 1024 * 1024
MIN_THRESHOLD = 23 * MIB
MAX_CONTAINER_THRESHOLD = 1000 * MIB


def normalized_image_name(name: str) -> str:
    """`:latest` appended unless a tag follows the last `/` (kube-scheduler's rule)."""
    return name if name.rfind(":") > name.rfind("/") else f"{name}:latest"


def scaled_image_score(size: int, nodes_with_image: int, total_nodes: int) -> int:
    """Image size scaled by its spread, in float64 then truncated, as Go computes it."""
    spread = float(nodes_with_image) / float(total_nodes)
    return int(float(size) * spread)


def image_priority(sums: Scores, image_count: int) -> Scores:
    """Clamp the summed image scores to [23 MiB, 1000 MiB x images] and scale to 0..100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * image_count
    clamped = np.where(
        sums < MIN_THRESHOLD, MIN_THRESHOLD, np.where(sums > max_threshold, max_threshold, sums)
    ).astype(np.int64)
    return go_div(MAX_NODE_SCORE * (clamped - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)


class ImageLocality:
    name = names.IMAGE_LOCALITY

    def score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Scores:
        cluster = state.cluster
        images = cluster.images
        total_nodes = cluster.node_count
        sums = np.zeros(slots.size, dtype=np.int64)
        contributed = False
        for image in (*pod.images, *pod.image_volumes):
            name = normalized_image_name(image)
            record = images.get(name)
            if record is None:
                continue
            contribution = scaled_image_score(record.size, len(record.slots), total_nodes)
            held = images.holders(name, cluster.node_versions.size)[slots]
            sums += np.where(held, contribution, 0)
            contributed = True
        if not contributed:
            # Every sum is below the 23 MiB floor, which scores 0.
            return sums
        return image_priority(sums, pod.container_count + len(pod.image_volumes))


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> ImageLocality:
    """No args (kube-scheduler ignores any given to an argless plugin)."""
    return ImageLocality()
