"""What DynamicResources keeps for one pod between PreFilter and PreBind.

PreFilter finds the pod's claims and builds one allocator when some claim still needs
devices; Filter remembers, per node, the allocation it found (Score and Reserve read the
chosen node's), and which allocated claims some node could not use (PostFilter may free
one of them); Reserve records the allocation each pending claim gets; PreBind replaces
claims by the versions its writes returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from berth.engine.dra.allocations import AllocationResult
from berth.engine.dra.allocator import Allocated, Allocator
from berth.engine.dra.claims import ResourceClaim
from berth.engine.model.pod import Pod

__all__ = ["PodClaims", "is_reserved_for"]


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

    def __post_init__(self) -> None:
        if not self.reserved:
            self.reserved = [None] * len(self.claims)

    def to_allocate(self) -> list[int]:
        """Indexes of the claims without an allocation (the allocator's input, in order)."""
        return [index for index, claim in enumerate(self.claims) if claim.allocation is None]


def is_reserved_for(claim: ResourceClaim, pod: Pod) -> bool:
    return any(consumer.uid == pod.uid for consumer in claim.reserved_for)
