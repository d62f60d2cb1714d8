"""The ResourceClaims a pod uses (spec.resourceClaims), and which claim object each one is.

A pod entry names a ResourceClaim directly, or a ResourceClaimTemplate from which
kube-controller-manager's resourceclaim controller creates a claim for the pod; the
controller then records the generated name in `status.resourceClaimStatuses` (or no name
when it deliberately created none). `claim_name` resolves an entry as the DynamicResources
plugin does, with upstream's errors for a claim not created yet or an entry of an unknown
shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from berth.engine.errors import FieldError
from berth.engine.model.parsing import as_list, as_map, as_str

__all__ = [
    "ClaimNameError",
    "PodResourceClaim",
    "ResolvedClaim",
    "claim_name",
    "parse_pod_resource_claims",
    "parse_resource_claim_statuses",
]


@dataclass(frozen=True, slots=True)
class PodResourceClaim:
    """One entry of spec.resourceClaims; at most one of the two sources is set."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


@dataclass(frozen=True, slots=True)
class ResolvedClaim:
    """The claim object an entry stands for.

    `name` None: the controller intentionally created no claim (the entry is skipped).
    `generated`: made from a template, so the claim must be controlled by the pod.
    """

    name: str | None
    generated: bool


class ClaimNameError(Exception):
    """The entry's claim cannot be named; `str()` is kube-scheduler's message."""

    def __init__(self, message: str, *, not_created: bool) -> None:
        super().__init__(message)
        self.not_created = not_created  # the generated claim is not there yet (may come later)


def claim_name(
    *,
    namespace: str,
    pod_name: str,
    entry: PodResourceClaim,
    statuses: Mapping[str, str | None],
) -> ResolvedClaim:
    """Which claim `entry` of pod `namespace/pod_name` uses, given its resourceClaimStatuses.

    Raises `ClaimNameError` when the generated claim is not recorded yet, or when neither
    source is set.
    """
    if entry.resource_claim_name is not None:
        return ResolvedClaim(entry.resource_claim_name, generated=False)
    if entry.resource_claim_template_name is not None:
        if entry.name in statuses:
            return ResolvedClaim(statuses[entry.name], generated=True)
        raise ClaimNameError(
            f'pod "{namespace}/{pod_name}": ResourceClaim not created yet', not_created=True
        )
    raise ClaimNameError(
        f'pod "{namespace}/{pod_name}", spec.resourceClaim "{entry.name}": '
        "none of the supported fields are set",
        not_created=False,
    )


def parse_pod_resource_claims(raw: object) -> tuple[PodResourceClaim, ...]:
    """spec.resourceClaims, in order; names must be set."""
    claims = []
    for index, item in enumerate(as_list(raw, "spec.resourceClaims")):
        where = f"spec.resourceClaims[{index}]"
        entry = as_map(item, where)
        name = as_str(entry.get("name"), f"{where}.name")
        if not name:
            raise FieldError(f"{where}.name", "must be set")
        claims.append(
            PodResourceClaim(
                name=name,
                resource_claim_name=_optional(
                    entry.get("resourceClaimName"), f"{where}.resourceClaimName"
                ),
                resource_claim_template_name=_optional(
                    entry.get("resourceClaimTemplateName"), f"{where}.resourceClaimTemplateName"
                ),
            )
        )
    return tuple(claims)


def parse_resource_claim_statuses(raw: object) -> dict[str, str | None]:
    """status.resourceClaimStatuses: pod claim name -> generated claim name (None: none made)."""
    statuses: dict[str, str | None] = {}
    for index, item in enumerate(as_list(raw, "status.resourceClaimStatuses")):
        where = f"status.resourceClaimStatuses[{index}]"
        entry = as_map(item, where)
        name = as_str(entry.get("name"), f"{where}.name")
        if not name:
            raise FieldError(f"{where}.name", "must be set")
        generated = _optional(entry.get("resourceClaimName"), f"{where}.resourceClaimName")
        statuses.setdefault(name, generated)  # the first entry of a name counts, as upstream
    return statuses


def _optional(raw: object, field: str) -> str | None:
    return None if raw is None else as_str(raw, field)
