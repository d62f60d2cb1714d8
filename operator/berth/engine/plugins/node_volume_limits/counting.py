"""Which attachable volumes a pod brings to a node, each named uniquely, as CSILimits counts them.

A volume counts under a CSI driver when it is a claim bound to a CSI volume (or to an
in-tree volume migrated to CSI), a claim not bound yet whose class provisions through
a driver (named after the claim, so that two pods of one claim count it once), or an
in-line in-tree volume migrated to CSI. Migration applies only on nodes with a CSINode,
so a pod's volumes are resolved once per answer to "does the node have a CSINode".
"""

from __future__ import annotations

from collections.abc import Iterable

from berth.engine.cluster import ClusterState
from berth.engine.csi_translation.handles import (
    MIGRATED_ON_CSI_NODES,
    TranslationError,
    csi_driver_of_plugin,
    in_tree_plugin_of,
    inline_volume_handle,
    persistent_volume_handle,
)
from berth.engine.framework.status import Status, error, unresolvable
from berth.engine.model.csi import VolumeAttachment
from berth.engine.model.pod import Pod
from berth.engine.model.storage import PersistentVolumeClaim
from berth.engine.model.volume_sources import CSISource
from berth.engine.volume_lookups import claim_not_found

__all__ = ["VolumeKey", "attachable_volumes", "attached_by_attachments"]

VolumeKey = tuple[str, str, bool]
"""(driver, volume handle, whether the handle stands for a claim not bound yet)."""


def _is_for_pod(claim: PersistentVolumeClaim, pod: Pod) -> bool:
    return claim.namespace == pod.namespace and claim.metadata.controller_uid == pod.uid


def _claim_volume(
    cluster: ClusterState, claim: PersistentVolumeClaim, *, migrated: bool
) -> VolumeKey | None:
    """The claim's volume as (driver, handle); None when it does not count."""
    storage = cluster.storage
    bound = storage.volume(claim.volume_name) if claim.volume_name else None
    if bound is None:
        # Not bound (or bound to a volume we do not see): count by what its class provisions.
        class_name = claim.storage_class
        storage_class = storage.storage_class(class_name) if class_name else None
        if storage_class is None:
            return None  # without a class the claim binds before scheduling: nothing to count
        provisioner = storage_class.provisioner
        driver = csi_driver_of_plugin(provisioner)
        if driver is not None:
            if not migrated or provisioner not in MIGRATED_ON_CSI_NODES:
                return None
            provisioner = driver
        if not provisioner:
            return None
        return (provisioner, f"{claim.namespace}/{claim.name}", True)
    source = bound.source
    if isinstance(source, CSISource):
        return (
            (source.driver, source.volume_handle, False)
            if source.driver and source.volume_handle
            else None
        )
    plugin = in_tree_plugin_of(source)
    if plugin is None or source is None or not migrated or plugin not in MIGRATED_ON_CSI_NODES:
        return None
    try:
        handle = persistent_volume_handle(source, bound.labels)
    except TranslationError:
        return None
    driver = csi_driver_of_plugin(plugin)
    return (driver, handle, False) if driver and handle else None


def attachable_volumes(
    cluster: ClusterState, pod: Pod, *, migrated: bool, new_pod: bool
) -> dict[VolumeKey, str] | Status:
    """The pod's counted volumes (key -> driver), or why they cannot be told.

    For the pod being scheduled a missing claim is UnschedulableAndUnresolvable; a
    placed pod's missing claim is simply not counted. A generic ephemeral volume's
    claim that the pod does not own, or an in-line volume the translator refuses, is an
    error either way.
    """
    found: dict[VolumeKey, str] = {}
    storage = cluster.storage
    for volume in pod.volumes:
        if volume.claim_name:
            claim = storage.claim(pod.namespace, volume.claim_name)
            if claim is None:
                if new_pod:
                    return unresolvable(
                        f"looking up PVC {pod.namespace}/{volume.claim_name}: "
                        + claim_not_found(volume.claim_name)
                    )
                continue
            if volume.ephemeral and not _is_for_pod(claim, pod):
                return error(
                    f"PVC {claim.namespace}/{claim.name} was not created for pod "
                    f"{pod.namespace}/{pod.name} (pod is not owner)"
                )
            key = _claim_volume(cluster, claim, migrated=migrated)
            if key is not None:
                found[key] = key[0]
            continue
        plugin = in_tree_plugin_of(volume.source)
        if plugin is None or volume.source is None:
            continue
        if not migrated or plugin not in MIGRATED_ON_CSI_NODES:
            continue
        try:
            handle = inline_volume_handle(volume.source)
        except TranslationError as problem:
            return error(f"converting volume({volume.name}) from inline to csi: {problem}")
        driver = csi_driver_of_plugin(plugin)
        assert driver is not None  # every migratable plugin has one
        found[(driver, handle, False)] = driver
    return found


def attached_by_attachments(
    cluster: ClusterState, attachments: Iterable[VolumeAttachment]
) -> dict[VolumeKey, str]:
    """Volumes a node's VolumeAttachments hold: CSI persistent volumes we know, by attacher."""
    found: dict[VolumeKey, str] = {}
    for attachment in attachments:
        if not attachment.attacher or attachment.persistent_volume_name is None:
            continue
        volume = cluster.storage.volume(attachment.persistent_volume_name)
        if volume is None or not isinstance(volume.source, CSISource):
            continue
        found[(attachment.attacher, volume.source.volume_handle, False)] = attachment.attacher
    return found
