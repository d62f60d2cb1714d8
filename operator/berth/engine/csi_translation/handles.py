"""In-tree volume kinds and their CSI drivers and volume handles, as csi-translation-lib maps them.

csi-translation-lib (v0.37) knows seven in-tree kinds and the CSI driver that replaced each.
kube-scheduler v1.37 has migration on for five of them (GCE PD, AWS EBS, Azure Disk, Cinder,
Portworx); Azure File and vSphere are migratable but never translated by the scheduler.
NodeVolumeLimits counts a migrated volume by its driver and volume handle (the unique name
of the volume), and VolumeBinding needs the same translation's errors; both are computed
here the way the translator does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from berth.engine.model.volume_sources import (
    AWSElasticBlockStoreSource,
    AzureDiskSource,
    AzureFileSource,
    CinderSource,
    GCEPersistentDiskSource,
    PortworxSource,
    VolumeSource,
    VsphereSource,
)

__all__ = [
    "AWS_EBS",
    "CINDER",
    "GCE_PD",
    "MIGRATED_ON_CSI_NODES",
    "TranslationError",
    "csi_driver_of_plugin",
    "in_tree_plugin_of",
    "inline_volume_handle",
    "persistent_volume_handle",
]

GCE_PD = "kubernetes.io/gce-pd"
AWS_EBS = "kubernetes.io/aws-ebs"
AZURE_DISK = "kubernetes.io/azure-disk"
AZURE_FILE = "kubernetes.io/azure-file"
CINDER = "kubernetes.io/cinder"
PORTWORX = "kubernetes.io/portworx-volume"
VSPHERE = "kubernetes.io/vsphere-volume"

_DRIVERS = {
    GCE_PD: "pd.csi.storage.gke.io",
    AWS_EBS: "ebs.csi.aws.com",
    AZURE_DISK: "disk.csi.azure.com",
    AZURE_FILE: "file.csi.azure.com",
    CINDER: "cinder.csi.openstack.org",
    PORTWORX: "pxd.portworx.com",
    VSPHERE: "csi.vsphere.vmware.com",
}
_PLUGIN_OF_KIND: Mapping[type, str] = {
    GCEPersistentDiskSource: GCE_PD,
    AWSElasticBlockStoreSource: AWS_EBS,
    AzureDiskSource: AZURE_DISK,
    AzureFileSource: AZURE_FILE,
    CinderSource: CINDER,
    PortworxSource: PORTWORX,
    VsphereSource: VSPHERE,
}

MIGRATED_ON_CSI_NODES = frozenset({AWS_EBS, PORTWORX, GCE_PD, AZURE_DISK, CINDER})
"""Plugins whose CSI migration is on in kube-scheduler v1.37 (the CSIMigration* gates are locked)."""

_UNSPECIFIED = "UNSPECIFIED"
_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_ZONE = "topology.kubernetes.io/zone"
_EBS_VOLUME = re.compile(r"^vol-[^/]*$")


class TranslationError(ValueError):
    """The translator refuses the volume (the message is csi-translation-lib's)."""


def in_tree_plugin_of(source: VolumeSource | None) -> str | None:
    """The in-tree plugin a migratable source belongs to; None for any other source."""
    return None if source is None else _PLUGIN_OF_KIND.get(type(source))


def csi_driver_of_plugin(plugin: str) -> str | None:
    """The CSI driver that replaced in-tree `plugin` (None for a plugin with no migration)."""
    return _DRIVERS.get(plugin)


def _ebs_volume_id(kubernetes_id: str) -> str:
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id  # a bare volume ID
    try:
        parts = urlsplit(kubernetes_id)
    except ValueError as problem:
        raise TranslationError(
            "failed to translate Kubernetes ID to EBS Volume ID "
            f"Invalid disk name ({kubernetes_id}): {problem}"
        ) from None
    volume_id = parts.path.strip("/")
    if not _EBS_VOLUME.match(volume_id):
        raise TranslationError(
            "failed to translate Kubernetes ID to EBS Volume ID "
            f"Invalid format for AWS volume ({kubernetes_id})"
        )
    return volume_id


def _azure_disk_handle(source: AzureDiskSource) -> str:
    if source.kind is not None and source.kind.lower() != "managed":
        raise TranslationError(f"kind({source.kind}) is not supported in csi migration")
    return source.disk_uri


def _gce_disk_path(location: str, pd_name: str) -> str:
    return f"projects/{_UNSPECIFIED}/{location}/disks/{pd_name}"


def inline_volume_handle(source: VolumeSource) -> str:
    """The CSI volume handle of a migrated in-line volume; raises `TranslationError`."""
    if isinstance(source, GCEPersistentDiskSource):
        return _gce_disk_path(f"zones/{_UNSPECIFIED}", source.pd_name)
    if isinstance(source, AWSElasticBlockStoreSource):
        return _ebs_volume_id(source.volume_id)
    if isinstance(source, AzureDiskSource):
        return _azure_disk_handle(source)
    if isinstance(source, CinderSource | PortworxSource):
        return source.volume_id
    raise TranslationError("could not find in-tree plugin translation logic")


def _gce_region(zones: list[str]) -> str:
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError(
                "failed to get region from zones: zone in unexpected format, "
                f"expected: {{locale}}-{{region}}-{{zone}}, got: {zone}"
            )
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        # The translator prints its set of regions the way Go prints a map: sorted keys.
        found = " ".join(f"{region}:{{}}" for region in sorted(regions))
        raise TranslationError(
            f"failed to get region from zones: multiple or no regions gotten from zones, "
            f"got: map[{found}]"
        )
    return regions.pop()


def persistent_volume_handle(source: VolumeSource, labels: Mapping[str, str]) -> str:
    """The CSI volume handle of a migrated PersistentVolume; raises `TranslationError`.

    A GCE PD volume's handle names its zone (or region, for a regional disk) from the
    volume's zone label, beta key first.
    """
    if isinstance(source, GCEPersistentDiskSource):
        zones = (labels.get(_BETA_ZONE) or labels.get(_ZONE) or "").split("__")
        if len(zones) == 1 and zones[0]:
            return _gce_disk_path(f"zones/{zones[0]}", source.pd_name)
        if len(zones) > 1:
            return _gce_disk_path(f"regions/{_gce_region(zones)}", source.pd_name)
        return _gce_disk_path(f"zones/{_UNSPECIFIED}", source.pd_name)
    return inline_volume_handle(source)
