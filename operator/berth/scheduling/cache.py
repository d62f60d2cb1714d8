"""The scheduler cache: the cluster as placed, plus pods assumed onto nodes before their bind lands.

Assuming reserves a node's resources at decision time so the next decision sees
them; the watch confirms the pod once bound, a failed bind forgets it. As in
modern kube-scheduler, assumed pods never expire on their own.

It also holds the PodDisruptionBudgets preemption reads. As in kube-scheduler,
whose preemption lists them from an informer when it runs, a budget change
requeues no pod: budgets only steer which victims a preemption picks.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass

from berth.engine.cluster import ClusterState, Workload
from berth.engine.model.node import Node
from berth.engine.model.pdb import PodDisruptionBudget
from berth.engine.model.pod import Pod
from berth.scheduling.held_changes import HeldChanges

PdbKey = tuple[str, str]  # (namespace, name)


@dataclass(slots=True)
class _Assumed:
    pod: Pod
    binding_finished: bool = False


class SchedulerCache:
    def __init__(self) -> None:
        self.cluster = ClusterState()
        # Changes from the watches wait here while a decision awaits extenders (the scheduler's
        # intake holds pods and nodes; namespaces, workloads and budgets are held here).
        self.held = HeldChanges()
        self._assumed: dict[str, _Assumed] = {}
        # While a full listing of budgets is being taken: the keys the watch changed
        # meanwhile, which the listing must not override (see reconcile_pdbs()).
        self._pdbs_watched_during_listing: set[PdbKey] | None = None

    # ------------------------------------------------------------------ nodes

    def upsert_node(self, node: Node) -> Node | None:
        """Add or replace a node; returns the previous version, if any."""
        previous = self.cluster.node_named(node.name)
        self.cluster.upsert_node(node)
        return previous

    def remove_node(self, name: str) -> Node | None:
        previous = self.cluster.node_named(name)
        self.cluster.remove_node(name)
        return previous

    # ------------------------------------------------------------------ pods

    def upsert_pod(self, pod: Pod) -> Pod | None:
        """Account an assigned, non-terminal pod from the watch; confirms an assumption."""
        previous = self.cluster.pod(pod.uid)
        self._assumed.pop(pod.uid, None)
        self.cluster.add_pod(pod)
        return previous

    def remove_pod(self, uid: str) -> Pod | None:
        self._assumed.pop(uid, None)
        return self.cluster.remove_pod(uid)

    def assume(self, pod: Pod, node_name: str) -> Pod:
        assumed = pod.assigned_to(node_name)
        self.cluster.add_pod(assumed)
        self._assumed[pod.uid] = _Assumed(assumed)
        return assumed

    def finish_binding(self, uid: str) -> None:
        entry = self._assumed.get(uid)
        if entry is not None:
            entry.binding_finished = True

    def forget(self, uid: str) -> Pod | None:
        """Drop an assumption (bind failed); a pod the watch already confirmed stays."""
        entry = self._assumed.pop(uid, None)
        if entry is None:
            return None
        return self.cluster.remove_pod(uid)

    def is_assumed(self, uid: str) -> bool:
        return uid in self._assumed

    @property
    def assumed_count(self) -> int:
        return len(self._assumed)

    # ------------------------------------------------------------------ namespaces, workloads

    def set_namespace(self, name: str, labels: dict[str, str]) -> None:
        self.held.apply(self.cluster.set_namespace, name, labels)

    def remove_namespace(self, name: str) -> None:
        self.held.apply(self.cluster.remove_namespace, name)

    def set_workload(self, workload: Workload) -> None:
        self.held.apply(self.cluster.set_workload, workload)

    def remove_workload(self, kind: str, namespace: str, name: str) -> None:
        self.held.apply(self.cluster.remove_workload, kind, namespace, name)

    # ------------------------------------------------------------------ disruption budgets

    def upsert_pdb(self, pdb: PodDisruptionBudget) -> None:
        """Add or replace a budget from the watch."""
        self._note_watched_pdb((pdb.namespace, pdb.name))
        self.held.apply(self.cluster.set_pdb, pdb)

    def remove_pdb(self, namespace: str, name: str) -> None:
        self._note_watched_pdb((namespace, name))
        self.held.apply(self.cluster.remove_pdb, namespace, name)

    def _note_watched_pdb(self, key: PdbKey) -> None:
        if self._pdbs_watched_during_listing is not None:
            self._pdbs_watched_during_listing.add(key)

    def begin_pdb_listing(self) -> None:
        """A full listing of budgets is about to be requested; remember what the watch changes."""
        self._pdbs_watched_during_listing = set()

    def reconcile_pdbs(self, pdbs: Iterable[PodDisruptionBudget]) -> int:
        """Converge the budgets to a full listing; returns the number of ghosts removed.

        As for nodes and pods, a resumed watch never reports a budget deleted during
        the gap. Budgets the watch changed since `begin_pdb_listing()` are newer than
        the listing and keep the watch's version (or absence).
        """
        fresher = self._pdbs_watched_during_listing or set()
        self._pdbs_watched_during_listing = None
        listed = {(pdb.namespace, pdb.name): pdb for pdb in pdbs}
        held = {(pdb.namespace, pdb.name): pdb for pdb in self.cluster.pdbs()}
        ghosts = [key for key in held if key not in listed and key not in fresher]
        for namespace, name in ghosts:
            self.cluster.remove_pdb(namespace, name)
        for key, pdb in listed.items():
            if key not in fresher and held.get(key) != pdb:
                self.cluster.set_pdb(pdb)
        return len(ghosts)

    # ------------------------------------------------------------------ convergence

    def reconcile(
        self,
        nodes: Iterable[Node],
        pods: Iterable[Pod],
        *,
        fresher_nodes: Set[str] = frozenset(),
        fresher_pods: Set[str] = frozenset(),
    ) -> tuple[int, int]:
        """Converge to a full listing from the API: drop ghosts, upsert the rest.

        Watches resumed after a gap never report what was deleted during it, so
        after a re-list or a leadership resume the cache is replaced by the API's
        truth. Pods whose bind is still in flight stay assumed. Nodes (by name) and
        pods (by UID) in `fresher_*` changed through the watch while the listing was
        being taken: the watch knows better, so they are neither removed nor
        overwritten. Returns the number of ghost nodes and pods removed.
        """
        node_list = [node for node in nodes if node.name not in fresher_nodes]
        pod_list = [
            pod
            for pod in pods
            if pod.node_name and not pod.is_terminal and pod.uid not in fresher_pods
        ]
        live_nodes = {node.name for node in node_list} | set(fresher_nodes)
        live_pods = {pod.uid for pod in pod_list} | set(fresher_pods)
        ghost_nodes = [node.name for node in self.cluster.nodes() if node.name not in live_nodes]
        ghost_pods = [
            pod.uid
            for pod in self.cluster.pods()
            if pod.uid not in live_pods and not self._in_flight(pod.uid)
        ]
        for name in ghost_nodes:
            self.cluster.remove_node(name)
        for uid in ghost_pods:
            self.remove_pod(uid)
        for node in node_list:
            if self.cluster.node_named(node.name) != node:
                self.cluster.upsert_node(node)
        for pod in pod_list:
            if self.cluster.pod(pod.uid) != pod:
                self.upsert_pod(pod)
        return len(ghost_nodes), len(ghost_pods)

    def _in_flight(self, uid: str) -> bool:
        entry = self._assumed.get(uid)
        return entry is not None and not entry.binding_finished
