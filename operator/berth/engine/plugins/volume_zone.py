"""VolumeZone: a pod whose bound volumes carry zone or region labels goes only where those match.

kube-scheduler reads the topology labels of the PersistentVolumes bound to the pod's
claims (both the GA `topology.kubernetes.io/*` keys and the deprecated
`failure-domain.beta.kubernetes.io/*` ones; a value may list several zones joined by
"__"). A node carrying none of the four labels passes (a single-zone cluster). Unbound
claims of a WaitForFirstConsumer class are left to VolumeBinding; the volume's node
affinity is VolumeBinding's business too.

The filter works on the cluster's label columns: per volume label, one `isin` over the
node rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.cluster.state import MISSING
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
from berth.engine.framework.status import SKIP, SUCCESS, Code, Status, unresolvable
from berth.engine.framework.verdicts import Verdicts, accept_all, reject_where
from berth.engine.model.pod import Pod
from berth.engine.model.storage import PersistentVolume, PersistentVolumeClaim
from berth.engine.model.storage_class import StorageClass
from berth.engine.volume_lookups import (
    find_claim,
    find_storage_class,
    find_volume,
    requeue_for_pods_claim,
)

__all__ = [
    "REASON",
    "TOPOLOGY_LABELS",
    "VolumeTopology",
    "VolumeZone",
    "new_plugin",
    "volume_topologies",
]

REASON = "node(s) had no available volume zone"
NO_VOLUME_NOR_CLASS = "PersistentVolumeClaim had no pv name and storageClass name"
NO_VOLUME_NAME = "PersistentVolume had no name"

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)
_GA_OF = {BETA_ZONE: ZONE, BETA_REGION: REGION}
_ZONE_DELIMITER = "__"


@dataclass(frozen=True, slots=True)
class VolumeTopology:
    """One topology label of a bound volume: the node's value for `key` must be in `values`."""

    volume: str
    key: str
    values: frozenset[str]


def _zones(value: str) -> frozenset[str] | None:
    """The zones a label value lists; None when one of them is empty (the label is ignored)."""
    zones = [zone.strip() for zone in value.split(_ZONE_DELIMITER)]
    return None if any(not zone for zone in zones) else frozenset(zones)


def volume_topologies(volume: PersistentVolume) -> tuple[VolumeTopology, ...]:
    """The volume's topology labels that parse, in kube-scheduler's label order."""
    found = []
    for key in TOPOLOGY_LABELS:
        value = volume.labels.get(key)
        if value is None:
            continue
        zones = _zones(value)
        if zones is not None:
            found.append(VolumeTopology(volume.name, key, zones))
    return tuple(found)


def _bound_topologies(cluster: ClusterState, pod: Pod) -> list[VolumeTopology] | Status:
    topologies: list[VolumeTopology] = []
    for volume in pod.volumes:
        if not volume.claim_name or volume.ephemeral:
            continue
        claim = find_claim(cluster, pod.namespace, volume.claim_name)
        if not isinstance(claim, PersistentVolumeClaim):
            return claim
        if not claim.volume_name:
            class_name = claim.storage_class
            if not class_name:
                return unresolvable(NO_VOLUME_NOR_CLASS)
            storage_class = find_storage_class(cluster, class_name)
            if not isinstance(storage_class, StorageClass):
                return storage_class
            if storage_class.waits_for_first_consumer:
                continue  # VolumeBinding picks the volume (and with it the zone)
            return unresolvable(NO_VOLUME_NAME)
        bound = find_volume(cluster, claim.volume_name)
        if not isinstance(bound, PersistentVolume):
            return bound
        topologies.extend(volume_topologies(bound))
    return topologies


@dataclass(frozen=True, slots=True)
class _Prepared:
    topologies: tuple[VolumeTopology, ...]


def _value_matches(
    cluster: ClusterState, key: str, values: frozenset[str], slots: NodeSlots
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """(node has label `key`, its value is one of `values`) over `slots`."""
    column = cluster.label_column(key)
    ids = column.values[slots]
    allowed = [column.ids[value] for value in values if value in column.ids]
    present: NDArray[np.bool_] = ids != MISSING
    return present, np.isin(ids, allowed)


def zone_mismatch(
    cluster: ClusterState, topologies: tuple[VolumeTopology, ...], slots: NodeSlots
) -> NDArray[np.bool_]:
    """Nodes with some topology label whose value misses one of the volumes' label values."""
    constrained = np.zeros(slots.size, dtype=bool)
    for key in TOPOLOGY_LABELS:
        constrained |= cluster.label_column(key).values[slots] != MISSING
    mismatch = np.zeros(slots.size, dtype=bool)
    for topology in topologies:
        present, matches = _value_matches(cluster, topology.key, topology.values, slots)
        ga_key = _GA_OF.get(topology.key)
        if ga_key is not None:
            # A beta label on the volume is matched against the node's GA label when the
            # node lacks the beta one.
            ga_present, ga_matches = _value_matches(cluster, ga_key, topology.values, slots)
            matches = np.where(present, matches, ga_matches)
            present = present | ga_present
        mismatch |= ~(present & matches)
    result: NDArray[np.bool_] = constrained & mismatch
    return result


def _class_waits_for_consumer(pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(new, StorageClass):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if new.waits_for_first_consumer else QueueingHint.SKIP


def _volume_topology_changed(pod: Pod, old: object, new: object) -> QueueingHint:
    if not isinstance(new, PersistentVolume) or not isinstance(old, PersistentVolume):
        return QueueingHint.QUEUE  # a new volume may be the one the pod waits for
    changed = volume_topologies(old) != volume_topologies(new)
    return QueueingHint.QUEUE if changed else QueueingHint.SKIP


class VolumeZone:
    name = names.VOLUME_ZONE

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        topologies = _bound_topologies(state.cluster, pod)
        if isinstance(topologies, Status):
            return PreFilterResult(topologies)
        if not topologies:
            return PreFilterResult(SKIP)
        state.write(self.name, _Prepared(tuple(topologies)))
        return PreFilterResult(SUCCESS)

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        prepared = state.get(self.name, _Prepared)
        if prepared is None:
            # A profile may run Filter without PreFilter: look the volumes up here then,
            # as kube-scheduler does.
            found = _bound_topologies(state.cluster, pod)
            if isinstance(found, Status):
                every_node = np.ones(slots.size, dtype=bool)
                return reject_where(every_node, found.code, found.message)
            prepared = _Prepared(tuple(found))
        if not prepared.topologies:
            return accept_all(slots.size)
        mismatch = zone_mismatch(state.cluster, prepared.topologies, slots)
        return reject_where(mismatch, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(Resource.STORAGE_CLASS, Action.ADD), _class_waits_for_consumer
            ),
            ClusterEventWithHint(
                ClusterEvent(Resource.NODE, Action.ADD | Action.UPDATE_NODE_LABEL)
            ),
            ClusterEventWithHint(
                ClusterEvent(Resource.PERSISTENT_VOLUME_CLAIM, Action.ADD | Action.UPDATE),
                requeue_for_pods_claim(with_ephemeral=False),
            ),
            ClusterEventWithHint(
                ClusterEvent(Resource.PERSISTENT_VOLUME, Action.ADD | Action.UPDATE),
                _volume_topology_changed,
            ),
        ]


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> VolumeZone:
    """No args (kube-scheduler ignores any given to an argless plugin)."""
    return VolumeZone()
