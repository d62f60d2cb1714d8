"""The ResourceClaim writes of DynamicResources: allocation, reservedFor, and undoing them.

kube-scheduler's PreBind first adds the delete-protection finalizer (a normal update), then
writes status.allocation and appends the pod to status.reservedFor through the status
subresource, re-reading the claim and trying again on a conflict (five tries). Berth sends
the same changes as patches that carry the claim's `resourceVersion`, which the API server
checks like an update's: a JSON patch appending the finalizer, and a merge patch of the
status (reservedFor is written whole, from the version the patch is based on). Unreserve
removes the pod's entry with the strategic-merge patch upstream uses; PostFilter's
deallocation clears the status at the version the scheduler saw. Both answer like
`reserve` (an error text, never an exception); the scheduling layer awaits them within
the cycle, as upstream's synchronous calls are. The claim for a pod's extended resources
backed by DRA is created, recorded in the pod's status and deleted (also awaited) through
`extended_claim_writes`.

With a `WriteFence` nothing is sent unless this replica holds the Lease at that moment.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

from berth.engine.dra.allocations import AllocationResult
from berth.engine.dra.claims import ConsumerReference, ResourceClaim
from berth.engine.dra.extended_resources import RequestMapping
from berth.engine.errors import InvalidObjectError
from berth.engine.framework.claim_port import ClaimWrite
from berth.engine.model.pod import Pod
from berth.kube.api import ApiError, ApiSession, ApiTransportError, JsonObject
from berth.kube.binder import NOT_HOLDING_LEASE
from berth.kube.extended_claim_writes import (
    claims_path,
    delete_claim,
    error_text,
    extended_claim_body,
    extended_status_patch,
    record_path,
)
from berth.kube.lease import WriteFence

__all__ = ["FINALIZER", "ApiClaimWriter", "claim_path", "status_patch"]

FINALIZER = "resource.kubernetes.io/delete-protection"
_TRIES = 5  # client-go's retry.DefaultRetry


def claim_path(namespace: str, name: str) -> str:
    return f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/{name}"


def _consumer(consumer: ConsumerReference) -> JsonObject:
    written: JsonObject = {
        "resource": consumer.resource,
        "name": consumer.name,
        "uid": consumer.uid,
    }
    if consumer.api_group:
        written["apiGroup"] = consumer.api_group
    return written


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_patch(
    claim: ResourceClaim, *, allocation: AllocationResult | None, consumer: ConsumerReference
) -> JsonObject:
    """The merge patch of the status subresource that records `allocation` and `consumer`."""
    status: JsonObject = {
        "reservedFor": [_consumer(entry) for entry in (*claim.reserved_for, consumer)]
    }
    if allocation is not None:
        status["allocation"] = {**allocation.to_dict(), "allocationTimestamp": _now()}
    elif claim.allocation_timestamp is None:
        status["allocation"] = {"allocationTimestamp": _now()}
    return {"metadata": {"resourceVersion": claim.resource_version}, "status": status}


class _Refused(Exception):
    """The write cannot go on; `str()` is kube-scheduler's error."""


class ApiClaimWriter:
    """`ClaimStatusWriter` over the shared API session."""

    def __init__(self, session: ApiSession, *, fence: WriteFence | None = None) -> None:
        self._session = session
        self._fence = fence

    async def reserve(
        self,
        claim: ResourceClaim,
        *,
        allocation: AllocationResult | None,
        consumer: ConsumerReference,
    ) -> ClaimWrite:
        current = claim
        for attempt in range(_TRIES):
            if attempt:
                try:
                    current = ResourceClaim.from_dict(
                        await self._session.get_json(claim_path(claim.namespace, claim.name))
                    )
                except (ApiError, ApiTransportError, InvalidObjectError) as failure:
                    return ClaimWrite(
                        error=f"get updated claim {claim.key} after conflict: {error_text(failure)}"
                    )
            try:
                return ClaimWrite(claim=await self._write(current, allocation, consumer))
            except _Refused as refused:
                return ClaimWrite(error=str(refused))
            except ApiError as failure:
                if failure.status == 409 and attempt + 1 < _TRIES:
                    continue
                what = "add allocation and reservation to" if allocation else "add reservation to"
                return ClaimWrite(error=f"{what} claim {claim.key}: {error_text(failure)}")
            except (ApiTransportError, InvalidObjectError) as failure:
                return ClaimWrite(error=f"claim {claim.key}: {error_text(failure)}")
        raise AssertionError("unreachable: the last try returns")

    async def _write(
        self,
        claim: ResourceClaim,
        allocation: AllocationResult | None,
        consumer: ConsumerReference,
    ) -> ResourceClaim:
        if claim.deletion_timestamp is not None:
            raise _Refused(f"claim {claim.key} got deleted in the meantime")
        path = claim_path(claim.namespace, claim.name)
        if allocation is not None:
            if claim.allocation is not None:
                raise _Refused(f"claim {claim.key} got allocated elsewhere in the meantime")
            if FINALIZER not in claim.finalizers:
                claim = await self._add_finalizer(claim, path)
        elif claim.allocation is None:
            raise _Refused(f"claim {claim.key} got deallocated elsewhere in the meantime")
        self._check_fence("claim status")
        body = status_patch(claim, allocation=allocation, consumer=consumer)
        return ResourceClaim.from_dict(await self._session.patch_json(f"{path}/status", body))

    async def _add_finalizer(self, claim: ResourceClaim, path: str) -> ResourceClaim:
        self._check_fence("claim finalizer")
        operations: list[JsonObject] = [
            {"op": "test", "path": "/metadata/resourceVersion", "value": claim.resource_version}
        ]
        if claim.finalizers:
            operations.append({"op": "add", "path": "/metadata/finalizers/-", "value": FINALIZER})
        else:
            operations.append({"op": "add", "path": "/metadata/finalizers", "value": [FINALIZER]})
        try:
            answer = await self._session.patch_json(path, operations, content_type="json-patch")
        except ApiError as failure:
            if failure.status == 422 and "testing value" in failure.message:
                raise ApiError(409, "Conflict", failure.message) from None  # a stale version
            raise _Refused(f"add finalizer to claim {claim.key}: {error_text(failure)}") from None
        return ResourceClaim.from_dict(answer)

    def _check_fence(self, write: str) -> None:
        if self._fence is not None and not self._fence.permits(write):
            raise _Refused(NOT_HOLDING_LEASE)

    async def unreserve(self, claim: ResourceClaim, *, pod_uid: str) -> ClaimWrite:
        body = {
            "metadata": {"uid": claim.uid},
            "status": {"reservedFor": [{"$patch": "delete", "uid": pod_uid}]},
        }
        return await self._patch_status(claim, body, content_type="strategic")

    async def deallocate(self, claim: ResourceClaim) -> ClaimWrite:
        body = {
            "metadata": {"resourceVersion": claim.resource_version},
            "status": {"reservedFor": None, "allocation": None, "devices": None},
        }
        return await self._patch_status(claim, body, content_type="merge")

    async def _patch_status(
        self, claim: ResourceClaim, body: JsonObject, *, content_type: Any
    ) -> ClaimWrite:
        path = claim_path(claim.namespace, claim.name) + "/status"
        try:
            self._check_fence("claim status")
            answer = await self._session.patch_json(path, body, content_type=content_type)
            return ClaimWrite(claim=ResourceClaim.from_dict(answer))
        except _Refused as refused:
            return ClaimWrite(error=str(refused))
        except (ApiError, ApiTransportError, InvalidObjectError) as failure:
            return ClaimWrite(error=error_text(failure))

    # ------------------------------------------------------------------ extended resources

    async def create_extended_claim(self, claim: ResourceClaim, *, pod: Pod) -> ClaimWrite:
        where = f"create claim for extended resources {claim.namespace}/"
        try:
            self._check_fence("claim creation")
            body = extended_claim_body(claim, pod_name=pod.name)
            answer = await self._session.post_json(claims_path(claim.namespace), body)
            return ClaimWrite(claim=ResourceClaim.from_dict(answer))
        except _Refused as refused:
            return ClaimWrite(error=str(refused))
        except (ApiError, ApiTransportError, InvalidObjectError) as failure:
            return ClaimWrite(error=f"{where}: {error_text(failure)}")

    async def record_extended_claim(
        self, pod: Pod, *, claim_name: str, mappings: tuple[RequestMapping, ...]
    ) -> str:
        try:
            self._check_fence("pod status")
            await self._session.patch_json(
                record_path(pod.namespace, pod.name),
                extended_status_patch(claim_name, mappings),
                content_type="strategic",
            )
        except _Refused as refused:
            return str(refused)
        except (ApiError, ApiTransportError) as failure:
            return (
                f"update pod {pod.namespace}/{pod.name} ExtendedResourceClaimStatus: "
                f"{error_text(failure)}"
            )
        return ""

    async def delete_extended_claim(self, claim: ResourceClaim) -> ClaimWrite:
        try:
            self._check_fence("claim deletion")
            failed = await delete_claim(self._session, claim, finalizer=FINALIZER)
        except _Refused as refused:
            return ClaimWrite(error=str(refused))
        return ClaimWrite(error=failed)

    def wall_time(self) -> float:
        return time.time()

    async def pause(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
