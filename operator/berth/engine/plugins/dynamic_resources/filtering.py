"""PreFilter and Filter of DynamicResources: can this pod's claims be satisfied on a node?

PreFilter collects the pod's claims and refuses the pod everywhere when one is in use by
others it may not join, is being allocated for another pod, or asks for a missing device
class. When a claim still needs devices, it builds one allocator over the cluster's slices,
classes and taken devices. Filter then judges each node: allocated claims must be usable
there (their node selector, their binding conditions), and the unallocated ones must fit,
as the allocator decides; the allocation found is kept for Score and Reserve. The claim
for extended resources backed by DRA (see `extended`) joins the pod's claims in the
variant each node needs. Every
refusal is UnschedulableAndUnresolvable (preemption frees no device), a broken claim or
class, or a timed-out search, is an Error. The texts are kube-scheduler's.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from berth.engine.cluster import NodeSlots
from berth.engine.dra.allocator import Allocated, Allocator, CannotAllocate, NodeFailure
from berth.engine.dra.claims import ResourceClaim
from berth.engine.dra.errors import AllocationError, AllocationTimeout
from berth.engine.dra.selection import SelectorCache
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.status import Code, Status, error, unresolvable
from berth.engine.framework.verdicts import Verdicts, accept_all
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.plugins.dynamic_resources.binding_conditions import (
    BindingFailed,
    claim_ready,
    claim_timed_out,
)
from berth.engine.plugins.dynamic_resources.cache import DraCache, in_flight
from berth.engine.plugins.dynamic_resources.cycle import PodClaims, is_reserved_for
from berth.engine.plugins.dynamic_resources.extended import extended_claim, node_extended_claim
from berth.engine.plugins.dynamic_resources.pod_claims import ClaimsNotReady, pod_claims

__all__ = [
    "CANNOT_ALLOCATE",
    "NOT_AVAILABLE",
    "filter_nodes",
    "prepare",
]

CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"


def prepare(
    pod: Pod,
    cache: DraCache,
    *,
    selectors: SelectorCache,
    filter_timeout: float,
    clock: Callable[[], float],
) -> PodClaims | Status:
    """PreFilter's work: the pod's claims and, when some need devices, their allocator."""
    try:
        claims = pod_claims(pod, cache)
    except ClaimsNotReady as reason:
        return unresolvable(str(reason))
    found = extended_claim(
        pod, claims=cache.all_claims, classes=cache.classes_by_extended_resource()
    )
    if found is not None:
        claims.append(found[0])
    if not claims:
        return Status(Code.SKIP)
    pending = 0
    for index, claim in enumerate(claims):
        if claim.allocation is not None:
            # Any number of pods may share a claim (upstream's CanBeReserved is always true).
            continue
        pending += 1
        if in_flight(cache, claim) is not None:
            return unresolvable(f"resource claim {claim.key} is in the process of being allocated")
        if found is not None and index == len(claims) - 1:
            continue  # Filter judges the claim for extended resources
        refusal = _check_classes(claim, cache)
        if refusal is not None:
            return refusal
    prepared = PodClaims(
        claims=claims,
        deadline_seconds=filter_timeout,
        extended=None if found is None else found[1],
    )
    if pending:
        prepared.allocator = Allocator(
            slices=cache.slice_index(),
            classes=cache.device_classes(),
            allocated=cache.allocated_state(),
            selectors=selectors,
            clock=clock,
        )
    return prepared


def _check_classes(claim: ResourceClaim, cache: DraCache) -> Status | None:
    classes = cache.device_classes()
    for request in claim.spec.requests:
        if request.exactly is not None:
            wanted = [(request.name, request.exactly.device_class_name)]
        else:
            wanted = [
                (f"{request.name}/{sub.name}", sub.device_class_name)
                for sub in request.first_available
            ]
        for name, class_name in wanted:
            if not class_name:
                return error(f"request {name}: unsupported request type")
            if class_name not in classes:
                return unresolvable(f"request {name}: device class {class_name} does not exist")
    return None


def filter_nodes(
    state: CycleState,
    pod: Pod,
    slots: NodeSlots,
    prepared: PodClaims,
    *,
    binding_timeout: float,
    now: float,
    clock: Callable[[], float],
) -> Verdicts:
    """Judge each node; the first Error ends the batch (the runtime aborts the cycle)."""
    codes = np.zeros(slots.size, dtype=np.int8)
    bits = np.zeros(slots.size, dtype=np.uint64)
    reasons: list[str] = []
    node_at = state.cluster.node_at
    for position, slot in enumerate(slots.tolist()):
        status = _filter_node(
            pod, node_at(slot), prepared, binding_timeout=binding_timeout, now=now, clock=clock
        )
        if status is None:
            continue
        reason = status.message
        if reason not in reasons:
            reasons.append(reason)
        codes[position] = status.code
        bits[position] = np.uint64(1) << np.uint64(reasons.index(reason))
        if status.code is Code.ERROR:
            break
    if not reasons:
        return accept_all(slots.size)
    return Verdicts(codes, bits, tuple(reasons))


def _filter_node(
    pod: Pod,
    node: Node,
    prepared: PodClaims,
    *,
    binding_timeout: float,
    now: float,
    clock: Callable[[], float],
) -> Status | None:
    node_claim = node_extended_claim(prepared, pod, node)
    if isinstance(node_claim, Status):
        return node_claim
    if node_claim is None and not prepared.has_user_claims:
        return None
    unavailable = [
        index
        for index, claim in enumerate(prepared.claims)
        if not _usable_on(claim, node, binding_timeout=binding_timeout, now=now)
    ]
    if prepared.allocator is not None:
        to_allocate = [
            node_claim.claim
            if node_claim is not None and index == prepared.extended_index
            else prepared.claims[index]
            for index in prepared.to_allocate()
        ]
        deadline = clock() + prepared.deadline_seconds if prepared.deadline_seconds else None
        try:
            outcome = prepared.allocator.allocate(node, to_allocate, deadline=deadline)
        except AllocationTimeout:
            return error(f"node {node.name}: timed out trying to allocate devices")
        except AllocationError as broken:
            return error(str(broken))
        if isinstance(outcome, NodeFailure):
            return unresolvable(outcome.message)
        if isinstance(outcome, CannotAllocate):
            return unresolvable(CANNOT_ALLOCATE)
        assert isinstance(outcome, Allocated)
        if not unavailable:
            prepared.node_allocations[node.name] = outcome
            if node_claim is not None and prepared.extended is not None:
                prepared.extended.per_node[node.name] = node_claim
    if unavailable:
        prepared.unavailable.update(unavailable)
        return unresolvable(NOT_AVAILABLE)
    return None


def _usable_on(claim: ResourceClaim, node: Node, *, binding_timeout: float, now: float) -> bool:
    allocation = claim.allocation
    if allocation is None:
        return True
    if not allocation.available_on(node_name=node.name, labels=node.labels):
        return False
    # Devices still being prepared: a failure, or a wait past the timeout, frees the claim.
    try:
        ready = claim_ready(claim)
    except BindingFailed:
        return False
    return ready or not claim_timed_out(claim, timeout=binding_timeout, now=now)


def reserved_elsewhere(claim: ResourceClaim, pod: Pod) -> bool:
    """Whether the claim is reserved for consumers other than this pod (PostFilter keeps it)."""
    if not claim.reserved_for:
        return False
    return not (len(claim.reserved_for) == 1 and is_reserved_for(claim, pod))
