"""kube-scheduler's `tryTranslatePVToCSI` and csi-translation-lib's PV translation, on raw dicts.

Written from the Go source step by step (deep copy, plugin check, the CSINode's
migrated-plugins annotation, the translator's volume ID and topology rewriting), sharing
nothing with Berth's translator, for the VolumeBinding reference.
"""

from __future__ import annotations

import copy
import re
from typing import Any

Raw = dict[str, Any]

_ZONE, _REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"

# source field -> (plugin name, CSI topology key or None when the translator keeps the topology)
_PLUGINS = {
    "gcePersistentDisk": ("kubernetes.io/gce-pd", "topology.gke.io/zone"),
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", "topology.ebs.csi.aws.com/zone"),
    "cinder": ("kubernetes.io/cinder", "topology.cinder.csi.openstack.org/zone"),
    "azureDisk": ("kubernetes.io/azure-disk", None),
    "portworxVolume": ("kubernetes.io/portworx-volume", None),
}


def _terms(pv: Raw) -> list[Raw]:
    required = (pv["spec"].get("nodeAffinity") or {}).get("required") or {}
    terms: list[Raw] = required.get("nodeSelectorTerms") or []
    return terms


def _key_exists(pv: Raw, key: str) -> bool:
    return any(e["key"] == key for t in _terms(pv) for e in t.get("matchExpressions") or [])


def _topology_label(pv: Raw) -> tuple[str, str]:
    labels = pv["metadata"].get("labels") or {}
    if _key_exists(pv, _ZONE):
        return _ZONE, _REGION
    if _key_exists(pv, _BETA_ZONE):
        return _BETA_ZONE, _BETA_REGION
    if _ZONE in labels:
        return _ZONE, _REGION
    if _BETA_ZONE in labels:
        return _BETA_ZONE, _BETA_REGION
    return _ZONE, _REGION


def _values(pv: Raw, key: str) -> list[str]:
    found = {
        v
        for t in _terms(pv)
        for e in t.get("matchExpressions") or []
        if e["key"] == key
        for v in e.get("values") or []
    }
    return sorted(found)


def _replace(pv: Raw, old: str, new: str) -> None:
    for term in _terms(pv):
        for expression in term.get("matchExpressions") or []:
            if expression["key"] == old:
                expression["key"] = new


def _add(pv: Raw, key: str, zones: list[str]) -> None:
    kept = sorted({z.strip() for z in zones if z.strip()})
    if not kept:
        return  # addTopology's error, which the caller ignores
    affinity = pv["spec"].setdefault("nodeAffinity", {})
    required = affinity.get("required") or {}
    affinity["required"] = required
    if not required.get("nodeSelectorTerms"):
        required["nodeSelectorTerms"] = [{}]
    for term in required["nodeSelectorTerms"]:
        term["matchExpressions"] = [
            *(term.get("matchExpressions") or []),
            {"key": key, "operator": "In", "values": kept},
        ]


def _topology(pv: Raw, csi_key: str) -> None:
    zone_key, region_key = _topology_label(pv)
    labels = pv["metadata"].get("labels") or {}
    if _values(pv, zone_key):
        _replace(pv, zone_key, csi_key)
    elif zone_key in labels:
        _add(pv, csi_key, labels[zone_key].split("__"))
    if region_key == _BETA_REGION and _values(pv, _BETA_REGION):
        _replace(pv, _BETA_REGION, _REGION)


def _gce_check(pv: Raw) -> str | None:
    labels = pv["metadata"].get("labels") or {}
    zones = (labels.get(_BETA_ZONE) or labels.get(_ZONE) or "").split("__")
    if len(zones) <= 1:
        return None
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            return (
                "failed to get region from zones: zone in unexpected format, expected: "
                "{locale}-{region}-{zone}, got: " + zone
            )
        regions.add(parts[0] + "-" + parts[1])
    if len(regions) != 1:
        listed = " ".join(r + ":{}" for r in sorted(regions))
        return (
            "failed to get region from zones: multiple or no regions gotten from zones, got: "
            f"map[{listed}]"
        )
    return None


def _ebs_check(pv: Raw) -> str | None:
    volume_id = pv["spec"]["awsElasticBlockStore"]["volumeID"]
    if not volume_id.startswith("aws://"):
        return None
    path = re.sub(r"^aws://[^/]*", "", volume_id).strip("/")
    if re.fullmatch(r"vol-[^/]*", path):
        return None
    return (
        "failed to translate Kubernetes ID to EBS Volume ID "
        f"Invalid format for AWS volume ({volume_id})"
    )


def _azure_check(pv: Raw) -> str | None:
    kind = pv["spec"]["azureDisk"].get("kind")
    if kind is None or kind.lower() == "managed":
        return None
    return f"kind({kind}) is not supported in csi migration"


_CHECKS = {
    "gcePersistentDisk": _gce_check,
    "awsElasticBlockStore": _ebs_check,
    "azureDisk": _azure_check,
}


def try_translate(pv: Raw, csi_node: Raw | None) -> Raw | str:
    """The PV the binder checks on the node of `csi_node`, or the error it stops with."""
    source = next((name for name in _PLUGINS if name in pv["spec"]), None)
    if source is None or csi_node is None:
        return pv
    plugin, csi_key = _PLUGINS[source]
    annotation = ((csi_node.get("metadata") or {}).get("annotations") or {}).get(
        "storage.alpha.kubernetes.io/migrated-plugins", ""
    )
    if plugin not in (annotation.split(",") if annotation else []):
        return pv
    check = _CHECKS.get(source)
    problem = check(pv) if check is not None else None
    if problem is not None:
        return f"could not translate pv: {problem}"
    translated = copy.deepcopy(pv)
    if csi_key is not None:
        _topology(translated, csi_key)
    return translated
