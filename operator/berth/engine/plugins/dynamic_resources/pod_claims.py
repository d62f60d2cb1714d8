"""Finding a pod's ResourceClaims, and the reasons it cannot be scheduled before they exist.

A claim made from a template exists once kube-controller-manager has created it and
recorded its name in the pod's status; until then (or while a named claim is missing or
being deleted, or a generated claim belongs to another pod) the pod waits in the
unschedulable pool. The texts are kube-scheduler's.
"""

from __future__ import annotations

from berth.engine.dra.claims import ResourceClaim
from berth.engine.model.pod import Pod
from berth.engine.plugins.dynamic_resources.cache import DraCache, visible_claim

__all__ = ["ClaimsNotReady", "claim_names", "pod_claims"]


class ClaimsNotReady(Exception):
    """The pod cannot be scheduled yet; `str()` is kube-scheduler's reason."""


def claim_names(pod: Pod) -> list[tuple[str, bool]]:
    """(claim name, whether the claim must be checked to belong to the pod) per entry.

    Entries whose generated claim was intentionally not created are left out; raises
    `ClaimsNotReady` when a template's claim has not been created yet.
    """
    names: list[tuple[str, bool]] = []
    for ref in pod.resource_claim_refs:
        if ref.claim_name is not None:
            names.append((ref.claim_name, False))
        elif ref.template_name is not None:
            if ref.name not in pod.resource_claim_statuses:
                raise ClaimsNotReady(
                    f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet'
                )
            generated = pod.resource_claim_statuses[ref.name]
            if generated is not None:
                names.append((generated, True))
        else:
            raise ClaimsNotReady(
                f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{ref.name}": '
                "none of the supported fields are set"
            )
    return names


def pod_claims(pod: Pod, cache: DraCache) -> list[ResourceClaim]:
    """The pod's claims in `spec.resourceClaims` order; raises `ClaimsNotReady`."""
    claims = []
    for name, must_check_owner in claim_names(pod):
        claim = visible_claim(cache, pod.namespace, name)
        if claim is None:
            raise ClaimsNotReady(f'could not find ResourceClaim "{pod.namespace}/{name}"')
        if claim.deletion_timestamp is not None:
            raise ClaimsNotReady(f'resourceclaim "{claim.name}" is being deleted')
        if must_check_owner and claim.controller_uid != pod.uid:
            raise ClaimsNotReady(
                f"ResourceClaim {claim.namespace}/{claim.name} was not created for Pod "
                f"{pod.namespace}/{pod.name} (Pod is not owner)"
            )
        claims.append(claim)
    return claims
