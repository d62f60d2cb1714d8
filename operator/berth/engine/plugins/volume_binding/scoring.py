"""VolumeBinding's Score under v1.37's default gates (StorageCapacityScoring is on).

Per node, the storage the pod would take is grouped by class: with static volumes, each
class's requests against the chosen volumes' capacities; otherwise, each class's
provisioned requests against the capacity the CSIStorageCapacity found for the node
reports (the last one seen, not a sum: two claims from one pool share it). Each class's
utilization goes through the `shape` function, and the node's score is the rounded mean
over classes; a node with nothing to group scores 0.
"""

from __future__ import annotations

import numpy as np

from berth.engine.plugins.volume_binding.filtering import PodVolumes
from berth.engine.scoring.resource_allocation import BrokenLinearFunction
from berth.engine.scoring.shape import ShapePoints

__all__ = ["CapacityScorer"]

_MAX_UTILIZATION = 100


class CapacityScorer:
    def __init__(self, shape: ShapePoints) -> None:
        self._function = BrokenLinearFunction.from_shape(shape)

    def _class_score(self, requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            utilization = _MAX_UTILIZATION
        else:
            utilization = requested * _MAX_UTILIZATION // capacity
        return int(self._function(np.asarray([utilization], dtype=np.int64))[0])

    def score(self, volumes: PodVolumes) -> int:
        # class -> [requested, capacity]
        classes: dict[str, list[int]] = {}
        if volumes.static:
            for claim, volume in volumes.static:
                totals = classes.setdefault(volume.storage_class_name, [0, 0])
                totals[0] += claim.requested
                totals[1] += volume.capacity
        else:
            for claim, capacity in volumes.provisions:
                if capacity is None:
                    continue
                totals = classes.setdefault(claim.storage_class_name or "", [0, 0])
                totals[1] = capacity.capacity or 0
                totals[0] += claim.requested
        if not classes:
            return 0
        total = sum(
            self._class_score(requested, capacity) for requested, capacity in classes.values()
        )
        # Go's math.Round: halves away from zero (every score here is non-negative).
        return int(total / len(classes) + 0.5)
