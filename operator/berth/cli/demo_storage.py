"""The demo's stateful part: StatefulSet-like pods whose WaitForFirstConsumer claims span zones.

A scheduler that places a pod with a WaitForFirstConsumer claim also decides
where the claim's volume is made: VolumeBinding picks a node the class's
`allowedTopologies` allow, writes the claim's selected node in PreBind, and
binds the pod only once a provisioner has made the volume and the PV
controller (kube-controller-manager) has bound the two. The demo shows that
whole chain on its cluster: this module makes the objects it needs (a class
served by the demo's stand-in provisioner, a CSINode per node that registers
the driver's zone topology key, one claim per pod named as a StatefulSet's
`volumeClaimTemplates` would name it) and reports, per pod, its node's zone
and its volume's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

from berth.controlplane import PodTemplate, pod_manifest
from berth.controlplane.client import JsonObject, KubeClient

__all__ = [
    "PROVISIONER",
    "STATEFUL_PODS",
    "STORAGE_CLASS",
    "VolumePlacement",
    "create_storage",
    "read_volume_placements",
    "stateful_pods",
    "volume_summary",
]

# The CSI driver name the demo's stand-in provisioner serves (berth.controlplane.VolumeProvisioner).
PROVISIONER = "csi.demo.berth.dev"
STORAGE_CLASS = "demo-zonal"
ZONE_LABEL = "topology.kubernetes.io/zone"
# StatefulSet naming: pod <set>-<ordinal> mounts claim <template>-<set>-<ordinal>.
_SET = "db"
_CLAIM_TEMPLATE = "data"
STATEFUL_PODS = 6


def _claim_name(pod: str) -> str:
    return f"{_CLAIM_TEMPLATE}-{pod}"


def _storage_class(zones: Sequence[str]) -> JsonObject:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": STORAGE_CLASS},
        "provisioner": PROVISIONER,
        "volumeBindingMode": "WaitForFirstConsumer",
        "reclaimPolicy": "Delete",
        "allowedTopologies": [
            {"matchLabelExpressions": [{"key": ZONE_LABEL, "values": list(zones)}]}
        ],
    }


def _csi_node(node: str) -> JsonObject:
    """What the driver's node plugin would register through the kubelet: its zone key."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": node},
        "spec": {"drivers": [{"name": PROVISIONER, "nodeID": node, "topologyKeys": [ZONE_LABEL]}]},
    }


def _claim(name: str) -> JsonObject:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "labels": {"app": _SET}},
        "spec": {
            "storageClassName": STORAGE_CLASS,
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "10Gi"}},
        },
    }


def stateful_pods(base: PodTemplate) -> list[JsonObject]:
    """`db-0` .. `db-5`, spread over zones, each mounting its own claim `data-db-<i>`."""
    template = replace(
        base,
        labels={"app": _SET},
        requests={"cpu": "500m", "memory": "1Gi"},
        topology_spread_constraints=[
            {
                "maxSkew": 1,
                "topologyKey": ZONE_LABEL,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": _SET}},
            }
        ],
    )
    pods = []
    for ordinal in range(STATEFUL_PODS):
        pod = pod_manifest(f"{_SET}-{ordinal}", template)
        claim = _claim_name(pod["metadata"]["name"])
        pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
        pods.append(pod)
    return pods


async def create_storage(
    client: KubeClient,
    *,
    namespace: str,
    nodes: Sequence[str],
    zones: Sequence[str],
    pods: Sequence[JsonObject],
) -> None:
    """The class, one CSINode per node and the claims `pods` mount; before the pods exist."""
    await client.create("/apis/storage.k8s.io/v1/storageclasses", _storage_class(zones))
    # The client bounds the requests in flight.
    await asyncio.gather(
        *(client.create("/apis/storage.k8s.io/v1/csinodes", _csi_node(node)) for node in nodes)
    )
    for pod in pods:
        for volume in pod["spec"].get("volumes", []):
            claim = _claim(volume["persistentVolumeClaim"]["claimName"])
            await client.create(f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", claim)


@dataclass(frozen=True, kw_only=True)
class VolumePlacement:
    """One stateful pod: where it went, and where its claim's volume is (None while unbound)."""

    pod: str
    node: str | None
    node_zone: str | None
    claim: str
    volume: str | None
    volume_zone: str | None


def _volume_zone(volume: JsonObject) -> str | None:
    """The zone a provisioned volume's node affinity pins it to."""
    terms = (((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required") or {}).get(
        "nodeSelectorTerms"
    ) or []
    for term in terms:
        for expression in term.get("matchExpressions") or []:
            if expression.get("key") == ZONE_LABEL and expression.get("values"):
                return str(expression["values"][0])
    return None


async def read_volume_placements(
    client: KubeClient, namespace: str, *, zone_of: dict[str, str]
) -> list[VolumePlacement]:
    """Each stateful pod of `namespace` with its claim's volume; `zone_of` maps node -> zone."""
    pods, _ = await client.list(
        f"/api/v1/namespaces/{namespace}/pods", params={"labelSelector": f"app={_SET}"}
    )
    claims, _ = await client.list(f"/api/v1/namespaces/{namespace}/persistentvolumeclaims")
    volumes, _ = await client.list("/api/v1/persistentvolumes")
    bound = {
        claim["metadata"]["name"]: claim["spec"].get("volumeName")
        for claim in claims
        if (claim.get("status") or {}).get("phase") == "Bound"
    }
    volume_zone = {volume["metadata"]["name"]: _volume_zone(volume) for volume in volumes}
    placements = []
    for pod in sorted(pods, key=lambda pod: pod["metadata"]["name"]):
        node = pod["spec"].get("nodeName")
        claim = _claim_name(pod["metadata"]["name"])
        volume = bound.get(claim)
        placements.append(
            VolumePlacement(
                pod=pod["metadata"]["name"],
                node=node,
                node_zone=zone_of.get(node) if node else None,
                claim=claim,
                volume=volume,
                volume_zone=volume_zone.get(volume) if volume else None,
            )
        )
    return placements


def _claims_bound(placements: Sequence[VolumePlacement]) -> int:
    return sum(1 for placement in placements if placement.volume)


def volume_summary(placements: Sequence[VolumePlacement]) -> list[str]:
    """The summary's lines on claims: how many are bound, and each pod next to its volume."""
    bound = _claims_bound(placements)
    lines = [
        f"Claims of class {STORAGE_CLASS} (WaitForFirstConsumer) bound: {bound}/{len(placements)}"
    ]
    for placement in placements:
        where = (
            f"on {placement.node} ({placement.node_zone})" if placement.node else "not scheduled"
        )
        volume = (
            f"{placement.volume} in {placement.volume_zone}" if placement.volume else "not bound"
        )
        lines.append(f"  {placement.pod} {where}, claim {placement.claim} -> {volume}")
    return lines
