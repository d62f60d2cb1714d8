"""VolumeZone per node from raw objects, straight from kube-scheduler's rules."""

from __future__ import annotations

from typing import Any

Raw = dict[str, Any]

LABELS = (
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
)
GA = {LABELS[0]: LABELS[2], LABELS[1]: LABELS[3]}


def verdict(
    pod: Raw,
    node: Raw,
    claims: dict[str, Raw],
    volumes: dict[str, Raw],
    classes: dict[str, Raw],
) -> tuple[str, str]:
    """("skip"|"prefilter"|"pass"|"unresolvable", message) for one node."""
    wanted: list[tuple[str, set[str]]] = []
    for volume in pod["spec"].get("volumes", []):
        if "persistentVolumeClaim" not in volume:
            continue
        name = volume["persistentVolumeClaim"]["claimName"]
        found = claims.get(name)
        if found is None:
            return "prefilter", f'persistentvolumeclaim "{name}" not found'
        bound = found["spec"].get("volumeName", "")
        if not bound:
            class_name = found["spec"].get("storageClassName", "")
            if not class_name:
                return "prefilter", "PersistentVolumeClaim had no pv name and storageClass name"
            storage_class = classes.get(class_name)
            if storage_class is None:
                return "prefilter", f'storageclass.storage.k8s.io "{class_name}" not found'
            if storage_class.get("volumeBindingMode") == "WaitForFirstConsumer":
                continue
            return "prefilter", "PersistentVolume had no name"
        pv = volumes.get(bound)
        if pv is None:
            return "prefilter", f'persistentvolume "{bound}" not found'
        for key in LABELS:
            value = pv["metadata"].get("labels", {}).get(key)
            if value is None:
                continue
            zones = [zone.strip() for zone in value.split("__")]
            if all(zones):
                wanted.append((key, set(zones)))
    if not wanted:
        return "skip", ""
    labels = node["metadata"].get("labels", {})
    if not any(key in labels for key in LABELS):
        return "pass", ""
    for key, zones in wanted:
        value = labels.get(key, labels.get(GA.get(key, key)))
        if value is None or value not in zones:
            return "unresolvable", "node(s) had no available volume zone"
    return "pass", ""
