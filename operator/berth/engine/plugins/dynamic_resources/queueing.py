"""The cluster events that may help a pod DynamicResources rejected, with their hints.

New or relabelled nodes (slices may select them), device classes and slices being added
or changed, claims changing, and the pod's own status gaining the names of its generated
claims. A claim event helps when it frees devices (an allocation removed), creates one of
the pod's claims, or changes the status of one; a pod update helps when all its claims
can now be found.
"""

from __future__ import annotations

from collections.abc import Callable

from berth.engine.dra.claims import ResourceClaim
from berth.engine.framework.events import (
    Action,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from berth.engine.model.pod import Pod
from berth.engine.plugins.dynamic_resources.cache import DraCache
from berth.engine.plugins.dynamic_resources.pod_claims import ClaimsNotReady, pod_claims

__all__ = ["claim_change_hint", "events", "pod_update_hint"]


def _status(claim: ResourceClaim) -> tuple[object, ...]:
    return (
        claim.allocation,
        claim.reserved_for,
        claim.allocation_timestamp,
        dict(claim.device_conditions),
    )


def claim_change_hint(cache: DraCache, pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(new, ResourceClaim):
        # Deleted: only a claim that still held devices frees any.
        if isinstance(old, ResourceClaim) and old.allocation is None:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
    try:
        uses_claim = any(claim.uid == new.uid for claim in pod_claims(pod, cache))
    except ClaimsNotReady:
        return QueueingHint.SKIP
    original = old if isinstance(old, ResourceClaim) else None
    if original is not None and original.allocation is not None and new.allocation is None:
        return QueueingHint.QUEUE  # deallocated: devices are free for anyone
    if not uses_claim:
        return QueueingHint.SKIP
    if original is None:
        return QueueingHint.QUEUE
    return QueueingHint.SKIP if _status(original) == _status(new) else QueueingHint.QUEUE


def pod_update_hint(cache: DraCache, pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(new, Pod):
        return QueueingHint.QUEUE
    try:
        pod_claims(new, cache)
    except ClaimsNotReady:
        return QueueingHint.SKIP
    return QueueingHint.QUEUE


def events(cache: Callable[[], DraCache]) -> list[ClusterEventWithHint]:
    return [
        ClusterEventWithHint(
            ClusterEvent(
                Resource.NODE,
                Action.ADD | Action.UPDATE_NODE_LABEL | Action.UPDATE_NODE_ALLOCATABLE,
            )
        ),
        ClusterEventWithHint(
            ClusterEvent(Resource.RESOURCE_CLAIM, Action.ADD | Action.UPDATE | Action.DELETE),
            lambda pod, old, new: claim_change_hint(cache(), pod, old, new),
        ),
        ClusterEventWithHint(
            ClusterEvent(Resource.TARGET_POD, Action.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
            lambda pod, old, new: pod_update_hint(cache(), pod, old, new),
        ),
        ClusterEventWithHint(ClusterEvent(Resource.DEVICE_CLASS, Action.ADD | Action.UPDATE)),
        ClusterEventWithHint(ClusterEvent(Resource.RESOURCE_SLICE, Action.ADD | Action.UPDATE)),
    ]
