"""What a simulation does in place of the resourceclaim controller and the claim status writes.

A pod naming a ResourceClaimTemplate needs a claim, which kube-controller-manager's
resourceclaim controller creates as soon as the pod exists: named from the pod and its claim
entry plus five random characters (the API server's generateName), owned by the pod, with the
template's spec, and recorded in the pod's `status.resourceClaimStatuses`. A simulation does
so when it is about to place the pod, with a suffix derived from the pod and claim, so that
runs repeat.

Live, DynamicResources' Reserve assumes each claim it allocated in the DRA cache, PreBind
writes the allocation and the pod's `reservedFor` entry, and the watch replaces the
assumption with the API's version. Offline there is no API: after each placement every
standing assumption, and every other claim of the pod already allocated, becomes the claim
the API would hold (allocated, reserved for the pod). `placed_devices` then reads, per
claim of the pod, the devices it was given.

The claim for a pod's extended resources backed by DRA exists only in memory until
PreBind would create it; a simulation creates it when settling, named as the API server
would name it from the pod (`<pod>-extended-resources-` plus five characters, derived
here from the pod), and lists it last among the pod's claims (with no entry name).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from berth.engine.cluster.dra import DraObject, DraObjects
from berth.engine.dra.allocations import AllocatedDevice
from berth.engine.dra.claims import ConsumerReference, ResourceClaim, ResourceClaimTemplate
from berth.engine.model.pod import Pod
from berth.engine.model.pod_resource_claims import ClaimNameError, claim_name

__all__ = [
    "ClaimDevices",
    "DraInputObject",
    "claim_templates",
    "create_generated_claims",
    "extended_claim_name",
    "generated_claim_name",
    "placed_devices",
    "pod_claims_held",
    "settle_assumed_allocations",
]

DraInputObject = DraObject | ResourceClaimTemplate
"""What offline input may hold of DRA: the objects the scheduler reads, and claim templates."""

_versions = itertools.count(1)
# The API server's generateName alphabet (no vowels, no look-alikes).
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_MAX_BASE = 57  # the controller leaves room for the 5 characters in a 63-character name
_MAX_GENERATE_BASE = 58  # the API server cuts a generateName to leave room for its suffix


@dataclass(frozen=True, slots=True)
class ClaimDevices:
    """The devices one of a placed pod's claims holds."""

    pod_claim: str  # the entry's name in spec.resourceClaims
    claim: str  # the ResourceClaim's name
    devices: tuple[AllocatedDevice, ...]


def claim_templates(
    objects: Iterable[DraInputObject],
) -> dict[tuple[str, str], ResourceClaimTemplate]:
    """The ResourceClaimTemplates among `objects`, by (namespace, name)."""
    return {
        (obj.namespace, obj.name): obj for obj in objects if isinstance(obj, ResourceClaimTemplate)
    }


def generated_claim_name(pod: Pod, pod_claim: str) -> str:
    """The controller's generateName for the claim, plus a suffix fixed per pod and claim."""
    base = f"{pod.name}-{pod_claim}-"
    if len(base) > _MAX_BASE:
        # The controller shortens both names in proportion (and drops the last hyphen).
        base = (
            f"{pod.name[: len(pod.name) * _MAX_BASE // len(base)]}-"
            f"{pod_claim[: len(pod_claim) * _MAX_BASE // len(base)]}"
        )
    return base + _suffix(f"{pod.uid}/{pod_claim}")


def _suffix(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_ALPHABET[byte % len(_ALPHABET)] for byte in digest[:5])


def extended_claim_name(pod: Pod) -> str:
    """The name the API server gives the pod's claim for extended resources (fixed suffix)."""
    base = f"{pod.name}-extended-resources-"[:_MAX_GENERATE_BASE]
    return base + _suffix(f"{pod.uid}/extended-resources")


def _extended_claim(pod: Pod, dra: DraObjects) -> ResourceClaim | None:
    for claim in dra.all_claims():
        if claim.extended_resource_claim and claim.controller_uid == pod.uid:
            return claim
    return None


def create_generated_claims(
    pod: Pod, dra: DraObjects, templates: Mapping[tuple[str, str], ResourceClaimTemplate]
) -> Pod:
    """`pod` with the claims its templates call for created in `dra` and named in its status.

    As the controller: an entry whose generated claim exists (owned by the pod) is left
    alone, and one whose template does not exist gets no claim (the pod then waits for it).
    """
    statuses = dict(pod.resource_claim_statuses)
    for entry in pod.resource_claims:
        template_name = entry.resource_claim_template_name
        if entry.resource_claim_name is not None or template_name is None:
            continue
        existing = statuses.get(entry.name)
        if entry.name in statuses and existing is None:
            continue  # the controller deliberately made none
        if existing is not None:
            claim = dra.claim(pod.namespace, existing)
            if claim is not None and claim.controller_uid == pod.uid:
                continue
        template = templates.get((pod.namespace, template_name))
        if template is None:
            continue
        name = generated_claim_name(pod, entry.name)
        dra.upsert(
            ResourceClaim(
                namespace=pod.namespace,
                name=name,
                uid=f"generated:{pod.namespace}/{name}",
                spec=template.spec,
                resource_version=_next_version(),
                controller_uid=pod.uid,
            )
        )
        statuses[entry.name] = name
    if statuses == pod.resource_claim_statuses:
        return pod
    return dataclasses.replace(pod, resource_claim_statuses=statuses)


def pod_claims_held(pod: Pod, dra: DraObjects) -> list[tuple[str, ResourceClaim]]:
    """(entry name, claim) for each of `pod`'s claims that exists in `dra`, in spec order
    (an entry whose claim cannot be named yet, or was deliberately not made, is left out)."""
    found = []
    for entry in pod.resource_claims:
        try:
            resolved = claim_name(
                namespace=pod.namespace,
                pod_name=pod.name,
                entry=entry,
                statuses=pod.resource_claim_statuses,
            )
        except ClaimNameError:
            continue
        claim = None if resolved.name is None else dra.claim(pod.namespace, resolved.name)
        if claim is not None:
            found.append((entry.name, claim))
    return found


def settle_assumed_allocations(pod: Pod, dra: DraObjects) -> None:
    """Turn the claims `pod` was given into what the API would hold after its PreBind."""
    consumer = ConsumerReference(resource="pods", name=pod.name, uid=pod.uid)
    for _, claim in pod_claims_held(pod, dra):
        if claim.allocation is None:
            continue
        reserved = claim.reserved_for
        if all(entry.uid != pod.uid for entry in reserved):
            reserved = (*reserved, consumer)
        dra.upsert(
            dataclasses.replace(claim, reserved_for=reserved, resource_version=_next_version())
        )
    for claim in dra.assumed_claims():
        # Not one of the pod's (a plugin assumed another claim): the API version it made.
        dra.upsert(dataclasses.replace(claim, resource_version=_next_version()))
    for claim in dra.in_flight_claims():
        if claim.controller_uid != pod.uid:
            continue
        # The claim for extended resources, as PreBind would create and reserve it.
        dra.release_in_flight(claim.uid)
        name = extended_claim_name(pod)
        dra.upsert(
            dataclasses.replace(
                claim,
                name=name,
                uid=f"generated:{pod.namespace}/{name}",
                reserved_for=(consumer,),
                resource_version=_next_version(),
            )
        )


def placed_devices(pod: Pod, dra: DraObjects) -> tuple[ClaimDevices, ...]:
    """Per claim of `pod`, in spec order, the devices its allocation holds (the claim for
    extended resources last, with no entry name)."""
    held = pod_claims_held(pod, dra)
    extended = _extended_claim(pod, dra)
    if extended is not None:
        held.append(("", extended))
    return tuple(
        ClaimDevices(
            pod_claim=entry,
            claim=claim.name,
            devices=() if claim.allocation is None else claim.allocation.devices,
        )
        for entry, claim in held
    )


def _next_version() -> str:
    # Any new resourceVersion will do: it only has to differ from the one assumed upon.
    return f"simulated-{next(_versions)}"
