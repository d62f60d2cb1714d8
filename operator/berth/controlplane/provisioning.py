"""What a topology-aware CSI driver behind external-provisioner would create for a claim.

The local control plane has no storage, but dynamic provisioning is part of
what a scheduler's VolumeBinding must get right: for a WaitForFirstConsumer
claim it picks a node, writes `volume.kubernetes.io/selected-node` on the
claim in PreBind, and waits until a provisioner has made a volume reachable
from that node and the PV controller has bound the two. This module decides,
from the API objects alone, which claims such a provisioner takes and what
PersistentVolume it would create; provisioner.py runs it against the API.

The volume follows external-provisioner (kubernetes-csi, `--feature-gates=
Topology=true`, non-strict topology) with a driver that creates every volume
in the first topology segment it is offered:
- the claim is taken once the PV controller has named this provisioner on it
  (`volume.kubernetes.io/storage-provisioner`) and a scheduler has selected a
  node; claims of Immediate classes (no selected node) are left alone;
- the topology keys are those the driver registered in the selected node's
  CSINode, the values that node's labels;
- with `allowedTopologies` on the class, the segment is the first of the
  class's allowed segments (each combination of values, in sorted order) that
  the selected node's topology contains, so the volume's node affinity uses
  the class's keys; without, it is the selected node's own topology;
- size, access modes and volume mode come from the claim, reclaim policy and
  mount options from the class, and `spec.claimRef` points at the claim so
  the PV controller binds exactly that claim to it.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "PROVISIONED_BY",
    "SELECTED_NODE",
    "STORAGE_PROVISIONER",
    "ProvisioningError",
    "claim_key",
    "claim_wants_volume",
    "provisioned_volume",
    "volume_name",
]

JsonObject = dict[str, Any]

# Written by a scheduler's VolumeBinding PreBind: the node the claim's pod will run on.
SELECTED_NODE = "volume.kubernetes.io/selected-node"
# Written by the PV controller: which provisioner is to create the claim's volume.
STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
# Written by the provisioner on its volumes, as external-provisioner does.
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
# external-provisioner's CSI volume attribute naming the provisioner instance.
_PROVISIONER_IDENTITY = "storage.kubernetes.io/csiProvisionerIdentity"
# StorageClass parameter that external-provisioner turns into the PV's fsType.
_FSTYPE_PARAMETER = "csi.storage.k8s.io/fstype"


class ProvisioningError(Exception):
    """The claim cannot be provisioned now; the message names the object and what is missing."""


def claim_key(claim: Mapping[str, Any]) -> str:
    metadata = claim["metadata"]
    return f"{metadata['namespace']}/{metadata['name']}"


def volume_name(claim: Mapping[str, Any]) -> str:
    """`pvc-<claim uid>`: one name per claim, so a repeated attempt can never create a second."""
    return f"pvc-{claim['metadata']['uid']}"


def claim_wants_volume(claim: Mapping[str, Any], provisioner: str) -> bool:
    """Whether `provisioner` should create a volume for this claim now."""
    metadata = claim.get("metadata") or {}
    spec = claim.get("spec") or {}
    annotations = metadata.get("annotations") or {}
    named = annotations.get(STORAGE_PROVISIONER) or annotations.get(_BETA_STORAGE_PROVISIONER)
    phase = (claim.get("status") or {}).get("phase", "Pending")
    return (
        named == provisioner
        and bool(annotations.get(SELECTED_NODE))
        and not spec.get("volumeName")
        and not metadata.get("deletionTimestamp")
        and phase == "Pending"
    )


def provisioned_volume(
    claim: Mapping[str, Any],
    storage_class: Mapping[str, Any],
    *,
    node: Mapping[str, Any],
    csi_node: Mapping[str, Any] | None,
    topology: bool,
    identity: str,
) -> JsonObject:
    """The PersistentVolume for `claim` on the selected `node`.

    `csi_node` is that node's CSINode (None if it has none); `topology` says
    whether the emulated driver reports volume accessibility at all (without
    it, volumes get no node affinity). ProvisioningError when the claim
    cannot be provisioned as the objects stand (a retry may succeed later).
    """
    key = claim_key(claim)
    spec = claim.get("spec") or {}
    provisioner = str(storage_class.get("provisioner", ""))
    size = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if not size:
        raise ProvisioningError(f"claim {key}: spec.resources.requests.storage is not set")
    volume_mode = spec.get("volumeMode") or "Filesystem"
    csi: JsonObject = {
        "driver": provisioner,
        "volumeHandle": f"{provisioner}/{claim['metadata']['uid']}",
        "volumeAttributes": {_PROVISIONER_IDENTITY: identity},
    }
    fs_type = (storage_class.get("parameters") or {}).get(_FSTYPE_PARAMETER)
    if fs_type and volume_mode == "Filesystem":
        csi["fsType"] = fs_type
    volume_spec: JsonObject = {
        "capacity": {"storage": size},
        "accessModes": list(spec.get("accessModes") or []),
        "volumeMode": volume_mode,
        "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy") or "Delete",
        "storageClassName": storage_class["metadata"]["name"],
        "claimRef": {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "namespace": claim["metadata"]["namespace"],
            "name": claim["metadata"]["name"],
            "uid": claim["metadata"]["uid"],
            "resourceVersion": claim["metadata"].get("resourceVersion", ""),
        },
        "csi": csi,
    }
    if storage_class.get("mountOptions"):
        volume_spec["mountOptions"] = list(storage_class["mountOptions"])
    if topology:
        segment = _accessible_segment(
            key,
            node=node,
            csi_node=csi_node,
            driver=provisioner,
            allowed_topologies=storage_class.get("allowedTopologies") or [],
        )
        volume_spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": label, "operator": "In", "values": [value]}
                            for label, value in segment
                        ]
                    }
                ]
            }
        }
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": volume_name(claim), "annotations": {PROVISIONED_BY: provisioner}},
        "spec": volume_spec,
    }


Segment = tuple[tuple[str, str], ...]


def _accessible_segment(
    key: str,
    *,
    node: Mapping[str, Any],
    csi_node: Mapping[str, Any] | None,
    driver: str,
    allowed_topologies: Sequence[Mapping[str, Any]],
) -> Segment:
    node_name = node["metadata"]["name"]
    topology_keys = _registered_topology_keys(csi_node, driver)
    if not topology_keys:
        raise ProvisioningError(
            f"claim {key}: no topology key found for node {node_name} "
            f"(its CSINode does not list driver {driver} with topologyKeys)"
        )
    labels = node["metadata"].get("labels") or {}
    missing = [label for label in topology_keys if label not in labels]
    if missing:
        raise ProvisioningError(
            f"claim {key}: node {node_name} lacks the topology labels {missing} "
            f"that driver {driver} registered in its CSINode"
        )
    selected = {(label, labels[label]) for label in topology_keys}
    if not allowed_topologies:
        return tuple(sorted(selected))
    for segment in _allowed_segments(allowed_topologies):
        if set(segment) <= selected:
            return segment
    raise ProvisioningError(
        f"claim {key}: the topology {sorted(selected)} of node {node_name} is not among "
        "its StorageClass's allowedTopologies"
    )


def _registered_topology_keys(csi_node: Mapping[str, Any] | None, driver: str) -> list[str]:
    for entry in ((csi_node or {}).get("spec") or {}).get("drivers") or []:
        if entry.get("name") == driver:
            return [str(label) for label in entry.get("topologyKeys") or []]
    return []


def _allowed_segments(allowed_topologies: Sequence[Mapping[str, Any]]) -> list[Segment]:
    """Every combination of values each allowedTopologies term allows, sorted, without repeats.

    A term ANDs its expressions and each expression ORs its values, so one
    term stands for the cross product of its expressions' values.
    """
    segments: set[Segment] = set()
    for term in allowed_topologies:
        expressions = term.get("matchLabelExpressions") or []
        choices = [
            [(str(expression["key"]), str(value)) for value in expression.get("values") or []]
            for expression in expressions
        ]
        if not choices:
            continue
        for combination in itertools.product(*choices):
            segments.add(tuple(sorted(combination)))
    return sorted(segments)
