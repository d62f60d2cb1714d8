"""VolumeBinding's Filter over a batch of nodes (upstream `FindPodVolumes`, node by node).

For each node kube-scheduler checks, independently:

1. the bound claims, in order: the first whose volume is gone stops the check ("bound to
   non-existent pv(s)"), the first whose volume's node affinity the node fails stops it
   ("didn't match PersistentVolume's node affinity"), an in-tree volume judged in its CSI
   form where the node has its plugin migrated (a translator error is the node's error);
2. the WaitForFirstConsumer claims: one already given to another node for provisioning
   rejects the node at once; the others, smallest request first, each take the smallest
   matching static volume the node reaches (a volume pre-bound to the claim wins, and
   fails the claim where the node does not reach it) not taken by an earlier claim of the
   pod; the claims left over, and those selected for this node, must be provisionable
   here: a class with a provisioner, its allowed topologies, and, when the CSI driver
   publishes capacity, a CSIStorageCapacity reaching the node with room for the request.

Everything that does not depend on the node is decided once per claim; what does (node
affinity, topologies, capacities, which volume an earlier claim took) is a mask over the
batch. The per-node choices are kept for Reserve and Score (`BatchVolumes.at`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.storage import StorageObjects
from berth.engine.framework.status import Code
from berth.engine.framework.verdicts import Verdicts
from berth.engine.model.csi import CSIStorageCapacity
from berth.engine.model.storage import PersistentVolume, PersistentVolumeClaim
from berth.engine.model.storage_class import NOT_SUPPORTED_PROVISIONER
from berth.engine.nodematch import (
    node_label_selector_mask,
    topology_terms_mask,
    volume_node_affinity_mask,
)
from berth.engine.plugins.volume_binding.claims import PodClaims
from berth.engine.plugins.volume_binding.migrated import bound_volume_reach

__all__ = [
    "REASON_BIND_CONFLICT",
    "REASON_NODE_CONFLICT",
    "REASON_NOT_ENOUGH_SPACE",
    "REASON_PV_NOT_EXIST",
    "BatchVolumes",
    "PodVolumes",
    "find_pod_volumes",
    "matching_candidates",
]

REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"

# Bit order is the order upstream appends the reasons in.
_REASONS = (
    REASON_NODE_CONFLICT,
    REASON_BIND_CONFLICT,
    REASON_NOT_ENOUGH_SPACE,
    REASON_PV_NOT_EXIST,
)
_NODE, _BIND, _SPACE, _GONE = (np.uint64(1) << np.uint64(bit) for bit in range(4))

Mask = NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class PodVolumes:
    """What the pod's unbound claims get on one node: static volumes, and provisioning
    (with the capacity found for it, None when capacity is not tracked)."""

    static: tuple[tuple[PersistentVolumeClaim, PersistentVolume], ...] = ()
    provisions: tuple[tuple[PersistentVolumeClaim, CSIStorageCapacity | None], ...] = ()


@dataclass(slots=True)
class BatchVolumes:
    """The per-node outcome of one Filter batch, as arrays over its `slots`."""

    slots: NodeSlots
    verdicts: Verdicts
    matched: tuple[PersistentVolumeClaim, ...] = ()  # claims looked up among static volumes
    candidates: list[PersistentVolume] = field(default_factory=list)
    chosen: NDArray[np.intp] = field(default_factory=lambda: np.zeros((0, 0), dtype=np.intp))
    provisioned: tuple[PersistentVolumeClaim, ...] = ()  # selected claims, then `matched`
    provisions: NDArray[np.bool_] = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))
    capacities: list[CSIStorageCapacity] = field(default_factory=list)
    capacity_chosen: NDArray[np.intp] = field(
        default_factory=lambda: np.zeros((0, 0), dtype=np.intp)
    )

    def at(self, column: int) -> PodVolumes:
        """The volumes of the node in this batch's `column` (a node that passed)."""
        static = tuple(
            (claim, self.candidates[int(self.chosen[row, column])])
            for row, claim in enumerate(self.matched)
            if self.chosen[row, column] >= 0
        )
        provisions = []
        for row, claim in enumerate(self.provisioned):
            if self.provisions[row, column]:
                index = int(self.capacity_chosen[row, column])
                provisions.append((claim, self.capacities[index] if index >= 0 else None))
        return PodVolumes(static, tuple(provisions))


def matching_candidates(
    claim: PersistentVolumeClaim, volumes: Sequence[PersistentVolume]
) -> tuple[list[PersistentVolume], list[PersistentVolume]]:
    """The volumes `claim` could take on some node (upstream `FindMatchingVolume` without
    the node): those pre-bound to it, in order, and the others, smallest first."""
    prebound: list[PersistentVolume] = []
    eligible: list[PersistentVolume] = []
    for volume in volumes:
        bound_here = volume.is_bound_to(claim)
        if volume.claim_ref is not None and not bound_here:
            continue
        if volume.capacity < claim.requested or volume.volume_mode != claim.volume_mode:
            continue
        if volume.volume_attributes_class_name != claim.volume_attributes_class_name:
            continue
        if volume.metadata.deleting:
            continue
        if bound_here:
            prebound.append(volume)
            continue
        if volume.phase != "Available":
            continue  # it will become available; binding it now would just conflict
        if claim.selector is not None and not claim.selector.matches(volume.labels):
            continue
        if volume.storage_class != claim.storage_class:
            continue
        if not set(claim.access_modes) <= set(volume.access_modes):
            continue
        eligible.append(volume)
    eligible.sort(key=lambda volume: volume.capacity)  # stable: the first of equals wins
    return prebound, eligible


class _Candidates:
    """The volumes some claim of the pod may take, each with its reach over the batch and
    the nodes where an earlier claim took it."""

    def __init__(self, cluster: ClusterState, slots: NodeSlots) -> None:
        self._cluster = cluster
        self._slots = slots
        self.volumes: list[PersistentVolume] = []
        self._index: dict[str, int] = {}
        self.reach: list[Mask] = []
        self.taken: list[Mask] = []

    def index(self, volume: PersistentVolume) -> int:
        found = self._index.get(volume.name)
        if found is None:
            found = self._index[volume.name] = len(self.volumes)
            self.volumes.append(volume)
            self.reach.append(
                volume_node_affinity_mask(self._cluster, volume.node_affinity, self._slots)
            )
            self.taken.append(np.zeros(self._slots.size, dtype=bool))
        return found


def _choose_volumes(
    claims: Sequence[PersistentVolumeClaim],
    pod_claims: PodClaims,
    candidates: _Candidates,
    count: int,
) -> NDArray[np.intp]:
    chosen = np.full((len(claims), count), -1, dtype=np.intp)
    for row, claim in enumerate(claims):
        prebound, eligible = matching_candidates(
            claim, pod_claims.volumes_by_class.get(claim.storage_class, ())
        )
        result = chosen[row]
        decided = np.zeros(count, dtype=bool)
        for volume in prebound:
            index = candidates.index(volume)
            free = ~decided & ~candidates.taken[index]
            result[free & candidates.reach[index]] = index  # elsewhere: no match at all
            decided |= free
        for volume in eligible:
            if decided.all():
                break
            index = candidates.index(volume)
            hit = ~decided & ~candidates.taken[index] & candidates.reach[index]
            result[hit] = index
            decided |= hit
        for index in np.unique(result[result >= 0]).tolist():
            candidates.taken[index] |= result == index
    return chosen


def _capacity_for(
    cluster: ClusterState,
    storage: StorageObjects,
    claim: PersistentVolumeClaim,
    class_name: str,
    provisioner: str,
    slots: NodeSlots,
    capacities: list[CSIStorageCapacity],
) -> tuple[Mask, NDArray[np.intp]]:
    """Per node: enough capacity for `claim`, and which capacity object says so (-1: none
    was consulted, because the request or the driver does not ask for it)."""
    count = slots.size
    chosen = np.full(count, -1, dtype=np.intp)
    driver = storage.csi_driver(provisioner)
    if not claim.requested or driver is None or not driver.storage_capacity:
        return np.ones(count, dtype=bool), chosen
    found = np.zeros(count, dtype=bool)
    for capacity in storage.capacities_of_class(class_name):
        if not capacity.fits(claim.requested):
            continue
        reach = node_label_selector_mask(cluster, capacity.node_topology, slots) & ~found
        if reach.any():
            chosen[reach] = len(capacities)
            capacities.append(capacity)
            found |= reach
    return found, chosen


def find_pod_volumes(
    cluster: ClusterState, storage: StorageObjects, pod_claims: PodClaims, slots: NodeSlots
) -> BatchVolumes:
    count = slots.size
    bits = np.zeros(count, dtype=np.uint64)
    errors: dict[str, Mask] = {}

    # 1. Bound claims.
    still = np.ones(count, dtype=bool)
    failed = np.zeros(count, dtype=bool)  # nodes where translating a volume to CSI failed
    for _claim, volume in pod_claims.bound:
        if volume is None:
            bits[still] |= _GONE
            break
        reached, problems = bound_volume_reach(cluster, storage, volume, slots)
        for message, where in problems.items():
            hit = where & still
            errors[message] = errors.get(message, np.zeros(count, dtype=bool)) | hit
            failed |= hit
            still &= ~hit
        bits[still & ~reached] |= _NODE
        still &= reached

    batch = BatchVolumes(slots=slots, verdicts=_verdicts(bits, errors))
    if not pod_claims.delayed:
        return batch

    # 2. Claims the scheduler binds or provisions.
    selected = [claim for claim in pod_claims.delayed if claim.selected_node is not None]
    matched = sorted(
        (claim for claim in pod_claims.delayed if claim.selected_node is None),
        key=lambda claim: claim.requested,
    )
    elsewhere = np.zeros(count, dtype=bool)
    for claim in selected:
        elsewhere |= slots != _slot_or_none(cluster, claim.selected_node)
    candidates = _Candidates(cluster, slots)
    chosen = _choose_volumes(matched, pod_claims, candidates, count)

    provisioned = (*selected, *matched)
    provisions = np.zeros((len(provisioned), count), dtype=bool)
    provisions[: len(selected)] = True
    provisions[len(selected) :] = chosen < 0
    provisions &= ~elsewhere
    capacity_chosen = np.full((len(provisioned), count), -1, dtype=np.intp)
    capacities: list[CSIStorageCapacity] = []
    unbound_failed = elsewhere.copy()
    open_nodes = ~elsewhere & ~failed  # upstream stops at a node's error
    for row, claim in enumerate(provisioned):
        asked = open_nodes & provisions[row]
        if not asked.any():
            continue
        class_name = claim.storage_class
        storage_class = storage.storage_class(class_name) if class_name else None
        if storage_class is None:
            message = (
                f'no class for claim "{claim.key}"'
                if not class_name
                else f'failed to find storage class "{class_name}"'
            )
            errors[message] = errors.get(message, np.zeros(count, dtype=bool)) | asked
            open_nodes &= ~asked
            continue
        provisioner = storage_class.provisioner
        if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
            unbound_failed |= asked
            open_nodes &= ~asked
            continue
        outside = asked & ~topology_terms_mask(cluster, storage_class.allowed_topologies, slots)
        unbound_failed |= outside
        open_nodes &= ~outside
        asked &= ~outside
        enough, which = _capacity_for(
            cluster, storage, claim, class_name, provisioner, slots, capacities
        )
        short = asked & ~enough
        bits[short] |= _SPACE
        open_nodes &= ~short
        capacity_chosen[row] = np.where(asked & enough, which, -1)
    bits[unbound_failed] |= _BIND
    batch.verdicts = _verdicts(bits, errors)
    batch.matched = tuple(matched)
    batch.candidates = candidates.volumes
    batch.chosen = chosen
    batch.provisioned = provisioned
    batch.provisions = provisions
    batch.capacities = capacities
    batch.capacity_chosen = capacity_chosen
    return batch


def _slot_or_none(cluster: ClusterState, node_name: str | None) -> int:
    slot = cluster.slot_of(node_name) if node_name is not None else None
    return -1 if slot is None else slot


def _verdicts(bits: NDArray[np.uint64], errors: dict[str, Mask]) -> Verdicts:
    codes = np.where(bits != 0, np.int8(Code.UNSCHEDULABLE_AND_UNRESOLVABLE), np.int8(0)).astype(
        np.int8
    )
    reasons = list(_REASONS)
    for message, where in errors.items():
        # An error on a node replaces whatever the node had been found to lack.
        bit = np.uint64(1) << np.uint64(len(reasons))
        reasons.append(message)
        codes[where] = np.int8(Code.ERROR)
        bits = np.where(where, bit, bits)
    return Verdicts(codes, bits, tuple(reasons))
