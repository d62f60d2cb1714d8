"""VolumeRestrictions: a disk two pods may not mount together, and a ReadWriteOncePod claim in use.

Two checks, as kube-scheduler makes them:
- in-line disks (GCE PD, AWS EBS, iSCSI, Ceph RBD): a node where a placed pod mounts the
  same disk in a conflicting way is refused. Only nodes that hold pods with such volumes
  at all (`VolumeUsage.pods_with_volumes`) are looked at one by one.
- ReadWriteOncePod claims: while any placed pod uses one of the pod's RWOP claims, every
  node is refused as Unschedulable, so that preemption can look for the user to evict.
  PreFilter counts the users from the cluster's claim index; preemption's dry run takes
  victims out of the cluster and runs PreFilter again, which is what kube-scheduler's
  AddPod/RemovePod extensions do to the count.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import (
    Action,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Resource,
)
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import PluginArgs, PreFilterResult
from berth.engine.framework.status import SKIP, SUCCESS, Code, Status
from berth.engine.framework.verdicts import Verdicts, accept_all, combine_first_failure
from berth.engine.model.pod import Pod
from berth.engine.model.storage import AccessMode, PersistentVolumeClaim
from berth.engine.model.volume_sources import (
    AWSElasticBlockStoreSource,
    GCEPersistentDiskSource,
    ISCSISource,
    RBDSource,
)
from berth.engine.volume_lookups import find_claim, requeue_for_pods_claim

__all__ = [
    "REASON_DISK_CONFLICT",
    "REASON_RWOP_CONFLICT",
    "VolumeRestrictions",
    "disks_conflict",
    "new_plugin",
]

REASON_DISK_CONFLICT = "node(s) had no available disk"
REASON_RWOP_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)

RestrictedDisk = GCEPersistentDiskSource | AWSElasticBlockStoreSource | ISCSISource | RBDSource
_RESTRICTED = (GCEPersistentDiskSource, AWSElasticBlockStoreSource, ISCSISource, RBDSource)


def restricted_disks(pod: Pod) -> list[RestrictedDisk]:
    """The pod's in-line disks whose sharing kube-scheduler restricts."""
    return [v.source for v in pod.volumes if isinstance(v.source, _RESTRICTED)]


def _conflict(wanted: RestrictedDisk, used: RestrictedDisk) -> bool:
    both_read_only = wanted.read_only and used.read_only
    if isinstance(wanted, GCEPersistentDiskSource):
        # The same PD may be mounted by many pods only if every mount is read-only.
        return (
            isinstance(used, GCEPersistentDiskSource)
            and wanted.pd_name == used.pd_name
            and not both_read_only
        )
    if isinstance(wanted, AWSElasticBlockStoreSource):
        # An EBS volume attaches to one instance, read-only or not.
        return isinstance(used, AWSElasticBlockStoreSource) and wanted.volume_id == used.volume_id
    if isinstance(wanted, ISCSISource):
        # The same IQN is the same disk, whatever the portal; one read-write mount at most.
        return isinstance(used, ISCSISource) and wanted.iqn == used.iqn and not both_read_only
    # RBD: the same image of the same pool, seen through at least one common monitor.
    return (
        isinstance(used, RBDSource)
        and bool(set(wanted.monitors) & set(used.monitors))
        and wanted.pool == used.pool
        and wanted.image == used.image
        and not both_read_only
    )


def disks_conflict(wanted: Sequence[RestrictedDisk], placed: Iterable[Pod]) -> bool:
    """Some wanted disk conflicts with a volume of one of the `placed` pods."""
    used = [v.source for pod in placed for v in pod.volumes if isinstance(v.source, _RESTRICTED)]
    return any(_conflict(disk, other) for disk in wanted for other in used)


@dataclass(frozen=True, slots=True)
class _Prepared:
    disks: tuple[RestrictedDisk, ...]
    rwop_claims: frozenset[str]  # names of the pod's claims with ReadWriteOncePod
    rwop_in_use: int  # how many of them a placed pod uses


def _prepare(cluster: ClusterState, pod: Pod) -> _Prepared | Status:
    """The pod's restricted disks and RWOP claims in use, or the status of a missing claim."""
    rwop: set[str] = set()
    for volume in pod.volumes:
        if not volume.claim_name or volume.ephemeral:
            continue
        found = find_claim(cluster, pod.namespace, volume.claim_name)
        if not isinstance(found, PersistentVolumeClaim):
            return found
        if AccessMode.READ_WRITE_ONCE_POD in found.access_modes:
            rwop.add(found.name)
    usage = cluster.volume_usage
    in_use = sum(1 for claim in rwop if usage.claim_in_use(pod.namespace, claim))
    return _Prepared(tuple(restricted_disks(pod)), frozenset(rwop), in_use)


def _deleted_pod_may_free_a_volume(pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(old, Pod):
        return QueueingHint.QUEUE
    if old.namespace != pod.namespace:
        return QueueingHint.SKIP
    if disks_conflict(restricted_disks(pod), (old,)):
        return QueueingHint.QUEUE
    # A shared claim may be the ReadWriteOncePod one that kept the pod out; the claim's
    # access mode is not looked up here (kube-scheduler does not either).
    wanted = {v.claim_name for v in pod.volumes if v.claim_name and not v.ephemeral}
    if any(v.claim_name in wanted for v in old.volumes if v.claim_name and not v.ephemeral):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


class VolumeRestrictions:
    name = names.VOLUME_RESTRICTIONS

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        prepared = _prepare(state.cluster, pod)
        if isinstance(prepared, Status):
            return PreFilterResult(prepared)
        if not prepared.disks and prepared.rwop_in_use == 0:
            return PreFilterResult(SKIP)
        state.write(self.name, prepared)
        return PreFilterResult(SUCCESS)

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        # Filter runs only after PreFilter wrote its state (a Skip skips Filter too).
        prepared = state.read(self.name, _Prepared)
        cluster = state.cluster
        disk_conflict = np.zeros(slots.size, dtype=bool)
        if prepared.disks:
            # Only nodes holding some pod with a claim or in-line disk can conflict.
            busy = np.flatnonzero(cluster.volume_usage.pods_with_volumes[slots] > 0)
            for index in busy.tolist():
                placed = cluster.pods_on(int(slots[index])).values()
                disk_conflict[index] = disks_conflict(prepared.disks, placed)
        rwop_taken = np.full(slots.size, prepared.rwop_in_use > 0, dtype=bool)
        if not disk_conflict.any() and not prepared.rwop_in_use:
            return accept_all(slots.size)
        return combine_first_failure(
            [
                (disk_conflict, Code.UNSCHEDULABLE, REASON_DISK_CONFLICT),
                (rwop_taken, Code.UNSCHEDULABLE, REASON_RWOP_CONFLICT),
            ],
            slots.size,
        )

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(Resource.ASSIGNED_POD, Action.DELETE), _deleted_pod_may_free_a_volume
            ),
            ClusterEventWithHint(ClusterEvent(Resource.NODE, Action.ADD)),
            ClusterEventWithHint(
                ClusterEvent(Resource.PERSISTENT_VOLUME_CLAIM, Action.ADD),
                requeue_for_pods_claim(with_ephemeral=False),
            ),
        ]


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> VolumeRestrictions:
    """No args (kube-scheduler ignores any given to an argless plugin)."""
    return VolumeRestrictions()
