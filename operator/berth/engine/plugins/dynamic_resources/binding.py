"""Reserve, Unreserve and PreBind of DynamicResources: from a chosen node to written claims.

Reserve assumes each unallocated claim with the allocation Filter found on the chosen node
(with the delete-protection finalizer), so the next pod sees those devices taken before
the API does. PreBind writes, through the claim port, the allocation and the pod's entry
in `reservedFor` of every claim not yet reserved for the pod, assumes what the API
answered, then waits (up to the binding timeout) for devices with binding conditions to be
ready. Unreserve drops the assumptions and asks for the pod to be taken out of
`reservedFor` again (a release the cycle's runner sends and awaits). The claim for
extended resources backed by DRA, made in PreBind, has its own steps (`extended_binding`).
"""

from __future__ import annotations

import contextlib
import dataclasses

from berth.engine.cluster.storage_assume import AssumeConflictError
from berth.engine.dra.claims import ConsumerReference
from berth.engine.framework.claim_port import ClaimStatusWriter, Unreservation, request_release
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.handle import EventRecorder
from berth.engine.framework.status import SUCCESS, Status, error
from berth.engine.model.pod import Pod
from berth.engine.plugins.dynamic_resources.binding_conditions import (
    BINDING_TIMEOUT,
    BindingFailed,
    claim_ready,
    claim_timed_out,
    has_binding_conditions,
)
from berth.engine.plugins.dynamic_resources.cache import DraCache
from berth.engine.plugins.dynamic_resources.cycle import PodClaims, is_reserved_for
from berth.engine.plugins.dynamic_resources.extended_binding import (
    bind_extended_claim,
    hold_extended_allocation,
    unreserve_extended_claim,
)

__all__ = ["FINALIZER", "POLL_SECONDS", "pre_bind", "reserve", "unreserve"]

FINALIZER = "resource.kubernetes.io/delete-protection"
POLL_SECONDS = 5.0  # how often kube-scheduler looks at binding conditions


def reserve(prepared: PodClaims, cache: DraCache, node_name: str) -> Status:
    pending = prepared.to_allocate()
    if not pending:
        return SUCCESS
    found = prepared.node_allocations.get(node_name)
    if found is None:
        if all(index == prepared.extended_index for index in pending):
            return SUCCESS  # a device plugin serves the extended resources on this node
        return error("claim allocation not found for node")
    results = found.results
    if len(results) != len(pending):
        return error(
            f"internal error, have {len(results)} allocations, {len(pending)} claims to "
            f"allocate, want {len(pending)} claims"
        )
    for index, allocation in zip(pending, results, strict=True):
        claim = prepared.claims[index]
        prepared.reserved[index] = allocation
        if index == prepared.extended_index:
            hold_extended_allocation(
                prepared, cache, node_name=node_name, allocation=allocation, finalizer=FINALIZER
            )
            continue
        finalizers = (
            claim.finalizers if FINALIZER in claim.finalizers else (*claim.finalizers, FINALIZER)
        )
        try:
            cache.assume_claim(
                dataclasses.replace(claim, allocation=allocation, finalizers=finalizers)
            )
        except AssumeConflictError as conflict:
            return error(
                f"internal error, couldn't signal allocation for claim {claim.name}: {conflict}"
            )
    return SUCCESS


def unreserve(state: CycleState, prepared: PodClaims, pod: Pod) -> None:
    cache = state.cluster.dra
    for index, claim in enumerate(prepared.claims):
        if index == prepared.extended_index:
            continue
        # An allocation decided in this cycle is dropped whether or not PreBind wrote it.
        if prepared.reserved[index] is not None:
            cache.restore_claim(claim.namespace, claim.name)
        if claim.allocation is not None and is_reserved_for(claim, pod):
            request_release(state, Unreservation(claim, pod.uid))
    unreserve_extended_claim(state, prepared, cache)


def _consumer(pod: Pod) -> ConsumerReference:
    return ConsumerReference(resource="pods", name=pod.name, uid=pod.uid)


async def pre_bind(
    prepared: PodClaims,
    pod: Pod,
    node_name: str,
    *,
    cache: DraCache,
    writer: ClaimStatusWriter,
    events: EventRecorder,
    profile: str,
    binding_timeout: float,
) -> Status:
    for index, claim in enumerate(prepared.claims):
        if is_reserved_for(claim, pod):
            continue
        if index == prepared.extended_index:
            status = await bind_extended_claim(
                prepared, pod, node_name, cache=cache, writer=writer, consumer=_consumer(pod)
            )
            if not status.is_success:
                return status
            continue
        answer = await writer.reserve(
            claim, allocation=prepared.reserved[index], consumer=_consumer(pod)
        )
        if answer.claim is None:
            return error(answer.error)
        prepared.claims[index] = answer.claim  # Unreserve works with the written claim
        with contextlib.suppress(AssumeConflictError):
            # The watch already brought a newer version: that one is better than our answer.
            cache.assume_claim(answer.claim)
    if not any(has_binding_conditions(claim) for claim in prepared.claims):
        return SUCCESS
    events.record(
        pod,
        profile=profile,
        event_type="Normal",
        reason="BindingConditionsPending",
        action="Scheduling",
        note=f"waiting for binding conditions for device on node {node_name}",
    )
    return await _wait_for_devices(prepared, cache=cache, writer=writer, timeout=binding_timeout)


async def _wait_for_devices(
    prepared: PodClaims, *, cache: DraCache, writer: ClaimStatusWriter, timeout: float
) -> Status:
    started = writer.wall_time()
    while True:
        try:
            if _all_ready(prepared, cache=cache, timeout=timeout, now=writer.wall_time()):
                return SUCCESS
        except BindingFailed as failure:
            return error(str(failure))
        if writer.wall_time() - started >= timeout:
            return error(f"{BINDING_TIMEOUT}: context deadline exceeded")
        await writer.pause(POLL_SECONDS)


def _all_ready(prepared: PodClaims, *, cache: DraCache, timeout: float, now: float) -> bool:
    for index, claim in enumerate(prepared.claims):
        current = cache.claim(claim.namespace, claim.name)
        if current is None:
            raise BindingFailed(f'could not find ResourceClaim "{claim.key}"')
        prepared.claims[index] = current
        if not claim_ready(current):
            if claim_timed_out(current, timeout=timeout, now=now):
                raise BindingFailed(f"{BINDING_TIMEOUT}: claim={current.name}")
            return False
    return True
