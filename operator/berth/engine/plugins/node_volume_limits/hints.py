"""NodeVolumeLimits' cluster events and the hints that tell whether one may let a rejected pod in."""

from __future__ import annotations

from berth.engine.csi_translation.handles import (
    MIGRATED_ON_CSI_NODES,
    TranslationError,
    csi_driver_of_plugin,
    in_tree_plugin_of,
    inline_volume_handle,
)
from berth.engine.framework.events import (
    Action,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from berth.engine.model.csi import CSINode, VolumeAttachment
from berth.engine.model.pod import Pod
from berth.engine.volume_lookups import requeue_for_pods_claim

__all__ = ["events_to_register", "may_count"]


def may_count(pod: Pod) -> bool:
    """The pod has a volume that may count against a limit: a claim or a migratable in-line one."""
    return any(
        volume.claim_name or in_tree_plugin_of(volume.source) is not None for volume in pod.volumes
    )


def _limit_raised(pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(old, CSINode) or not isinstance(new, CSINode):
        return QueueingHint.QUEUE
    before = {driver.name: driver.allocatable_count or 0 for driver in old.drivers}
    for driver in new.drivers:
        if (driver.allocatable_count or 0) > before.get(driver.name, 0):
            return QueueingHint.QUEUE
    return QueueingHint.SKIP


def _deleted_pod_held_volumes(pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(old, Pod):
        return QueueingHint.QUEUE
    if not old.node_name and not old.nominated_node_name:
        return QueueingHint.SKIP
    return QueueingHint.QUEUE if may_count(old) else QueueingHint.SKIP


def _attachment_deleted(pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(old, VolumeAttachment):
        return QueueingHint.QUEUE
    for volume in pod.volumes:
        if volume.claim_name and not volume.ephemeral:
            return QueueingHint.QUEUE
        plugin = in_tree_plugin_of(volume.source)
        if plugin is None or volume.source is None:
            continue
        if plugin in MIGRATED_ON_CSI_NODES:
            try:
                inline_volume_handle(volume.source)
            except TranslationError:
                return QueueingHint.QUEUE  # kube-scheduler requeues when it cannot tell
        if csi_driver_of_plugin(plugin) == old.attacher:
            return QueueingHint.QUEUE
    return QueueingHint.SKIP


def events_to_register() -> list[ClusterEventWithHint]:
    return [
        # Any new CSINode may bring the limits a rejected pod needs.
        ClusterEventWithHint(ClusterEvent(Resource.CSI_NODE, Action.ADD)),
        ClusterEventWithHint(ClusterEvent(Resource.CSI_NODE, Action.UPDATE), _limit_raised),
        ClusterEventWithHint(
            ClusterEvent(Resource.ASSIGNED_POD, Action.DELETE), _deleted_pod_held_volumes
        ),
        ClusterEventWithHint(
            ClusterEvent(Resource.PERSISTENT_VOLUME_CLAIM, Action.ADD),
            requeue_for_pods_claim(with_ephemeral=True),
        ),
        ClusterEventWithHint(
            ClusterEvent(Resource.VOLUME_ATTACHMENT, Action.DELETE), _attachment_deleted
        ),
    ]
