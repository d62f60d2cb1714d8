"""VolumeRestrictions per node from raw objects, straight from kube-scheduler's rules."""

from __future__ import annotations

from typing import Any

Raw = dict[str, Any]


def _conflicts(volume: Raw, other: Raw) -> bool:
    if "gcePersistentDisk" in volume and "gcePersistentDisk" in other:
        a, b = volume["gcePersistentDisk"], other["gcePersistentDisk"]
        both_ro = a.get("readOnly", False) and b.get("readOnly", False)
        return a["pdName"] == b["pdName"] and not both_ro
    if "awsElasticBlockStore" in volume and "awsElasticBlockStore" in other:
        return (
            volume["awsElasticBlockStore"]["volumeID"] == other["awsElasticBlockStore"]["volumeID"]
        )
    if "iscsi" in volume and "iscsi" in other:
        a, b = volume["iscsi"], other["iscsi"]
        both_ro = a.get("readOnly", False) and b.get("readOnly", False)
        return a["iqn"] == b["iqn"] and not both_ro
    if "rbd" in volume and "rbd" in other:
        a, b = volume["rbd"], other["rbd"]
        both_ro = a.get("readOnly", False) and b.get("readOnly", False)
        same_image = (a.get("pool") or "rbd", a["image"]) == (b.get("pool") or "rbd", b["image"])
        return bool(set(a["monitors"]) & set(b["monitors"])) and same_image and not both_ro
    return False


def verdict(
    pod: Raw, pods_on_node: list[Raw], placed: list[Raw], claims: dict[tuple[str, str], Raw]
) -> tuple[str, str]:
    """("skip"|"prefilter"|"pass"|"unschedulable", message) for one node; "prefilter" is a
    PreFilter rejection (UnschedulableAndUnresolvable) that applies to every node."""
    namespace = pod["metadata"]["namespace"]
    volumes = pod["spec"].get("volumes", [])
    rwop = set()
    for volume in volumes:
        if "persistentVolumeClaim" not in volume:
            continue
        name = volume["persistentVolumeClaim"]["claimName"]
        found = claims.get((namespace, name))
        if found is None:
            return "prefilter", f'persistentvolumeclaim "{name}" not found'
        if "ReadWriteOncePod" in found["spec"].get("accessModes", []):
            rwop.add(name)
    used = {
        (other["metadata"]["namespace"], v["persistentVolumeClaim"]["claimName"])
        for other in placed
        for v in other["spec"].get("volumes", [])
        if "persistentVolumeClaim" in v
    }
    in_use = sum(1 for name in rwop if (namespace, name) in used)
    kinds = ("gcePersistentDisk", "awsElasticBlockStore", "iscsi", "rbd")
    restricted = [v for v in volumes if any(kind in v for kind in kinds)]
    if not restricted and in_use == 0:
        return "skip", ""
    for volume in restricted:
        for other in pods_on_node:
            if any(_conflicts(volume, theirs) for theirs in other["spec"].get("volumes", [])):
                return "unschedulable", "node(s) had no available disk"
    if in_use:
        return "unschedulable", (
            "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access "
            "mode already in-use by another pod"
        )
    return "pass", ""
