"""The DRA kinds Berth watches, lists and reads from files (resource.k8s.io/v1).

kube-scheduler v1.37 reads DeviceClasses, ResourceClaims and ResourceSlices through
informers, and DeviceTaintRules too (DRADeviceTaintRules is GA and on: its slice tracker
patches the slices with the rules' taints). ResourceClaimTemplates are not read by the
scheduler (kube-controller-manager makes the claims from them), so they are not watched;
offline input and cluster snapshots read them, for the simulation to make claims from.
"""

from __future__ import annotations

from berth.engine.cluster.dra import DraObject
from berth.engine.dra.claims import ResourceClaim, ResourceClaimTemplate
from berth.engine.dra.classes import DeviceClass
from berth.engine.dra.slices import ResourceSlice
from berth.engine.dra.taint_rules import DeviceTaintRule
from berth.kube.watched_kinds import WatchedKind
from berth.scheduling.simulated_claims import DraInputObject

__all__ = ["DRA_INPUT_KINDS", "DRA_KINDS", "DraKind", "dra_input_kind_named", "dra_kind_named"]

DraKind = WatchedKind[DraObject]

_RESOURCE = "resource.k8s.io"

DRA_KINDS: tuple[DraKind, ...] = (
    WatchedKind(
        "DeviceClass",
        _RESOURCE,
        "v1",
        "deviceclasses",
        namespaced=False,
        parse=DeviceClass.from_dict,
    ),
    WatchedKind(
        "ResourceClaim",
        _RESOURCE,
        "v1",
        "resourceclaims",
        namespaced=True,
        parse=ResourceClaim.from_dict,
    ),
    WatchedKind(
        "ResourceSlice",
        _RESOURCE,
        "v1",
        "resourceslices",
        namespaced=False,
        parse=ResourceSlice.from_dict,
    ),
    WatchedKind(
        "DeviceTaintRule",
        _RESOURCE,
        "v1",
        "devicetaintrules",
        namespaced=False,
        parse=DeviceTaintRule.from_dict,
    ),
)

_BY_KIND = {kind.kind: kind for kind in DRA_KINDS}

DRA_INPUT_KINDS: tuple[WatchedKind[DraInputObject], ...] = (
    *DRA_KINDS,
    WatchedKind(
        "ResourceClaimTemplate",
        _RESOURCE,
        "v1",
        "resourceclaimtemplates",
        namespaced=True,
        parse=ResourceClaimTemplate.from_dict,
    ),
)
"""What offline input and cluster snapshots read of DRA: the watched kinds and claim templates."""

_INPUT_BY_KIND = {kind.kind: kind for kind in DRA_INPUT_KINDS}


def dra_kind_named(kind: str) -> DraKind | None:
    """The DRA kind with this API kind name (e.g. "ResourceClaim"), if it is one."""
    return _BY_KIND.get(kind)


def dra_input_kind_named(kind: str) -> WatchedKind[DraInputObject] | None:
    """The DRA kind (claim templates included) with this API kind name, if it is one."""
    return _INPUT_BY_KIND.get(kind)
