"""Which nodes list which container image, kept by the cluster in the order nodes change.

ImageLocality scores an image by its size and by how many nodes list it.
kube-scheduler's cache keeps that per image name (backend/cache addNodeImageStates
and removeNodeImageStates): the size is the one the first node reported, an image
is forgotten when the last node listing it goes, and a node's update forgets its
old list before recording the new one. The result depends on the order of node
changes, so it is kept here, change by change, and not re-derived later from
which slots changed (that loses the order: a node re-created with a new image size
in the same batch as the last other holder's removal must start a new record).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from berth.engine.model.node import Node

__all__ = ["ImageRecord", "ImageStates"]


@dataclass(slots=True)
class ImageRecord:
    """One image name: the size first reported for it and the slots of the nodes listing it."""

    size: int
    slots: set[int] = field(default_factory=set)


class ImageStates:
    """Image name (exactly as nodes report it) -> `ImageRecord`."""

    def __init__(self) -> None:
        self._records: dict[str, ImageRecord] = {}
        self._holders: dict[str, NDArray[np.bool_]] = {}  # per-slot masks, built on demand

    def record(self, slot: int, node: Node) -> None:
        """`node` now lives in `slot`: count it for every name it lists."""
        for image in node.images:
            for name in image.names:
                state = self._records.get(name)
                if state is None:
                    state = self._records[name] = ImageRecord(image.size_bytes)
                state.slots.add(slot)
                self._holders.pop(name, None)

    def forget(self, slot: int, node: Node) -> None:
        """`node` left `slot` (removed, or about to be replaced by its new version)."""
        for image in node.images:
            for name in image.names:
                state = self._records.get(name)
                if state is None:
                    continue
                state.slots.discard(slot)
                if not state.slots:
                    del self._records[name]
                self._holders.pop(name, None)

    def get(self, name: str) -> ImageRecord | None:
        return self._records.get(name)

    def holders(self, name: str, capacity: int) -> NDArray[np.bool_]:
        """Per slot (`capacity` of them): the node there lists image `name`."""
        state = self._records.get(name)
        if state is None:
            return np.zeros(capacity, dtype=bool)
        mask = self._holders.get(name)
        if mask is None or mask.size != capacity:
            mask = np.zeros(capacity, dtype=bool)
            mask[np.fromiter(state.slots, dtype=np.intp, count=len(state.slots))] = True
            self._holders[name] = mask
        return mask
