"""Undoing one device choice when the allocator's search backtracks past it.

`Search.allocate_device` records here each change it makes for a candidate (counters
reserved, constraints fed, the device marked as taken, a share of its capacity, the result
entry); calling the record reverts them, newest first, leaving the search exactly as it
was before the candidate was tried. Upstream keeps the same record for the same reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.engine.dra.pools import Candidate, Pool
from berth.engine.dra.values import Amount, QualifiedName

if TYPE_CHECKING:
    from berth.engine.dra.search import RequestKey, Search

__all__ = ["DeviceRollback"]


class DeviceRollback:
    """What `allocate_device` changed for one candidate; calling it reverts that, newest first."""

    def __init__(self, search: Search, key: RequestKey, candidate: Candidate, pool: Pool) -> None:
        self.search = search
        self.key = key
        self.candidate = candidate
        self.pool = pool
        self.counters_reserved = False
        self.constraints_added = 0
        self.device_marked = False
        self.consumed: dict[QualifiedName, Amount] | None = None
        self.capacity_existed = False
        self.result_added = False
        self.results_before = len(search.results[key[0]])

    def __call__(self) -> None:
        search = self.search
        claim_index = self.key[0]
        device_id = self.candidate.id
        if self.result_added:
            del search.results[claim_index][self.results_before :]
        if self.consumed is not None:
            totals = search.allocating_capacity[device_id]
            for name, amount in self.consumed.items():
                totals[name] -= amount.value
            if all(value == 0 for value in totals.values()):
                # Emptied: forget it, unless an earlier share still marks the device as shared.
                if self.capacity_existed:
                    totals.clear()
                else:
                    del search.allocating_capacity[device_id]
        if self.device_marked:
            search.allocating_devices[device_id].discard(claim_index)
        data = search.request_data[self.key]
        request, subrequest = (data.parent, data.spec.name) if data.parent else (data.spec.name, "")
        for constraint in reversed(search.constraints[claim_index][: self.constraints_added]):
            constraint.remove(request, subrequest)
        if self.counters_reserved:
            search.counters.release(self.candidate, self.pool)
