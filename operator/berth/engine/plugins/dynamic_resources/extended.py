"""Extended resources backed by DRA: the claim kube-scheduler makes for them, cycle by cycle.

A pod asking for `example.com/gpu: 1` where a DeviceClass serves that name gets its devices
through one more ResourceClaim, owned by the pod and annotated as the claim for extended
resources. PreFilter finds the claim an earlier attempt created, or builds it in memory
(named `<extended-resources>`, which no API object can be, with a temporary UID and no
requests). Filter then asks, per node, for the resources the node's allocatable does not
provide (a device plugin serves those that it does); a claim left over from an earlier
attempt rejects every node, and PostFilter deletes it so the next attempt starts anew.
Reserve holds the allocation in flight; PreBind creates the claim, writes its allocation
and reservation, and records it in the pod's status; Unreserve deletes a claim PreBind
created. The texts are kube-scheduler's.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterable, Mapping

from berth.engine.dra.claims import ClaimSpec, ResourceClaim
from berth.engine.dra.classes import DeviceClass
from berth.engine.framework.status import Status, unresolvable
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.model.resources import is_dra_extended_resource, is_scalar_resource
from berth.engine.plugins.dynamic_resources.cycle import (
    ExtendedClaim,
    NodeExtendedClaim,
    PodClaims,
)
from berth.engine.plugins.dynamic_resources.extended_requests import claim_requests

__all__ = [
    "IN_MEMORY_NAME",
    "extended_claim",
    "is_in_memory",
    "node_extended_claim",
    "written_extended_claim",
]

IN_MEMORY_NAME = "<extended-resources>"
CANNOT_SCHEDULE = "cannot schedule extended resource claim"
CANNOT_FIT = "cannot fit resource"


def is_in_memory(claim: ResourceClaim) -> bool:
    return claim.name == IN_MEMORY_NAME


def _new_uid() -> str:
    return str(uuid.uuid1())  # upstream: a time-based UUID


def _find_written(pod: Pod, claims: Iterable[ResourceClaim]) -> ResourceClaim | None:
    for claim in claims:
        if claim.extended_resource_claim and claim.controller_uid == pod.uid:
            return claim
    return None


def extended_claim(
    pod: Pod,
    *,
    claims: Callable[[], Iterable[ResourceClaim]],
    classes: Mapping[str, DeviceClass],
    new_uid: Callable[[], str] = _new_uid,  # test seam: the in-memory claim's UID
) -> tuple[ResourceClaim, ExtendedClaim] | None:
    """PreFilter's part: the pod's claim for extended resources, or None if it needs none."""
    if not classes:
        return None
    requests = {
        name: amount for name, amount in pod.requests.items() if amount and is_scalar_resource(name)
    }
    if not any(is_dra_extended_resource(name) and name in classes for name in requests):
        return None
    claim = _find_written(pod, claims())
    if claim is None:
        claim = ResourceClaim(
            namespace=pod.namespace,
            name=IN_MEMORY_NAME,
            uid=new_uid(),
            spec=ClaimSpec(requests=()),
            controller_uid=pod.uid,
            extended_resource_claim=True,
        )
    return claim, ExtendedClaim(requests=requests, classes=classes, initial_uid=claim.uid)


def node_extended_claim(
    prepared: PodClaims, pod: Pod, node: Node
) -> NodeExtendedClaim | Status | None:
    """Filter's part: the claim as `node` needs it (None: nothing for DRA to do there)."""
    extended = prepared.extended
    index = prepared.extended_index
    if extended is None or index is None:
        return None
    claim = prepared.claims[index]
    if claim.spec.requests:
        # Written by an earlier attempt: PostFilter deletes it, the next attempt starts anew.
        return unresolvable(CANNOT_SCHEDULE)
    needed: dict[str, int] = {}
    for name, amount in extended.requests.items():
        if not is_dra_extended_resource(name):
            continue
        allocatable = node.allocatable.get(name)
        if name in extended.classes and not allocatable:
            needed[name] = amount
        elif allocatable is None:
            return unresolvable(CANNOT_FIT)
    if not needed and not prepared.has_user_claims:
        return None  # a device plugin serves them all; NodeResourcesFit checked the amounts
    if claim.allocation is not None:
        return None
    requests, mappings = claim_requests(pod, needed, extended.classes)
    return NodeExtendedClaim(
        claim=dataclasses.replace(claim, spec=ClaimSpec(requests=requests)), mappings=mappings
    )


def written_extended_claim(prepared: PodClaims) -> ResourceClaim | None:
    """The pod's claim for extended resources if it exists in the API (PostFilter, Unreserve)."""
    index = prepared.extended_index
    if index is None:
        return None
    claim = prepared.claims[index]
    return None if is_in_memory(claim) else claim
