"""`ClusterState`: nodes as rows of numpy arrays, pods accounted per node, indexes kept up to date per change."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from berth.engine.cluster.dra import DraObjects
from berth.engine.cluster.images import ImageStates
from berth.engine.cluster.queries import PodQuery, TermKey, term_keys_of
from berth.engine.cluster.resource_states import ResourceStates
from berth.engine.cluster.storage import StorageObjects
from berth.engine.cluster.volume_usage import VolumeUsage
from berth.engine.cluster.workloads import Workload
from berth.engine.cluster.zones import NodeTree, zone_key
from berth.engine.model.node import Node
from berth.engine.model.pdb import PodDisruptionBudget
from berth.engine.model.pod import HostPort, Pod
from berth.engine.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS

NodeSlots = NDArray[np.intp]
"""Row numbers into the node table; a plugin judges the nodes at these rows."""

FIXED_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)
_PODS_ROW = FIXED_RESOURCES.index(PODS)
MISSING = -1  # label-column value for "node has no such label"
_MAX_CACHED_QUERIES = 1024


@dataclass(slots=True)
class LabelColumn:
    """One label key across all node rows, as integer value ids (`MISSING` when absent)."""

    values: NDArray[np.int32]
    vocabulary: list[str] = field(default_factory=list)
    ids: dict[str, int] = field(default_factory=dict)

    def id_of(self, value: str) -> int:
        existing = self.ids.get(value)
        if existing is None:
            existing = len(self.vocabulary)
            self.ids[value] = existing
            self.vocabulary.append(value)
        return existing


@dataclass(slots=True)
class _Trial:
    """What `ClusterState.trial` needs to put back: the pods and every order that a change disturbs."""

    generation: int
    pods: dict[str, Pod]
    orphans: dict[str, dict[str, Pod]]
    term_counts: dict[TermKey, NDArray[np.int64]]
    query_counts: list[tuple[PodQuery, NDArray[np.int64]]]
    slots: dict[int, tuple[dict[str, Pod], list[HostPort]]] = field(default_factory=dict)


class ClusterState:
    """The scheduler's picture of the cluster, updated incrementally.

    Nodes live in "slots" of fixed-width arrays; a removed node's slot is recycled.
    Resource tables are resource-major (one row per resource column, one column
    per slot), so a plugin's gather yields one contiguous array per resource and
    its arithmetic runs over long rows. `requested` holds the sum of actual
    requests of the pods on each node; `nonzero_requested` the cpu/memory sums
    with scoring defaults; `free` is allocatable minus requested, whose "pods"
    row is allocatable pods minus `pod_count`, so one comparison checks a fit.
    """

    def __init__(self, *, capacity: int = 64) -> None:
        self.generation = 0
        self._capacity = capacity
        self._resource_columns: dict[str, int] = {name: i for i, name in enumerate(FIXED_RESOURCES)}
        self._resource_layout: tuple[str, ...] = FIXED_RESOURCES
        width = len(FIXED_RESOURCES)
        self.allocatable = np.zeros((width, capacity), dtype=np.int64)
        self.requested = np.zeros((width, capacity), dtype=np.int64)
        self.free = np.zeros((width, capacity), dtype=np.int64)
        self.nonzero_requested = np.zeros((2, capacity), dtype=np.int64)
        self.pod_count = np.zeros(capacity, dtype=np.int64)
        # Slots with equal allocatable, requested and non-zero requested rows share a state.
        self.resource_states = ResourceStates(capacity)
        self.unschedulable = np.zeros(capacity, dtype=bool)
        self.cordoned_nodes = 0  # how many live nodes are unschedulable (usually none)
        self.live = np.zeros(capacity, dtype=bool)
        # Bumped (from the cluster-wide counter `node_writes`) whenever a slot's node is
        # written or removed, so derived per-node indexes can refresh just the slots that changed.
        self.node_versions = np.zeros(capacity, dtype=np.int64)
        self.node_writes = 0
        self._lacking: frozenset[int] = frozenset()
        self._lacking_seen = (-1, 0)
        self._nodes: list[Node | None] = [None] * capacity
        self._zones: list[str] = [""] * capacity
        self._free_slots: list[int] = []
        self._next_slot = 0
        self._slot_by_name: dict[str, int] = {}
        self._tree = NodeTree()
        self._order: NodeSlots | None = None
        self._pods_by_slot: list[dict[str, Pod]] = [{} for _ in range(capacity)]
        self._ports_by_slot: list[list[HostPort]] = [[] for _ in range(capacity)]
        # Nodes with pods that hold claim or in-line disk volumes; claims in use.
        self.volume_usage = VolumeUsage(capacity)
        self._pods: dict[str, Pod] = {}
        # Pods bound to nodes we have not seen (yet, or any more): accounted once the node appears.
        self._orphans: dict[str, dict[str, Pod]] = {}
        self._label_columns: dict[str, LabelColumn] = {}
        self._query_counts: OrderedDict[PodQuery, NDArray[np.int64]] = OrderedDict()
        self._term_counts: dict[TermKey, NDArray[np.int64]] = {}
        self._namespace_labels: dict[str, dict[str, str]] = {}
        self._workloads: dict[tuple[str, str, str], Workload] = {}
        # Bumped on every workload change, so readers can cache what they derive from workloads.
        self.workload_generation = 0
        # Which nodes list which image, in the order nodes changed (ImageLocality reads it).
        self.images = ImageStates()
        self.pods_with_required_anti_affinity = 0
        self._pdbs: dict[tuple[str, str], PodDisruptionBudget] = {}
        # PVs, PVCs, storage classes and the CSI objects the volume plugins read.
        self.storage = StorageObjects()
        # DeviceClasses, ResourceClaims (with assumed allocations), ResourceSlices and
        # DeviceTaintRules: what the DynamicResources plugin reads.
        self.dra = DraObjects()
        self._trial: _Trial | None = None

    # ------------------------------------------------------------------ sizes and lookups

    @property
    def node_count(self) -> int:
        return len(self._slot_by_name)

    @property
    def pod_total(self) -> int:
        return len(self._pods)

    def slot_of(self, name: str) -> int | None:
        return self._slot_by_name.get(name)

    def node_at(self, slot: int) -> Node:
        node = self._nodes[slot]
        if node is None:
            raise KeyError(f"no node in slot {slot}")
        return node

    def node_named(self, name: str) -> Node | None:
        slot = self._slot_by_name.get(name)
        return None if slot is None else self._nodes[slot]

    def nodes(self) -> Iterable[Node]:
        return (node for node in self._nodes if node is not None)

    def pods_on(self, slot: int) -> Mapping[str, Pod]:
        return self._pods_by_slot[slot]

    def host_ports_on(self, slot: int) -> list[HostPort]:
        return self._ports_by_slot[slot]

    def pod(self, uid: str) -> Pod | None:
        return self._pods.get(uid)

    def pods(self) -> Iterable[Pod]:
        return self._pods.values()

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        return self._namespace_labels.get(namespace, {})

    def workloads(self) -> Iterable[Workload]:
        return self._workloads.values()

    def resource_column(self, name: str) -> int | None:
        return self._resource_columns.get(name)

    @property
    def resource_width(self) -> int:
        """How many resource rows the tables have (it only ever grows)."""
        return len(self._resource_columns)

    @property
    def resource_layout(self) -> tuple[str, ...]:
        """The resource of each table row, in order: what a cached column choice depends on."""
        return self._resource_layout

    def rows_lacking_somewhere(self) -> frozenset[int]:
        """Resource rows in which some live node has allocatable 0.

        Scoring needs a per-node "does it count" mask only for these. Recounted when
        a node was written since the last call (node writes are rare next to pod changes).
        """
        if self._lacking_seen != (self.node_writes, self.resource_width):
            lacking = (self.allocatable[:, self.live] == 0).any(axis=1)
            self._lacking = frozenset(np.flatnonzero(lacking).tolist())
            self._lacking_seen = (self.node_writes, self.resource_width)
        return self._lacking

    def resource_names(self) -> list[str]:
        return list(self._resource_columns)

    def node_order(self) -> NodeSlots:
        """Live slots in kube-scheduler's snapshot order (zones interleaved)."""
        if self._order is None:
            self._order = np.asarray(self._tree.ordered(), dtype=np.intp)
        return self._order

    # ------------------------------------------------------------------ nodes

    def upsert_node(self, node: Node) -> None:
        slot = self._slot_by_name.get(node.name)
        if slot is None:
            self._add_node(node)
        else:
            self._update_node(slot, node)
        self.generation += 1

    def remove_node(self, name: str) -> None:
        slot = self._slot_by_name.pop(name, None)
        if slot is None:
            return
        node = self._nodes[slot]
        assert node is not None
        self._tree.remove(slot, self._zones[slot])
        self._order = None
        self.images.forget(slot, node)
        # Pods still bound to the vanished node wait as orphans in case it returns.
        pods = self._pods_by_slot[slot]
        if pods:
            orphans = self._orphans.setdefault(name, {})
            for uid, pod in list(pods.items()):
                self._unaccount(slot, pod)
                orphans[uid] = pod
        self._nodes[slot] = None
        self.live[slot] = False
        self._bump_node_version(slot)
        self.cordoned_nodes -= int(self.unschedulable[slot])
        self.unschedulable[slot] = False
        self.allocatable[:, slot] = 0
        self.requested[:, slot] = 0
        self.free[:, slot] = 0
        self.nonzero_requested[:, slot] = 0
        self.pod_count[slot] = 0
        self._restate(slot)
        for column in self._label_columns.values():
            column.values[slot] = MISSING
        self._free_slots.append(slot)
        self.generation += 1

    def _add_node(self, node: Node) -> None:
        if self._free_slots:
            slot = self._free_slots.pop()
        else:
            if self._next_slot == self._capacity:
                self._grow()
            slot = self._next_slot
            self._next_slot += 1
        self._slot_by_name[node.name] = slot
        self.live[slot] = True
        self._write_node(slot, node)
        self._zones[slot] = zone_key(node.labels)
        self._tree.add(slot, self._zones[slot])
        self._order = None
        for pod in self._orphans.pop(node.name, {}).values():
            self._account(slot, pod)

    def _update_node(self, slot: int, node: Node) -> None:
        old = self._nodes[slot]
        assert old is not None
        self.images.forget(slot, old)
        self._write_node(slot, node)
        zone = zone_key(node.labels)
        if zone != self._zones[slot]:
            self._tree.remove(slot, self._zones[slot])
            self._zones[slot] = zone
            self._tree.add(slot, zone)
            self._order = None

    def _bump_node_version(self, slot: int) -> None:
        self.node_writes += 1
        self.node_versions[slot] = self.node_writes

    def _write_node(self, slot: int, node: Node) -> None:
        self._nodes[slot] = node
        self._bump_node_version(slot)
        self.cordoned_nodes += int(node.unschedulable) - int(self.unschedulable[slot])
        self.unschedulable[slot] = node.unschedulable
        self.allocatable[:, slot] = 0
        for name, amount in node.allocatable.items():
            resource_column = self._column_for(name)  # may widen (replace) the arrays: index after
            self.allocatable[resource_column, slot] = amount
        self.free[:, slot] = self.allocatable[:, slot] - self.requested[:, slot]
        self.free[_PODS_ROW, slot] -= self.pod_count[slot]
        self._restate(slot)
        for key, column in self._label_columns.items():
            value = node.labels.get(key)
            column.values[slot] = MISSING if value is None else column.id_of(value)
        self.images.record(slot, node)

    def _column_for(self, resource: str) -> int:
        column = self._resource_columns.get(resource)
        if column is None:
            column = len(self._resource_columns)
            self._resource_columns[resource] = column
            self._resource_layout = (*self._resource_layout, resource)
            extra = np.zeros((1, self._capacity), dtype=np.int64)
            self.allocatable = np.vstack([self.allocatable, extra])
            self.requested = np.vstack([self.requested, extra])
            self.free = np.vstack([self.free, extra])
            self._restate_all()  # every slot's rows just got longer
        return column

    def _restate(self, slot: int) -> None:
        states = self.resource_states
        if states.needs_reset():
            self._restate_all()
            return
        states.assign(
            slot,
            self.allocatable[:, slot].tobytes()
            + self.requested[:, slot].tobytes()
            + self.nonzero_requested[:, slot].tobytes(),
        )

    def _restate_all(self) -> None:
        self.resource_states.reset()
        for slot in range(self._next_slot):
            self._restate(slot)

    def _grow(self) -> None:
        old = self._capacity
        new = old * 2
        self._capacity = new

        def grown(array: NDArray[np.int64]) -> NDArray[np.int64]:
            bigger = np.zeros((new, *array.shape[1:]), dtype=array.dtype)
            bigger[:old] = array
            return bigger

        def grown_table(table: NDArray[np.int64]) -> NDArray[np.int64]:
            bigger = np.zeros((table.shape[0], new), dtype=table.dtype)
            bigger[:, :old] = table
            return bigger

        self.allocatable = grown_table(self.allocatable)
        self.requested = grown_table(self.requested)
        self.free = grown_table(self.free)
        self.resource_states.grow(new)
        self.nonzero_requested = grown_table(self.nonzero_requested)
        self.pod_count = grown(self.pod_count)
        self.node_versions = grown(self.node_versions)
        unschedulable = np.zeros(new, dtype=bool)
        unschedulable[:old] = self.unschedulable
        self.unschedulable = unschedulable
        live = np.zeros(new, dtype=bool)
        live[:old] = self.live
        self.live = live
        self._nodes.extend([None] * (new - old))
        self._zones.extend([""] * (new - old))
        self._pods_by_slot.extend({} for _ in range(new - old))
        self._ports_by_slot.extend([] for _ in range(new - old))
        self.volume_usage.grow(new)
        for column in self._label_columns.values():
            values = np.full(new, MISSING, dtype=np.int32)
            values[:old] = column.values
            column.values = values
        for query, counts in self._query_counts.items():
            self._query_counts[query] = grown(counts)
        for key, counts in self._term_counts.items():
            self._term_counts[key] = grown(counts)

    # ------------------------------------------------------------------ pods

    def add_pod(self, pod: Pod) -> None:
        """Account a pod bound (or assumed) to `pod.node_name`; replaces an earlier version."""
        if not pod.node_name:
            raise ValueError(f"pod {pod.key} has no node to be accounted on")
        self.remove_pod(pod.uid)
        if self._trial is not None:
            self._remember_slot(self._trial, pod.node_name)
        self._pods[pod.uid] = pod
        slot = self._slot_by_name.get(pod.node_name)
        if slot is None:
            self._orphans.setdefault(pod.node_name, {})[pod.uid] = pod
        else:
            self._account(slot, pod)
        self.generation += 1

    def remove_pod(self, uid: str) -> Pod | None:
        pod = self._pods.pop(uid, None)
        if pod is None:
            return None
        if self._trial is not None:
            self._remember_slot(self._trial, pod.node_name)
        slot = self._slot_by_name.get(pod.node_name)
        if slot is None:
            orphans = self._orphans.get(pod.node_name)
            if orphans is not None:
                orphans.pop(uid, None)
                if not orphans:
                    del self._orphans[pod.node_name]
        else:
            self._unaccount(slot, pod)
        self.generation += 1
        return pod

    def _account(self, slot: int, pod: Pod) -> None:
        self._apply(slot, pod, +1)
        self._pods_by_slot[slot][pod.uid] = pod
        if pod.host_ports:
            self._ports_by_slot[slot].extend(pod.host_ports)
        if pod.volumes:
            self.volume_usage.account(slot, pod, +1)

    def _unaccount(self, slot: int, pod: Pod) -> None:
        self._apply(slot, pod, -1)
        self._pods_by_slot[slot].pop(pod.uid, None)
        if pod.host_ports:
            ports = self._ports_by_slot[slot]
            for port in pod.host_ports:
                ports.remove(port)
        if pod.volumes:
            self.volume_usage.account(slot, pod, -1)

    def _apply(self, slot: int, pod: Pod, sign: int) -> None:
        for name, amount in pod.requests.items():
            resource_column = self._column_for(name)  # may widen (replace) the arrays: index after
            self.requested[resource_column, slot] += sign * amount
            self.free[resource_column, slot] -= sign * amount
        self.nonzero_requested[0, slot] += sign * pod.nonzero_cpu
        self.nonzero_requested[1, slot] += sign * pod.nonzero_memory
        self.pod_count[slot] += sign
        self.free[_PODS_ROW, slot] -= sign
        self._restate(slot)
        namespace_labels = self.namespace_labels(pod.namespace)
        for query, counts in self._query_counts.items():
            if query.matches(pod, namespace_labels):
                counts[slot] += sign
        for key in term_keys_of(pod) if pod.has_any_affinity_terms else ():
            term_counts = self._term_counts.get(key)
            if term_counts is None:
                term_counts = self._term_counts[key] = np.zeros(self._capacity, dtype=np.int64)
            term_counts[slot] += sign
            if sign < 0 and not term_counts.any():
                del self._term_counts[key]
        if pod.required_anti_affinity:
            self.pods_with_required_anti_affinity += sign

    # ------------------------------------------------------------------ dry runs

    @contextmanager
    def trial(self) -> Iterator[None]:
        """Pod additions and removals inside the block are undone on exit, exactly.

        Afterwards the state is as before the block: the same pods, in the same order
        overall and per node, the same host-port lists, index orders and generation.
        For dry runs such as preemption's victim search. Node changes are not allowed
        inside; trials do not nest.
        """
        if self._trial is not None:
            raise RuntimeError("ClusterState trials do not nest")
        trial = _Trial(
            generation=self.generation,
            pods=dict(self._pods),
            orphans={name: dict(pods) for name, pods in self._orphans.items()},
            term_counts=dict(self._term_counts),
            query_counts=list(self._query_counts.items()),
        )
        self._trial = trial
        try:
            yield
        finally:
            self._trial = None
            self._undo(trial)

    def _remember_slot(self, trial: _Trial, node_name: str) -> None:
        slot = self._slot_by_name.get(node_name)
        if slot is not None and slot not in trial.slots:
            trial.slots[slot] = (dict(self._pods_by_slot[slot]), list(self._ports_by_slot[slot]))

    def _undo(self, trial: _Trial) -> None:
        for uid, pod in list(self._pods.items()):
            if trial.pods.get(uid) is not pod:
                self.remove_pod(uid)
        for uid, pod in trial.pods.items():
            if uid not in self._pods:
                self.add_pod(pod)
        # The content is back; now the orders (and objects) that re-adding disturbed.
        self._pods.clear()
        self._pods.update(trial.pods)
        self._orphans.clear()
        self._orphans.update(trial.orphans)
        for slot, (pods, ports) in trial.slots.items():
            self._pods_by_slot[slot].clear()
            self._pods_by_slot[slot].update(pods)
            self._ports_by_slot[slot][:] = ports
        for key, counts in trial.term_counts.items():
            current = self._term_counts[key]
            if current is not counts:
                counts[...] = current
        self._term_counts.clear()
        self._term_counts.update(trial.term_counts)
        # Queries first asked for inside the trial are dropped; one evicted inside it
        # missed updates, so it stays out.
        alive = set(self._query_counts)
        self._query_counts.clear()
        for query, counts in trial.query_counts:
            if query in alive:
                self._query_counts[query] = counts
        self.generation = trial.generation

    # ------------------------------------------------------------------ disruption budgets

    def set_pdb(self, pdb: PodDisruptionBudget) -> None:
        self._pdbs[(pdb.namespace, pdb.name)] = pdb
        self.generation += 1

    def remove_pdb(self, namespace: str, name: str) -> None:
        if self._pdbs.pop((namespace, name), None) is not None:
            self.generation += 1

    def pdbs(self) -> Iterable[PodDisruptionBudget]:
        return self._pdbs.values()

    # ------------------------------------------------------------------ namespaces and workloads

    def set_namespace(self, name: str, labels: Mapping[str, str]) -> None:
        if self._namespace_labels.get(name) == labels:
            return
        self._namespace_labels[name] = dict(labels)
        self._drop_namespace_dependent_queries()
        self.generation += 1

    def remove_namespace(self, name: str) -> None:
        if self._namespace_labels.pop(name, None) is not None:
            self._drop_namespace_dependent_queries()
            self.generation += 1

    def _drop_namespace_dependent_queries(self) -> None:
        for query in [q for q in self._query_counts if q.uses_namespace_labels]:
            del self._query_counts[query]

    def set_workload(self, workload: Workload) -> None:
        self._workloads[(workload.kind, workload.namespace, workload.name)] = workload
        self.workload_generation += 1
        self.generation += 1

    def remove_workload(self, kind: str, namespace: str, name: str) -> None:
        if self._workloads.pop((kind, namespace, name), None) is not None:
            self.workload_generation += 1
            self.generation += 1

    # ------------------------------------------------------------------ derived per-node views

    def label_column(self, key: str) -> LabelColumn:
        """Value ids of label `key` for every slot; built once, then kept current per node change."""
        column = self._label_columns.get(key)
        if column is None:
            column = LabelColumn(np.full(self._capacity, MISSING, dtype=np.int32))
            for slot, node in enumerate(self._nodes):
                if node is not None:
                    value = node.labels.get(key)
                    if value is not None:
                        column.values[slot] = column.id_of(value)
            self._label_columns[key] = column
        return column

    def matching_pod_counts(self, query: PodQuery) -> NDArray[np.int64]:
        """How many pods on each slot match `query`; maintained incrementally once asked for."""
        counts = self._query_counts.get(query)
        if counts is not None:
            self._query_counts.move_to_end(query)
            return counts
        counts = np.zeros(self._capacity, dtype=np.int64)
        for slot, node in enumerate(self._nodes):
            if node is None:
                continue
            for pod in self._pods_by_slot[slot].values():
                if query.matches(pod, self.namespace_labels(pod.namespace)):
                    counts[slot] += 1
        self._query_counts[query] = counts
        if len(self._query_counts) > _MAX_CACHED_QUERIES:
            self._query_counts.popitem(last=False)
        return counts

    def existing_terms(self) -> Mapping[TermKey, NDArray[np.int64]]:
        """Affinity terms of pods already placed, grouped, with how many pods on each slot carry them."""
        return self._term_counts
