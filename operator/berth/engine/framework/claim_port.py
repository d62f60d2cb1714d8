"""The API port through which DynamicResources records what it decided in ResourceClaims.

kube-scheduler's DynamicResources writes claims itself: PreBind adds the allocation and
the pod to `reservedFor` through the claim's status subresource (after adding the
delete-protection finalizer), Unreserve removes the pod from `reservedFor` again, and
PostFilter may deallocate a claim nobody uses. For extended resources backed by DRA it
also creates the pod's claim for them, records it in the pod's status, and deletes it
when the attempt fails. The kube layer implements this port; a
framework nobody serves gets an inert one that refuses every write.

PostFilter and Unreserve are synchronous in the engine, yet upstream awaits their writes
(deallocation, unreservation, deleting a claim for extended resources made earlier)
before the cycle goes on. So those two plugins only ask, in the cycle state
(`request_release`); whoever runs the cycle takes the requests (`take_releases`), sends
them through this port and waits for the answers before the cycle ends, so the engine
never does I/O and the next attempt sees the claim already released.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from berth.engine.dra.allocations import AllocationResult
from berth.engine.dra.claims import ConsumerReference, ResourceClaim
from berth.engine.dra.extended_resources import RequestMapping
from berth.engine.framework.cycle_state import CycleState
from berth.engine.model.pod import Pod

__all__ = [
    "ClaimRelease",
    "ClaimStatusWriter",
    "ClaimWrite",
    "Deallocation",
    "Deletion",
    "Unreservation",
    "UnservedClaimWriter",
    "request_release",
    "take_releases",
]


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

    async def unreserve(self, claim: ResourceClaim, *, pod_uid: str) -> ClaimWrite:
        """Remove the pod from status.reservedFor (whatever version the claim is at)."""
        ...

    async def deallocate(self, claim: ResourceClaim) -> ClaimWrite:
        """Clear status.allocation, reservedFor and devices of `claim` at its version."""
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

    async def delete_extended_claim(self, claim: ResourceClaim) -> ClaimWrite:
        """Drop the delete-protection finalizer, then delete the claim (gone already is fine)."""
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

    async def unreserve(self, claim: ResourceClaim, *, pod_uid: str) -> ClaimWrite:
        return ClaimWrite(error=_NOT_SERVED)

    async def deallocate(self, claim: ResourceClaim) -> ClaimWrite:
        return ClaimWrite(error=_NOT_SERVED)

    async def create_extended_claim(self, claim: ResourceClaim, *, pod: Pod) -> ClaimWrite:
        return ClaimWrite(error=_NOT_SERVED)

    async def record_extended_claim(
        self, pod: Pod, *, claim_name: str, mappings: tuple[RequestMapping, ...]
    ) -> str:
        return _NOT_SERVED

    async def delete_extended_claim(self, claim: ResourceClaim) -> ClaimWrite:
        return ClaimWrite(error=_NOT_SERVED)

    def wall_time(self) -> float:
        return 0.0

    async def pause(self, seconds: float) -> None:
        pass


@dataclass(frozen=True, slots=True)
class Deallocation:
    """PostFilter: free `claim`, allocated but used by no other pod."""

    claim: ResourceClaim


@dataclass(frozen=True, slots=True)
class Unreservation:
    """Unreserve: take pod `pod_uid` out of `claim`'s reservedFor."""

    claim: ResourceClaim
    pod_uid: str


@dataclass(frozen=True, slots=True)
class Deletion:
    """PostFilter or Unreserve: delete the pod's claim for extended resources, made earlier."""

    claim: ResourceClaim


ClaimRelease = Deallocation | Unreservation | Deletion

_RELEASES = "ClaimReleases"  # the cycle-state key of the requests


@dataclass(slots=True)
class _Requested:
    releases: list[ClaimRelease] = field(default_factory=list)


def request_release(state: CycleState, release: ClaimRelease) -> None:
    """Ask whoever runs this cycle to send `release` before the cycle ends."""
    requested = state.get(_RELEASES, _Requested)
    if requested is None:
        requested = _Requested()
        state.write(_RELEASES, requested)
    requested.releases.append(release)


def take_releases(state: CycleState) -> list[ClaimRelease]:
    """The releases requested in `state` so far, in order; each is taken once."""
    requested = state.get(_RELEASES, _Requested)
    if requested is None or not requested.releases:
        return []
    taken, requested.releases = requested.releases, []
    return taken
