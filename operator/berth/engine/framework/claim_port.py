"""The API port through which DynamicResources records what it decided in ResourceClaims.

kube-scheduler's DynamicResources writes claims itself: PreBind adds the allocation and
the pod to `reservedFor` through the claim's status subresource (after adding the
delete-protection finalizer), Unreserve removes the pod from `reservedFor` again, and
PostFilter may deallocate a claim nobody uses. For extended resources backed by DRA it
also creates the pod's claim for them, records it in the pod's status, and deletes it
when the attempt fails. The kube layer implements this port; a
framework nobody serves gets an inert one that refuses every write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from berth.engine.dra.allocations import AllocationResult
from berth.engine.dra.claims import ConsumerReference, ResourceClaim
from berth.engine.dra.extended_resources import RequestMapping
from berth.engine.model.pod import Pod

__all__ = ["ClaimStatusWriter", "ClaimWrite", "UnservedClaimWriter"]


@dataclass(frozen=True, slots=True)
class ClaimWrite:
    """The claim as the API server answered the write, or kube-scheduler's error text."""

    claim: ResourceClaim | None = None
    error: str = ""


class ClaimStatusWriter(Protocol):
    async def reserve(
        self,
        claim: ResourceClaim,
        *,
        allocation: AllocationResult | None,
        consumer: ConsumerReference,
    ) -> ClaimWrite:
        """Record `allocation` (if any) and add `consumer` to status.reservedFor.

        Starts from `claim` as the scheduler knows it and re-reads it after a conflict.
        """
        ...

    def unreserve(self, claim: ResourceClaim, *, pod_uid: str) -> None:
        """Remove the pod from status.reservedFor (in the background; failures are logged)."""
        ...

    def deallocate(self, claim: ResourceClaim) -> None:
        """Clear status.allocation, reservedFor and devices (in the background)."""
        ...

    async def create_extended_claim(self, claim: ResourceClaim, *, pod: Pod) -> ClaimWrite:
        """Create the pod's claim for extended resources with `claim`'s requests.

        The name is generated from the pod's; the pod owns the claim, which carries the
        extended-resource-claim annotation. No allocation: `reserve` writes that next.
        """
        ...

    async def record_extended_claim(
        self, pod: Pod, *, claim_name: str, mappings: tuple[RequestMapping, ...]
    ) -> str:
        """Write the pod's status.extendedResourceClaimStatus; kube-scheduler's error or ""."""
        ...

    def delete_extended_claim(self, claim: ResourceClaim) -> None:
        """Drop the delete-protection finalizer, then delete the claim (in the background)."""
        ...

    def wall_time(self) -> float:
        """Seconds since the epoch: allocation timestamps are wall-clock times."""
        ...

    async def pause(self, seconds: float) -> None:
        """Wait between two looks at binding conditions."""
        ...


_NOT_SERVED = "this profile is not served by a scheduler"


class UnservedClaimWriter:
    """The port of a framework no scheduler serves (simulation, validation)."""

    async def reserve(
        self,
        claim: ResourceClaim,
        *,
        allocation: AllocationResult | None,
        consumer: ConsumerReference,
    ) -> ClaimWrite:
        return ClaimWrite(error=_NOT_SERVED)

    def unreserve(self, claim: ResourceClaim, *, pod_uid: str) -> None:
        pass

    def deallocate(self, claim: ResourceClaim) -> None:
        pass

    async def create_extended_claim(self, claim: ResourceClaim, *, pod: Pod) -> ClaimWrite:
        return ClaimWrite(error=_NOT_SERVED)

    async def record_extended_claim(
        self, pod: Pod, *, claim_name: str, mappings: tuple[RequestMapping, ...]
    ) -> str:
        return _NOT_SERVED

    def delete_extended_claim(self, claim: ResourceClaim) -> None:
        pass

    def wall_time(self) -> float:
        return 0.0

    async def pause(self, seconds: float) -> None:
        pass
