"""Reserve, PreBind and Unreserve for the pod's claim for extended resources backed by DRA.

The claim exists only in memory until PreBind, so Reserve cannot assume it in the claim
cache as it does the pod's other claims: it holds the allocation in flight under the
claim's temporary UID instead, so the devices count as taken. PreBind creates the claim
(generated name from the pod, owned by it), writes the allocation and the pod's
reservation as for any claim, waits until the watch has brought the claim (as
kube-scheduler waits for its informer, up to two minutes, without failing), and records
the claim and the container mappings in the pod's `status.extendedResourceClaimStatus`.
The hold ends when PreBind succeeded, or in Unreserve, which also asks for a claim PreBind
created to be deleted (a release the cycle's runner sends and awaits).
"""

from __future__ import annotations

import contextlib
import dataclasses

from berth.engine.cluster.storage_assume import AssumeConflictError
from berth.engine.dra.allocations import AllocationResult
from berth.engine.dra.claims import ConsumerReference, ResourceClaim
from berth.engine.framework.claim_port import ClaimStatusWriter, Deletion, request_release
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.status import SUCCESS, Status, error
from berth.engine.model.pod import Pod
from berth.engine.plugins.dynamic_resources.cache import DraCache
from berth.engine.plugins.dynamic_resources.cycle import PodClaims
from berth.engine.plugins.dynamic_resources.extended import is_in_memory, written_extended_claim

__all__ = [
    "CACHE_WAIT_SECONDS",
    "bind_extended_claim",
    "hold_extended_allocation",
    "release_extended_hold",
    "unreserve_extended_claim",
]

CACHE_WAIT_SECONDS = 120.0  # how long kube-scheduler waits for its informer to show the claim
_CACHE_POLL_SECONDS = 1.0


def hold_extended_allocation(
    prepared: PodClaims,
    cache: DraCache,
    *,
    node_name: str,
    allocation: AllocationResult,
    finalizer: str,
) -> None:
    """Reserve: count the devices of the node's variant of the claim as taken."""
    index = prepared.extended_index
    assert prepared.extended is not None and index is not None  # the caller checked
    per_node = prepared.extended.per_node.get(node_name)
    claim = per_node.claim if per_node is not None else prepared.claims[index]
    finalizers = (
        claim.finalizers if finalizer in claim.finalizers else (*claim.finalizers, finalizer)
    )
    cache.hold_in_flight(dataclasses.replace(claim, allocation=allocation, finalizers=finalizers))


def release_extended_hold(prepared: PodClaims, cache: DraCache) -> bool:
    """End the hold Reserve took (after a successful PreBind, or in Unreserve)."""
    if prepared.extended is None:
        return False
    return cache.release_in_flight(prepared.extended.initial_uid)


def unreserve_extended_claim(state: CycleState, prepared: PodClaims, cache: DraCache) -> None:
    index = prepared.extended_index
    if index is None:
        return
    claim = prepared.claims[index]
    if release_extended_hold(prepared, cache):
        cache.restore_claim(claim.namespace, claim.name)
    written = written_extended_claim(prepared)
    if written is not None:
        request_release(state, Deletion(written))  # or it would outlive the attempt


async def bind_extended_claim(
    prepared: PodClaims,
    pod: Pod,
    node_name: str,
    *,
    cache: DraCache,
    writer: ClaimStatusWriter,
    consumer: ConsumerReference,
) -> Status:
    """PreBind for the claim for extended resources (not yet reserved for the pod)."""
    index = prepared.extended_index
    assert prepared.extended is not None and index is not None  # the caller checked
    claim = prepared.claims[index]
    allocation = prepared.reserved[index]
    if allocation is None and not claim.spec.requests:
        return SUCCESS  # a device plugin serves every extended resource on this node
    per_node = prepared.extended.per_node.get(node_name)
    if is_in_memory(claim):
        if per_node is None:
            return error(f"extended resource claim not found for node {node_name}")
        created = await writer.create_extended_claim(per_node.claim, pod=pod)
        if created.claim is None:
            return error(created.error)
        claim = prepared.claims[index] = created.claim  # Unreserve deletes it from now on
    answer = await writer.reserve(claim, allocation=allocation, consumer=consumer)
    if answer.claim is None:
        return error(answer.error)
    claim = prepared.claims[index] = answer.claim
    await _wait_until_cached(claim, cache=cache, writer=writer)
    mappings = () if per_node is None else per_node.mappings
    if not mappings:
        return error(
            f"nil or empty request mappings, no update of pod {pod.namespace}/{pod.name} "
            "ExtendedResourceClaimStatus"
        )
    failure = await writer.record_extended_claim(pod, claim_name=claim.name, mappings=mappings)
    return error(failure) if failure else SUCCESS


async def _wait_until_cached(
    claim: ResourceClaim, *, cache: DraCache, writer: ClaimStatusWriter
) -> None:
    started = writer.wall_time()
    while cache.claims.get_api(claim.key) is None:
        if writer.wall_time() - started >= CACHE_WAIT_SECONDS:
            return  # the claim exists; the watch brings it later
        await writer.pause(_CACHE_POLL_SECONDS)
    with contextlib.suppress(AssumeConflictError):
        # The watch may already hold a newer version: that one is better than our answer.
        cache.assume_claim(claim)
