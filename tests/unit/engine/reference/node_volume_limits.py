"""NodeVolumeLimits per node from raw objects, straight from kube-scheduler's CSILimits.

Covers CSI volumes, unbound claims counted by their class's provisioner, generic
ephemeral claims, in-line GCE PD / AWS EBS volumes migrated on nodes with a CSINode,
and VolumeAttachments.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

Raw = dict[str, Any]

IN_TREE_DRIVERS = {
    "gcePersistentDisk": "pd.csi.storage.gke.io",
    "awsElasticBlockStore": "ebs.csi.aws.com",
}


def _inline_name(volume: Raw) -> str | None:
    if "gcePersistentDisk" in volume:
        disk = volume["gcePersistentDisk"]["pdName"]
        return f"pd.csi.storage.gke.io/projects/UNSPECIFIED/zones/UNSPECIFIED/disks/{disk}"
    if "awsElasticBlockStore" in volume:
        volume_id = volume["awsElasticBlockStore"]["volumeID"]
        return f"ebs.csi.aws.com/{volume_id.rsplit('/', 1)[-1]}"
    return None


def counts(pod: Raw) -> bool:
    return any(
        "persistentVolumeClaim" in v or "ephemeral" in v or any(k in v for k in IN_TREE_DRIVERS)
        for v in pod["spec"].get("volumes", [])
    )


def _unique_volumes(
    pod: Raw, *, new: bool, migrated: bool, world: dict[str, dict[str, Raw]]
) -> dict[str, str] | tuple[str, str]:
    """unique name -> driver, or (kind, message) when it cannot be told."""
    found: dict[str, str] = {}
    namespace = pod["metadata"]["namespace"]
    for volume in pod["spec"].get("volumes", []):
        if "persistentVolumeClaim" in volume or "ephemeral" in volume:
            ephemeral = "ephemeral" in volume
            name = (
                f"{pod['metadata']['name']}-{volume['name']}"
                if ephemeral
                else volume["persistentVolumeClaim"]["claimName"]
            )
            pvc = world["claims"].get(f"{namespace}/{name}")
            if pvc is None:
                if new:
                    return "unresolvable", (
                        f'looking up PVC {namespace}/{name}: persistentvolumeclaim "{name}" not found'
                    )
                continue
            if ephemeral:
                owners = pvc["metadata"].get("ownerReferences", [])
                if not any(
                    o.get("controller") and o["uid"] == pod["metadata"]["uid"] for o in owners
                ):
                    return "error", (
                        f"PVC {namespace}/{name} was not created for pod "
                        f"{namespace}/{pod['metadata']['name']} (pod is not owner)"
                    )
            pv = world["volumes"].get(pvc["spec"].get("volumeName", ""))
            if pv is None:
                storage_class = world["classes"].get(pvc["spec"].get("storageClassName", ""))
                if storage_class is not None and storage_class["provisioner"]:
                    driver = storage_class["provisioner"]
                    found[f"{driver}/<random>-{namespace}/{name}"] = driver
                continue
            csi = pv["spec"].get("csi")
            if csi is not None and csi["driver"] and csi["volumeHandle"]:
                found[f"{csi['driver']}/{csi['volumeHandle']}"] = csi["driver"]
            continue
        unique = _inline_name(volume)
        if unique is not None and migrated:
            found[unique] = unique.split("/", 1)[0]
    return found


def verdict(
    pod: Raw, node: str, pods_on_node: list[Raw], world: dict[str, dict[str, Raw]]
) -> tuple[str, str]:
    """("skip"|"pass"|"unschedulable"|"unresolvable"|"error", message) for one node.

    `world` holds raw objects by key: claims ("ns/name"), volumes, classes, csi_nodes,
    drivers, attachments.
    """
    if not counts(pod):
        return "skip", ""
    csi_node = world["csi_nodes"].get(node)
    new = _unique_volumes(pod, new=True, migrated=csi_node is not None, world=world)
    if isinstance(new, tuple):
        return new
    if not new:
        return "pass", ""
    installed = {d["name"] for d in csi_node["spec"]["drivers"]} if csi_node else set()
    for driver in sorted(set(new.values())):
        spec = world["drivers"].get(driver)
        if spec and spec["spec"].get("preventPodSchedulingIfMissing") and driver not in installed:
            return "unschedulable", f"{driver} CSI driver is not installed on the node"
    limits = {
        d["name"]: d["allocatable"]["count"]
        for d in (csi_node["spec"]["drivers"] if csi_node else [])
        if "allocatable" in d
    }
    if not limits:
        return "pass", ""
    held: dict[str, str] = {}
    for other in pods_on_node:
        theirs = _unique_volumes(other, new=False, migrated=True, world=world)
        if isinstance(theirs, tuple):
            return theirs
        held.update(theirs)
    in_use = Counter(held.values())
    attached: dict[str, str] = {}
    for va in world["attachments"].values():
        spec = va["spec"]
        pv = world["volumes"].get(spec["source"].get("persistentVolumeName", ""))
        if (
            spec["nodeName"] != node
            or not spec["attacher"]
            or pv is None
            or "csi" not in pv["spec"]
        ):
            continue
        attached[f"{spec['attacher']}/{pv['spec']['csi']['volumeHandle']}"] = spec["attacher"]
    in_use.update(driver for unique, driver in attached.items() if unique not in held)
    adding = Counter(driver for unique, driver in new.items() if unique not in held)
    for driver, count in adding.items():
        if driver in limits and in_use[driver] + count > limits[driver]:
            return "unschedulable", "node(s) exceed max volume count"
    return "pass", ""
