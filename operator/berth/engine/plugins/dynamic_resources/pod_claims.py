"""Finding a pod's ResourceClaims, and the reasons it cannot be scheduled before they exist.

A claim made from a template exists once kube-controller-manager has created it and
recorded its name in the pod's status; until then (or while a named claim is missing or
being deleted, or a generated claim belongs to another pod) the pod waits in the
unschedulable pool. The texts are kube-scheduler's.
"""

from __future__ import annotations

from berth.engine.dra.claims import ResourceClaim
from berth.engine.model.pod import Pod
from berth.engine.model.pod_resource_claims import ClaimNameError, claim_name
from berth.engine.plugins.dynamic_resources.cache import DraCache, visible_claim

__all__ = ["ClaimsNotReady", "pod_claims"]


class ClaimsNotReady(Exception):
    """The pod cannot be scheduled yet; `str()` is kube-scheduler's reason."""


def pod_claims(pod: Pod, cache: DraCache) -> list[ResourceClaim]:
    """The pod's claims in `spec.resourceClaims` order (entries needing none left out).

    Raises `ClaimsNotReady` for the first entry whose claim cannot be used yet.
    """
    claims = []
    for entry in pod.resource_claims:
        try:
            resolved = claim_name(
                namespace=pod.namespace,
                pod_name=pod.name,
                entry=entry,
                statuses=pod.resource_claim_statuses,
            )
        except ClaimNameError as failure:
            raise ClaimsNotReady(str(failure)) from None
        if resolved.name is None:
            continue
        claim = visible_claim(cache, pod.namespace, resolved.name)
        if claim is None:
            raise ClaimsNotReady(f'could not find ResourceClaim "{pod.namespace}/{resolved.name}"')
        if claim.deletion_timestamp is not None:
            raise ClaimsNotReady(f'resourceclaim "{claim.name}" is being deleted')
        if resolved.generated and claim.controller_uid != pod.uid:
            raise ClaimsNotReady(
                f"ResourceClaim {claim.namespace}/{claim.name} was not created for Pod "
                f"{pod.namespace}/{pod.name} (Pod is not owner)"
            )
        claims.append(claim)
    return claims
