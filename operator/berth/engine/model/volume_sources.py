"""Where a volume's data lives, as the volume plugins read it from a PV or a pod's in-line volume.

A PersistentVolume and a pod's `spec.volumes[]` entry share the same source kinds. The
scheduler cares about only a few of them: CSI (NodeVolumeLimits counts attachments per
driver), the in-tree block disks that VolumeRestrictions checks for conflicting mounts
(GCE PD, AWS EBS, iSCSI, RBD) and the in-tree kinds that CSI migration translates into a
CSI driver (GCE PD, AWS EBS, Azure Disk, Azure File, Cinder, Portworx, vSphere). Every
other source is kept by its kind's name only, so that "some other volume" stays visible.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from berth.engine.model.parsing import RawObject, as_bool, as_int, as_list, as_map, as_str

__all__ = [
    "AWSElasticBlockStoreSource",
    "AzureDiskSource",
    "AzureFileSource",
    "CSISource",
    "CinderSource",
    "GCEPersistentDiskSource",
    "ISCSISource",
    "OtherSource",
    "PortworxSource",
    "RBDSource",
    "VolumeSource",
    "VsphereSource",
    "parse_volume_source",
]


@dataclass(frozen=True, slots=True)
class CSISource:
    """`csi`: on a PV the driver and its volume handle; in-line (pod) volumes have no handle."""

    driver: str
    volume_handle: str = ""
    read_only: bool = False
    fs_type: str = ""


@dataclass(frozen=True, slots=True)
class GCEPersistentDiskSource:
    pd_name: str
    partition: int = 0
    read_only: bool = False
    fs_type: str = ""


@dataclass(frozen=True, slots=True)
class AWSElasticBlockStoreSource:
    volume_id: str
    partition: int = 0
    read_only: bool = False
    fs_type: str = ""


@dataclass(frozen=True, slots=True)
class AzureDiskSource:
    disk_name: str
    disk_uri: str
    kind: str | None = None  # None: unset (the API server defaults it to Shared on create)
    caching_mode: str | None = None
    fs_type: str | None = None
    read_only: bool | None = None


@dataclass(frozen=True, slots=True)
class AzureFileSource:
    share_name: str
    secret_name: str
    secret_namespace: str | None = None  # PV only
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class CinderSource:
    volume_id: str
    read_only: bool = False
    fs_type: str = ""


@dataclass(frozen=True, slots=True)
class PortworxSource:
    volume_id: str
    read_only: bool = False
    fs_type: str = ""


@dataclass(frozen=True, slots=True)
class VsphereSource:
    volume_path: str
    fs_type: str = ""
    storage_policy_name: str = ""


@dataclass(frozen=True, slots=True)
class ISCSISource:
    target_portal: str
    iqn: str
    lun: int
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class RBDSource:
    monitors: tuple[str, ...]
    image: str
    pool: str  # defaulted to "rbd" as the API server does
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class OtherSource:
    """Any source kind the scheduler does not look into (hostPath, nfs, local, configMap...)."""

    kind: str  # the field name, e.g. "hostPath"


VolumeSource = (
    CSISource
    | GCEPersistentDiskSource
    | AWSElasticBlockStoreSource
    | AzureDiskSource
    | AzureFileSource
    | CinderSource
    | PortworxSource
    | VsphereSource
    | ISCSISource
    | RBDSource
    | OtherSource
)

# Fields of a volume entry that are not its source.
_NOT_SOURCES = frozenset({"name"})


def _csi(raw: RawObject, field: str) -> CSISource:
    return CSISource(
        driver=as_str(raw.get("driver"), f"{field}.driver"),
        volume_handle=as_str(raw.get("volumeHandle"), f"{field}.volumeHandle"),
        read_only=as_bool(raw.get("readOnly"), f"{field}.readOnly"),
        fs_type=as_str(raw.get("fsType"), f"{field}.fsType"),
    )


def _gce_pd(raw: RawObject, field: str) -> GCEPersistentDiskSource:
    return GCEPersistentDiskSource(
        pd_name=as_str(raw.get("pdName"), f"{field}.pdName"),
        partition=as_int(raw.get("partition"), f"{field}.partition", bits=32),
        read_only=as_bool(raw.get("readOnly"), f"{field}.readOnly"),
        fs_type=as_str(raw.get("fsType"), f"{field}.fsType"),
    )


def _aws_ebs(raw: RawObject, field: str) -> AWSElasticBlockStoreSource:
    return AWSElasticBlockStoreSource(
        volume_id=as_str(raw.get("volumeID"), f"{field}.volumeID"),
        partition=as_int(raw.get("partition"), f"{field}.partition", bits=32),
        read_only=as_bool(raw.get("readOnly"), f"{field}.readOnly"),
        fs_type=as_str(raw.get("fsType"), f"{field}.fsType"),
    )


def _optional_str(raw: object, field: str) -> str | None:
    return None if raw is None else as_str(raw, field)


def _azure_disk(raw: RawObject, field: str) -> AzureDiskSource:
    read_only = raw.get("readOnly")
    return AzureDiskSource(
        disk_name=as_str(raw.get("diskName"), f"{field}.diskName"),
        disk_uri=as_str(raw.get("diskURI"), f"{field}.diskURI"),
        kind=_optional_str(raw.get("kind"), f"{field}.kind"),
        caching_mode=_optional_str(raw.get("cachingMode"), f"{field}.cachingMode"),
        fs_type=_optional_str(raw.get("fsType"), f"{field}.fsType"),
        read_only=None if read_only is None else as_bool(read_only, f"{field}.readOnly"),
    )


def _azure_file(raw: RawObject, field: str) -> AzureFileSource:
    return AzureFileSource(
        share_name=as_str(raw.get("shareName"), f"{field}.shareName"),
        secret_name=as_str(raw.get("secretName"), f"{field}.secretName"),
        secret_namespace=_optional_str(raw.get("secretNamespace"), f"{field}.secretNamespace"),
        read_only=as_bool(raw.get("readOnly"), f"{field}.readOnly"),
    )


def _by_volume_id(
    source: type[CinderSource] | type[PortworxSource],
) -> Callable[[RawObject, str], CinderSource | PortworxSource]:
    """Cinder and Portworx volumes are the same three fields."""

    def parse(raw: RawObject, field: str) -> CinderSource | PortworxSource:
        return source(
            volume_id=as_str(raw.get("volumeID"), f"{field}.volumeID"),
            read_only=as_bool(raw.get("readOnly"), f"{field}.readOnly"),
            fs_type=as_str(raw.get("fsType"), f"{field}.fsType"),
        )

    return parse


def _vsphere(raw: RawObject, field: str) -> VsphereSource:
    return VsphereSource(
        volume_path=as_str(raw.get("volumePath"), f"{field}.volumePath"),
        fs_type=as_str(raw.get("fsType"), f"{field}.fsType"),
        storage_policy_name=as_str(raw.get("storagePolicyName"), f"{field}.storagePolicyName"),
    )


def _iscsi(raw: RawObject, field: str) -> ISCSISource:
    return ISCSISource(
        target_portal=as_str(raw.get("targetPortal"), f"{field}.targetPortal"),
        iqn=as_str(raw.get("iqn"), f"{field}.iqn"),
        lun=as_int(raw.get("lun"), f"{field}.lun", bits=32),
        read_only=as_bool(raw.get("readOnly"), f"{field}.readOnly"),
    )


def _rbd(raw: RawObject, field: str) -> RBDSource:
    monitors = tuple(
        as_str(m, f"{field}.monitors[{i}]")
        for i, m in enumerate(as_list(raw.get("monitors"), f"{field}.monitors"))
    )
    return RBDSource(
        monitors=monitors,
        image=as_str(raw.get("image"), f"{field}.image"),
        pool=as_str(raw.get("pool"), f"{field}.pool") or "rbd",
        read_only=as_bool(raw.get("readOnly"), f"{field}.readOnly"),
    )


_PARSERS: dict[str, Callable[[RawObject, str], VolumeSource]] = {
    "csi": _csi,
    "gcePersistentDisk": _gce_pd,
    "awsElasticBlockStore": _aws_ebs,
    "azureDisk": _azure_disk,
    "azureFile": _azure_file,
    "cinder": _by_volume_id(CinderSource),
    "portworxVolume": _by_volume_id(PortworxSource),
    "vsphereVolume": _vsphere,
    "iscsi": _iscsi,
    "rbd": _rbd,
}


def parse_volume_source(
    raw: RawObject, field: str, *, ignore: frozenset[str] = frozenset()
) -> VolumeSource | None:
    """The one source set in `raw` (a PV spec or a volume entry); None when there is none.

    `ignore` names sibling fields of the spec that are not sources. `field` is the path of
    `raw` itself; the source's own fields are reported below it.
    """
    for key, value in raw.items():
        if key in ignore or key in _NOT_SOURCES or value is None:
            continue
        where = f"{field}.{key}" if field else key
        parser = _PARSERS.get(key)
        if parser is not None:
            return parser(as_map(value, where), where)
        return OtherSource(kind=key)
    return None
