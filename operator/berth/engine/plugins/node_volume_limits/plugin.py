"""NodeVolumeLimits (kube-scheduler's CSILimits): a node takes no more volumes of a CSI driver
than its CSINode allows (`allocatable.count`).

Per node, the volumes already there are those of its pods and its VolumeAttachments,
each counted once; the pod's own volumes that are already there add nothing. The pod's
volumes are resolved at most twice per Filter call (with and without in-tree migration,
which applies only on nodes with a CSINode), and a placed pod's once. Nodes without a
CSINode have no limits and share one verdict; on the others only pods that hold claims
or in-line disks (`VolumeUsage.pods_with_volumes`) are looked at.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import ClusterEventWithHint
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import PluginArgs, PreFilterResult
from berth.engine.framework.status import SKIP, SUCCESS, Code, Status
from berth.engine.framework.verdicts import Verdicts, accept_all
from berth.engine.model.csi import CSINode
from berth.engine.model.pod import Pod
from berth.engine.plugins.node_volume_limits.counting import (
    VolumeKey,
    attachable_volumes,
    attached_by_attachments,
)
from berth.engine.plugins.node_volume_limits.hints import events_to_register, may_count

__all__ = ["REASON", "NodeVolumeLimits", "driver_not_installed", "new_plugin"]

REASON = "node(s) exceed max volume count"


def driver_not_installed(driver: str) -> str:
    return f"{driver} CSI driver is not installed on the node"


@dataclass(slots=True)
class _Judge:
    """One Filter call's work: the pod's volumes per migration answer, placed pods' volumes."""

    cluster: ClusterState
    pod: Pod
    wanted: dict[bool, dict[VolumeKey, str] | Status] = field(default_factory=dict)
    placed: dict[str, dict[VolumeKey, str] | Status] = field(default_factory=dict)

    def wanted_volumes(self, *, migrated: bool) -> dict[VolumeKey, str] | Status:
        volumes = self.wanted.get(migrated)
        if volumes is None:
            volumes = attachable_volumes(self.cluster, self.pod, migrated=migrated, new_pod=True)
            self.wanted[migrated] = volumes
        return volumes

    def placed_volumes(self, pod: Pod) -> dict[VolumeKey, str] | Status:
        volumes = self.placed.get(pod.uid)
        if volumes is None:
            # Limits exist only on nodes with a CSINode, where migration applies.
            volumes = attachable_volumes(self.cluster, pod, migrated=True, new_pod=False)
            self.placed[pod.uid] = volumes
        return volumes

    def missing_driver(self, drivers: set[str], csi_node: CSINode | None) -> str | None:
        """The first of `drivers` whose CSIDriver refuses nodes without it, missing here."""
        for driver in sorted(drivers):
            spec = self.cluster.storage.csi_driver(driver)
            if spec is None or not spec.prevent_pod_scheduling_if_missing:
                continue
            if csi_node is None or csi_node.driver(driver) is None:
                return driver
        return None

    def judge_without_csi_node(self) -> Status:
        """The verdict on every node without a CSINode: no limits, no migration."""
        wanted = self.wanted_volumes(migrated=False)
        if isinstance(wanted, Status):
            return wanted
        missing = self.missing_driver(set(wanted.values()), None)
        if missing is not None:
            return Status(Code.UNSCHEDULABLE, (driver_not_installed(missing),))
        return SUCCESS

    def judge(self, slot: int, csi_node: CSINode) -> Status:
        """The verdict on one node with a CSINode, in kube-scheduler's order of checks."""
        wanted = self.wanted_volumes(migrated=True)
        if isinstance(wanted, Status):
            return wanted
        if not wanted:
            return SUCCESS
        missing = self.missing_driver(set(wanted.values()), csi_node)
        if missing is not None:
            return Status(Code.UNSCHEDULABLE, (driver_not_installed(missing),))
        limits = csi_node.volume_limits()
        if not limits:
            return SUCCESS
        held: dict[VolumeKey, str] = {}
        if self.cluster.volume_usage.pods_with_volumes[slot]:
            for placed in self.cluster.pods_on(slot).values():
                volumes = self.placed_volumes(placed)
                if isinstance(volumes, Status):
                    return volumes
                held.update(volumes)
        new = {key: driver for key, driver in wanted.items() if key not in held}
        in_use = Counter(held.values())
        attachments = self.cluster.storage.attachments_on(csi_node.name)
        for key, driver in attached_by_attachments(self.cluster, attachments).items():
            if key not in held:
                in_use[driver] += 1
        for driver, count in Counter(new.values()).items():
            limit = limits.get(driver)
            if limit is not None and in_use[driver] + count > limit:
                return Status(Code.UNSCHEDULABLE, (REASON,))
        return SUCCESS


def _verdicts(statuses: list[Status]) -> Verdicts:
    reasons: list[str] = []
    codes = np.zeros(len(statuses), dtype=np.int8)
    bits = np.zeros(len(statuses), dtype=np.uint64)
    for index, status in enumerate(statuses):
        if status.is_success:
            continue
        message = status.message
        if message not in reasons:
            reasons.append(message)
        codes[index] = np.int8(status.code)
        bits[index] = np.uint64(1) << np.uint64(reasons.index(message))
    return Verdicts(codes, bits, tuple(reasons))


class NodeVolumeLimits:
    name = names.NODE_VOLUME_LIMITS

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        return PreFilterResult(SUCCESS if may_count(pod) else SKIP)

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        if not may_count(pod):
            return accept_all(slots.size)
        cluster = state.cluster
        judge = _Judge(cluster, pod)
        statuses: list[Status] = []
        without: Status | None = None  # one verdict for all nodes without a CSINode
        for slot in slots.tolist():
            csi_node = cluster.storage.csi_node(cluster.node_at(slot).name)
            if csi_node is not None:
                statuses.append(judge.judge(slot, csi_node))
                continue
            if without is None:
                without = judge.judge_without_csi_node()
            statuses.append(without)
        if all(status.is_success for status in statuses):
            return accept_all(slots.size)
        return _verdicts(statuses)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return events_to_register()


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> NodeVolumeLimits:
    """No args (kube-scheduler ignores any given to an argless plugin)."""
    return NodeVolumeLimits()
