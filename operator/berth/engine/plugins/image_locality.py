"""ImageLocality: prefer nodes that already hold the pod's images, weighted by image size and by
how widely each image has spread (so one node holding a big image does not attract everything).

As in kube-scheduler's cache, node images are keyed by the exact names the node reports, an
image's size is the one first recorded for that name, and the pod's images (containers, init
containers, image volumes) are looked up with `:latest` added when they carry no tag.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.node_index import SlotChanges
from berth.engine.cluster.per_cluster import PerCluster
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


@dataclass(slots=True)
class _ImageState:
    size: int
    slots: set[int] = field(default_factory=set)


class _ImageIndex:
    """Node image name -> (size, slots holding it), kept current per node change."""

    def __init__(self) -> None:
        self._changes = SlotChanges()
        self._names_on: dict[int, list[str]] = {}
        self.states: dict[str, _ImageState] = {}
        self._masks: dict[str, NDArray[np.bool_]] = {}

    def refresh(self, cluster: ClusterState) -> None:
        live = cluster.live
        for slot in self._changes.since_last(cluster).tolist():
            for name in self._names_on.pop(slot, ()):
                state = self.states.get(name)
                if state is not None:
                    state.slots.discard(slot)
                    if not state.slots:
                        del self.states[name]
                self._masks.pop(name, None)
            if not live[slot]:
                continue
            listed = []
            for image in cluster.node_at(slot).images:
                for name in image.names:
                    state = self.states.get(name)
                    if state is None:
                        state = self.states[name] = _ImageState(image.size_bytes)
                    state.slots.add(slot)
                    listed.append(name)
                    self._masks.pop(name, None)
            self._names_on[slot] = listed

    def holders(self, name: str, capacity: int) -> NDArray[np.bool_]:
        """Per slot: the node lists image `name`."""
        mask = self._masks.get(name)
        if mask is None or mask.size != capacity:
            mask = np.zeros(capacity, dtype=bool)
            state = self.states.get(name)
            if state is not None:
                mask[np.fromiter(state.slots, dtype=np.intp, count=len(state.slots))] = True
            self._masks[name] = mask
        return mask


_INDEXES = PerCluster(_ImageIndex)


def _index_of(cluster: ClusterState) -> _ImageIndex:
    index = _INDEXES.of(cluster)
    index.refresh(cluster)
    return index


class ImageLocality:
    name = names.IMAGE_LOCALITY

    def score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Scores:
        cluster = state.cluster
        index = _index_of(cluster)
        total_nodes = cluster.node_count
        sums = np.zeros(slots.size, dtype=np.int64)
        contributed = False
        for image in (*pod.images, *pod.image_volumes):
            name = normalized_image_name(image)
            image_state = index.states.get(name)
            if image_state is None:
                continue
            contribution = scaled_image_score(image_state.size, len(image_state.slots), total_nodes)
            held = index.holders(name, cluster.node_versions.size)[slots]
            sums += np.where(held, contribution, 0)
            contributed = True
        if not contributed:
            # Every sum is below the 23 MiB floor, which scores 0.
            return sums
        return image_priority(sums, pod.container_count + len(pod.image_volumes))


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> ImageLocality:
    """No args (kube-scheduler ignores any given to an argless plugin)."""
    return ImageLocality()
