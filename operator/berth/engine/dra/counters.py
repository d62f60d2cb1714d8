"""Shared counters of partitionable devices (DRAPartitionableDevices, beta and on in v1.37).

A pool may declare counter sets (say, a GPU's memory and compute slices); each device
consumes some counters, and devices overlapping on one physical GPU draw from the same
counters. What is available is the declared amount minus what allocated devices of the
pool consume: computed once per pool and kept for every node (`AvailableCounters`), since
it depends only on the pool and on allocations already made. What the pod being placed
takes is tracked per search (`CounterLedger`), and a device fits only while no counter of
its pool goes below zero.
"""

from __future__ import annotations

from fractions import Fraction

from berth.engine.dra.allocated_state import AllocatedState
from berth.engine.dra.pools import Candidate, Pool, PoolID

__all__ = ["AvailableCounters", "CounterLedger", "Counters"]

Counters = dict[str, dict[str, Fraction]]  # counter set -> counter -> amount


class AvailableCounters:
    """Per pool: declared counters minus those consumed by allocated devices, computed once."""

    def __init__(self, allocated: AllocatedState) -> None:
        self._allocated = allocated
        self._by_pool: dict[PoolID, Counters] = {}

    def of(self, pool: Pool) -> Counters:
        known = self._by_pool.get(pool.id)
        if known is not None:
            return known
        available = pool.initial_counters()
        for indexed in (*pool.slices, *pool.other_slices):
            for candidate in indexed.candidates:
                if not self._allocated.is_allocated(candidate.id):
                    continue
                for consumption in candidate.device.consumes_counters:
                    counters = available.get(consumption.counter_set, {})
                    for name, amount in consumption.counters.items():
                        if name in counters:  # may go negative: then nothing is left
                            counters[name] -= amount.value
        self._by_pool[pool.id] = available
        return available


class CounterLedger:
    """Counters taken by the devices chosen so far in one search."""

    def __init__(self, available: AvailableCounters) -> None:
        self._available = available
        self._consumed: dict[PoolID, Counters] = {}

    def reserve(self, candidate: Candidate, pool: Pool) -> bool:
        """Take the candidate's counters; refuses (taking nothing) if any counter would overdraw."""
        consumed = self._consumed.setdefault(pool.id, {})
        for consumption in candidate.device.consumes_counters:
            counters = consumed.setdefault(consumption.counter_set, {})
            for name, amount in consumption.counters.items():
                counters[name] = counters.get(name, Fraction(0)) + amount.value
        for set_name, counters in self._available.of(pool).items():
            taken = consumed.get(set_name, {})
            for name, value in counters.items():
                if value < taken.get(name, 0):
                    self.release(candidate, pool)
                    return False
        return True

    def release(self, candidate: Candidate, pool: Pool) -> None:
        consumed = self._consumed[pool.id]
        for consumption in candidate.device.consumes_counters:
            counters = consumed[consumption.counter_set]
            for name, amount in consumption.counters.items():
                counters[name] -= amount.value
