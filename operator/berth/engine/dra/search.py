"""The backtracking search that picks devices for a pod's claims on one node.

This follows kube-scheduler's structured allocator (the "incubating" variant, which v1.37's
default feature gates select) step by step, because the order of the search decides which
devices are picked: claims in order, each claim's requests in order, a firstAvailable
request's subrequests in order of preference, and for each device needed, the candidates
in pool order (driver, pool; pools with binding conditions last), slice-name order, device
order. Within one request only ascending device positions are tried (combinations, not
permutations). The first complete solution wins; there is no scoring.

A candidate is rejected when it is in use (or, with admin access, already taken by the same
claim), fails a class or request selector, sits on another node (per-device node
selection), lacks capacity, would overdraw its pool's counters, carries an untolerated
taint, or breaks a claim constraint. Every change made for a candidate is undone when the
search backtracks past it.

At most 32 devices go into one claim's result; running out of room prunes harder
(`_ResultLimit`), exactly as upstream does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from berth.engine.dra.allocated_state import AllocatedState
from berth.engine.dra.capacity import CapacityError, consumed_capacity, fits_capacity
from berth.engine.dra.claims import ResourceClaim
from berth.engine.dra.classes import DeviceClass
from berth.engine.dra.constraints import Constraint, taint_prevents_allocation
from berth.engine.dra.counters import CounterLedger
from berth.engine.dra.errors import AllocationError, AllocationTimeout
from berth.engine.dra.pools import Candidate, NodeLike, Pool, node_matches
from berth.engine.dra.requests import ALLOCATION_MODE_ALL, RequestSpec
from berth.engine.dra.rollback import DeviceRollback
from berth.engine.dra.selection import SelectorCache
from berth.engine.dra.values import Amount, DeviceID, QualifiedName

__all__ = ["MAX_RESULTS_PER_CLAIM", "ChosenDevice", "RequestData", "RequestKey", "Search"]

# resourceapi.AllocationResultsMaxSize: the most devices one claim's allocation may hold.
MAX_RESULTS_PER_CLAIM = 32

RequestKey = tuple[int, int, int]  # (claim, request, subrequest) indices
_ORIGIN = (0, 0, 0)  # (pool, slice, device) position where a request's search starts


class _ResultLimit(Exception):
    """A claim would exceed MAX_RESULTS_PER_CLAIM devices on this path of the search."""


@dataclass(slots=True)
class RequestData:
    """A request or one subrequest, validated, with how many devices it needs."""

    spec: RequestSpec
    parent: str  # the request holding this subrequest; "" for a plain request
    device_class: DeviceClass
    num_devices: int = 0
    all_devices: list[tuple[Candidate, Pool]] = field(default_factory=list)  # mode All
    selected_subrequest: int = 0  # on a parent's first entry: the subrequest picked

    @property
    def name(self) -> str:
        return f"{self.parent}/{self.spec.name}" if self.parent else self.spec.name


@dataclass(slots=True)
class ChosenDevice:
    candidate: Candidate
    data: RequestData
    share_id: str | None = None
    consumed: dict[QualifiedName, Amount] | None = None


class Search:
    """One allocation attempt: the mutable state of the backtracking search."""

    def __init__(
        self,
        *,
        claims: list[ResourceClaim],
        node: NodeLike,
        pools: tuple[Pool, ...],
        allocated: AllocatedState,
        selectors: SelectorCache,
        counters: CounterLedger,
        new_share_id: Callable[[], str],
        expired: Callable[[], bool],
    ) -> None:
        self.claims = claims
        self.node = node
        self.pools = pools
        self.allocated = allocated
        self.selectors = selectors
        self.counters = counters
        self.new_share_id = new_share_id
        self.expired = expired
        self.request_data: dict[RequestKey, RequestData] = {}
        self.constraints: list[list[Constraint]] = [[] for _ in claims]
        self.results: list[list[ChosenDevice]] = [[] for _ in claims]
        self.allocating_devices: dict[DeviceID, set[int]] = {}  # device -> claim indices
        self.allocating_capacity: dict[DeviceID, dict[QualifiedName, Fraction]] = {}
        self.selectable: dict[tuple[DeviceID, RequestKey], bool] = {}
        self.steps = 0  # calls of allocate_one: how much work the search did

    def run(self) -> bool:
        try:
            return self.allocate_one((0, 0, 0), 0, in_subrequest=False, start=_ORIGIN)
        except _ResultLimit:
            # Upstream reports this if it escapes the first claim; the per-claim minimum
            # checked while preparing the requests keeps that from happening in practice.
            raise AllocationError("allocation max size exceeded") from None

    def allocate_one(
        self, key: RequestKey, device_index: int, *, in_subrequest: bool, start: tuple[int, ...]
    ) -> bool:
        """Find devices from `device_index` on for request `key`, then everything after it."""
        self.steps += 1
        if self.expired():
            raise AllocationTimeout("filter operation aborted: context deadline exceeded")
        claim_index, request_index, sub_index = key
        if claim_index >= len(self.claims):
            return True
        if request_index >= len(self.claims[claim_index].spec.requests):
            try:
                return self.allocate_one(
                    (claim_index + 1, 0, 0), 0, in_subrequest=False, start=_ORIGIN
                )
            except _ResultLimit:
                return False  # another choice in earlier claims may leave room
        data = self.request_data[key]
        if not in_subrequest and data.parent:
            return self._first_available(key, device_index)
        if data.spec.allocation_mode == ALLOCATION_MODE_ALL and not data.all_devices:
            return False
        if device_index >= data.num_devices:
            return self.allocate_one(
                (claim_index, request_index + 1, 0), 0, in_subrequest=False, start=_ORIGIN
            )
        if data.num_devices - device_index > MAX_RESULTS_PER_CLAIM - len(self.results[claim_index]):
            raise _ResultLimit
        following = (claim_index, request_index, sub_index)
        if data.spec.allocation_mode == ALLOCATION_MODE_ALL:
            candidate, pool = data.all_devices[device_index]
            undo = self.allocate_device(key, candidate, pool, must=True)
            if undo is None:
                return False  # all devices or none: no other candidate to try
            return self._continue(undo, following, device_index + 1, in_subrequest, _ORIGIN)
        return self._try_candidates(key, data, device_index, in_subrequest, start)

    def _first_available(self, key: RequestKey, device_index: int) -> bool:
        claim_index, request_index, _ = key
        all_too_big = True
        sub_index = 0
        while (claim_index, request_index, sub_index) in self.request_data:
            try:
                done = self.allocate_one(
                    (claim_index, request_index, sub_index),
                    device_index,
                    in_subrequest=True,
                    start=_ORIGIN,
                )
            except _ResultLimit:
                sub_index += 1  # a later subrequest may need fewer devices
                continue
            all_too_big = False
            if done:
                self.request_data[key].selected_subrequest = sub_index
                return True
            sub_index += 1
        if all_too_big:
            raise _ResultLimit
        return False

    def _continue(
        self,
        undo: Callable[[], None],
        key: RequestKey,
        device_index: int,
        in_subrequest: bool,
        start: tuple[int, ...],
    ) -> bool:
        try:
            done = self.allocate_one(key, device_index, in_subrequest=in_subrequest, start=start)
        except _ResultLimit:
            undo()
            raise
        if not done:
            undo()
        return done

    def _try_candidates(
        self,
        key: RequestKey,
        data: RequestData,
        device_index: int,
        in_subrequest: bool,
        start: tuple[int, ...],
    ) -> bool:
        admin = bool(data.spec.admin_access)
        claim_index = key[0]
        first_pool, first_slice, first_device = start
        for pool_index in range(first_pool, len(self.pools)):
            pool = self.pools[pool_index]
            if not pool.usable:
                continue
            slice_start = first_slice if pool_index == first_pool else 0
            for slice_index in range(slice_start, len(pool.slices)):
                candidates = pool.slices[slice_index].candidates
                at_start = pool_index == first_pool and slice_index == first_slice
                for position in range(first_device if at_start else 0, len(candidates)):
                    candidate = candidates[position]
                    if admin:
                        if claim_index in self.allocating_devices.get(candidate.id, ()):
                            continue
                    elif self._in_use(candidate.id):
                        continue
                    if not self.is_selectable(key, data, candidate):
                        continue
                    if not self._fits(key, data, candidate, verb="checking"):
                        continue
                    undo = self.allocate_device(key, candidate, pool, must=False)
                    if undo is None:
                        continue
                    following = (pool_index, slice_index, position + 1)
                    if self._continue(undo, key, device_index + 1, in_subrequest, following):
                        return True
        return False

    def _in_use(self, device: DeviceID) -> bool:
        return device in self.allocated.devices or bool(self.allocating_devices.get(device))

    def _claim_name(self, key: RequestKey) -> str:
        return self.claims[key[0]].key

    def is_selectable(self, key: RequestKey, data: RequestData, candidate: Candidate) -> bool:
        """Class selectors, request selectors, then per-device node selection; remembered."""
        memo_key = (candidate.id, key)
        known = self.selectable.get(memo_key)
        if known is not None:
            return known
        answer = (
            self._selectors_match(
                candidate, data.device_class.selectors, f"class {data.device_class.name}"
            )
            and self._selectors_match(
                candidate, data.spec.selectors, f"claim {self._claim_name(key)}"
            )
            and (
                not candidate.slice.per_device_node_selection
                or node_matches(self.node, candidate.device.node)
            )
        )
        self.selectable[memo_key] = answer
        return answer

    def _selectors_match(
        self, candidate: Candidate, expressions: tuple[str | None, ...], owner: str
    ) -> bool:
        for index, expression in enumerate(expressions):
            if expression is None:
                continue  # refused while preparing the request
            answer = candidate.selector_answers.get(expression)
            if answer is None:
                answer = self.selectors.matches(
                    expression=expression,
                    device=candidate.view,
                    device_id=candidate.id,
                    owner=owner,
                    index=index,
                )
                candidate.selector_answers[expression] = answer
            if not answer:
                return False
        return True

    def _fits(self, key: RequestKey, data: RequestData, candidate: Candidate, *, verb: str) -> bool:
        capacities = candidate.device.capacity
        if (
            data.spec.capacity is None
            and candidate.plain_capacity
            and candidate.id not in self.allocated.capacity
            and candidate.id not in self.allocating_capacity
        ):
            return True  # each capacity consumed whole, and nobody else consumes any
        try:
            return fits_capacity(
                requests=data.spec.capacity,
                capacities=capacities,
                allocated=self.allocated.capacity.get(candidate.id, {}),
                allocating=self.allocating_capacity.get(candidate.id, {}),
            )
        except CapacityError as error:
            raise AllocationError(
                f"claim {self._claim_name(key)}, request {data.spec.name}: "
                f"{verb} capacity for device {candidate.id}: {error}"
            ) from None

    def allocate_device(
        self, key: RequestKey, candidate: Candidate, pool: Pool, *, must: bool
    ) -> Callable[[], None] | None:
        """Take `candidate` for request `key` if every check passes; returns how to give it back.

        `must`: the caller wants exactly this device (mode All), so a broken constraint is
        an error in the claim rather than a reason to try another device.
        """
        claim_index = key[0]
        data = self.request_data[key]
        spec = data.spec
        device = candidate.device
        device_id = candidate.id
        shared = bool(device.allow_multiple_allocations)
        admin = bool(spec.admin_access)
        if admin and not shared and claim_index in self.allocating_devices.get(device_id, ()):
            return None
        if not admin and self._in_use(device_id):
            return None
        undo = DeviceRollback(self, key, candidate, pool)
        # A further share of a shared device charges no counters: the first share did.
        if device.consumes_counters and not (shared and self._capacity_in_use(device_id)):
            if not self.counters.reserve(candidate, pool):
                return None
            undo.counters_reserved = True
        if taint_prevents_allocation(device, spec.tolerations):
            undo()
            return None
        request, subrequest = (data.parent, spec.name) if data.parent else (spec.name, "")
        for constraint in self.constraints[claim_index]:
            if not constraint.add(request, subrequest, device, device_id):
                undo()
                if must:
                    raise AllocationError(
                        f"claim {self._claim_name(key)}, request {spec.name}: cannot add device "
                        f"{device_id} because a claim constraint would not be satisfied"
                    )
                return None
            undo.constraints_added += 1
        if not shared:
            self.allocating_devices.setdefault(device_id, set()).add(claim_index)
            undo.device_marked = True
        try:
            fits = self._fits(key, data, candidate, verb="rechecking")
        except AllocationError:
            undo()
            raise
        if not fits:
            undo()
            return None
        chosen = ChosenDevice(candidate, data)
        if shared:
            try:
                consumed = consumed_capacity(spec.capacity, device.capacity)
            except CapacityError as error:
                undo()
                raise AllocationError(
                    f"claim {self._claim_name(key)}, request {spec.name}: computing consumed "
                    f"capacity for device {device_id}: {error}"
                ) from None
            chosen.share_id = self.new_share_id()
            chosen.consumed = consumed or None
            undo.capacity_existed = device_id in self.allocating_capacity
            totals = self.allocating_capacity.setdefault(device_id, {})
            for name, amount in consumed.items():
                totals[name] = totals.get(name, Fraction(0)) + amount.value
            undo.consumed = consumed
        self.results[claim_index].append(chosen)
        undo.result_added = True
        return undo

    def _capacity_in_use(self, device: DeviceID) -> bool:
        return self.allocated.is_shared(device) or device in self.allocating_capacity
