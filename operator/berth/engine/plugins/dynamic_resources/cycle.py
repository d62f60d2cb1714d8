"""What DynamicResources keeps for one pod between PreFilter and PreBind.

PreFilter finds the pod's claims and builds one allocator when some claim still needs
devices; Filter remembers, per node, the allocation it found (Score and Reserve read the
chosen node's), and which allocated claims some node could not use (PostFilter may free
one of them); Reserve records the allocation each pending claim gets; PreBind replaces
claims by the versions its writes returned.

A pod asking for extended resources a DeviceClass serves has one more claim, last in
`claims`: the one kube-scheduler creates for them in PreBind (found from an earlier
attempt, or built in memory). Filter makes a variant of it per node, asking for what the
node's allocatable does not provide.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from berth.engine.dra.allocations import AllocationResult
from berth.engine.dra.allocator import Allocated, Allocator
from berth.engine.dra.claims import ResourceClaim
from berth.engine.dra.classes import DeviceClass
from berth.engine.dra.extended_resources import RequestMapping
from berth.engine.model.pod import Pod

__all__ = ["ExtendedClaim", "NodeExtendedClaim", "PodClaims", "is_reserved_for"]


@dataclass(frozen=True, slots=True)
class NodeExtendedClaim:
    """The claim for extended resources as one node needs it, and the pod's mappings to it."""

    claim: ResourceClaim
    mappings: tuple[RequestMapping, ...]


@dataclass(slots=True)
class ExtendedClaim:
    """What the pod's extended resources backed by DRA need between PreFilter and PreBind."""

    requests: dict[str, int]  # the pod's scalar requests (non-zero)
    classes: Mapping[str, DeviceClass]  # resource name -> serving class, as PreFilter saw it
    initial_uid: str  # the claim's UID in PreFilter: Reserve holds its allocation under it
    per_node: dict[str, NodeExtendedClaim] = field(default_factory=dict)


@dataclass(slots=True)
class PodClaims:
    claims: list[ResourceClaim]  # spec.resourceClaims order (claims not needed left out)
    allocator: Allocator | None = None  # set when some claim has no allocation yet
    deadline_seconds: float = 0.0  # per node, for the allocator; 0: unbounded
    # Per claim: the allocation Reserve decided (None for claims allocated before).
    reserved: list[AllocationResult | None] = field(default_factory=list)
    # Node name -> what Filter's allocator found there (results written out only when read).
    node_allocations: dict[str, Allocated] = field(default_factory=dict)
    unavailable: set[int] = field(default_factory=set)  # allocated claims some node can't use
    extended: ExtendedClaim | None = None  # set when the last claim is for extended resources

    def __post_init__(self) -> None:
        if not self.reserved:
            self.reserved = [None] * len(self.claims)

    @property
    def extended_index(self) -> int | None:
        return len(self.claims) - 1 if self.extended is not None else None

    @property
    def has_user_claims(self) -> bool:
        return len(self.claims) > (1 if self.extended is not None else 0)

    def to_allocate(self) -> list[int]:
        """Indexes of the claims without an allocation (the allocator's input, in order)."""
        return [index for index, claim in enumerate(self.claims) if claim.allocation is None]


def is_reserved_for(claim: ResourceClaim, pod: Pod) -> bool:
    return any(consumer.uid == pod.uid for consumer in claim.reserved_for)
