"""VolumeBinding's Score under v1.37's default gates (StorageCapacityScoring is on).

Per node, the storage the pod would take is grouped by class: with static volumes, each
class's requests against the chosen volumes' capacities; otherwise, each class's
provisioned requests against the capacity the CSIStorageCapacity found for the node
reports (the last one seen, not a sum: two claims from one pool share it). Each class's
utilization goes through the `shape` function, and the node's score is the rounded mean
over classes; a node with nothing to group scores 0.

Scores are computed for a whole Filter batch at once, one class at a time.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from berth.engine.plugins.volume_binding.filtering import BatchVolumes
from berth.engine.scoring.resource_allocation import BrokenLinearFunction, go_round_positive
from berth.engine.scoring.shape import ShapePoints

__all__ = ["CapacityScorer"]

_MAX_UTILIZATION = 100

Ints = NDArray[np.int64]
Mask = NDArray[np.bool_]


class _Totals:
    """Per node of a batch: the summed class scores and how many classes there were."""

    def __init__(self, count: int, function: BrokenLinearFunction) -> None:
        self._function = function
        self.sums = np.zeros(count, dtype=np.int64)
        self.classes = np.zeros(count, dtype=np.int64)

    def add_class(self, requested: Ints, capacity: Ints, present: Mask) -> None:
        full = (capacity == 0) | (requested > capacity)
        safe = np.where(capacity == 0, 1, capacity)
        utilization = np.where(full, _MAX_UTILIZATION, requested * _MAX_UTILIZATION // safe)
        self.sums += np.where(present, self._function(utilization), 0)
        self.classes += present

    def scores(self) -> Ints:
        mean = self.sums / np.maximum(self.classes, 1)
        rounded: Ints = np.where(self.classes > 0, go_round_positive(mean), 0)
        return rounded


class CapacityScorer:
    def __init__(self, shape: ShapePoints) -> None:
        self._function = BrokenLinearFunction.from_shape(shape)

    def batch_scores(self, batch: BatchVolumes) -> Ints:
        """The score of every node of `batch` (meaningful for the nodes that passed)."""
        count = batch.slots.size
        totals = _Totals(count, self._function)
        chosen = batch.chosen
        static = (chosen >= 0).any(axis=0) if chosen.size else np.zeros(count, dtype=bool)
        if batch.matched:
            capacities = np.asarray([v.capacity for v in batch.candidates], dtype=np.int64)
            names = [v.storage_class_name for v in batch.candidates]
            for name in dict.fromkeys(names):
                of_class = np.asarray([n == name for n in names], dtype=bool)
                requested = np.zeros(count, dtype=np.int64)
                capacity = np.zeros(count, dtype=np.int64)
                present = np.zeros(count, dtype=bool)
                for row, claim in enumerate(batch.matched):
                    picks = chosen[row]
                    hit = (picks >= 0) & of_class[np.maximum(picks, 0)]
                    requested += np.where(hit, claim.requested, 0)
                    capacity += np.where(hit, capacities[np.maximum(picks, 0)], 0)
                    present |= hit
                totals.add_class(requested, capacity, present & static)
        if batch.provisioned:
            reported = np.asarray(
                [c.capacity or 0 for c in batch.capacities] or [0], dtype=np.int64
            )
            names = [claim.storage_class_name or "" for claim in batch.provisioned]
            for name in dict.fromkeys(names):
                requested = np.zeros(count, dtype=np.int64)
                capacity = np.zeros(count, dtype=np.int64)
                present = np.zeros(count, dtype=bool)
                for row, claim in enumerate(batch.provisioned):
                    if names[row] != name:
                        continue
                    which = batch.capacity_chosen[row]
                    hit = which >= 0
                    # Not summed: every claim of the class reports the same pool's capacity.
                    capacity = np.where(hit, reported[np.maximum(which, 0)], capacity)
                    requested += np.where(hit, claim.requested, 0)
                    present |= hit
                totals.add_class(requested, capacity, present & ~static)
        return totals.scores()
