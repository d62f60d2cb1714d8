"""VolumeBinding: places pods where their PersistentVolumeClaims can be bound, and binds them.

PreFilter checks the pod's claims and sorts them (`claims`); Filter matches the unbound
ones to static volumes or provisioning on each node (`filtering`); Score prefers nodes
where the pod would use less of the storage on offer (`scoring`); Reserve, Unreserve and
PreBind assume, undo and write the bindings and wait for the PV controller (`binding`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from berth.engine.cluster import NodeSlots
from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import ClusterEventWithHint
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import PluginArgs, PreFilterResult, Scores
from berth.engine.framework.status import SKIP, SUCCESS, Status, error, unresolvable
from berth.engine.framework.verdicts import Verdicts, accept_all
from berth.engine.model.pod import Pod
from berth.engine.plugins.volume_binding import binding, queueing
from berth.engine.plugins.volume_binding.args import VolumeBindingArgs, parse_args
from berth.engine.plugins.volume_binding.claims import (
    ClaimProblem,
    PodClaims,
    classify_claims,
    first_claim_problem,
)
from berth.engine.plugins.volume_binding.filtering import BatchVolumes, PodVolumes, find_pod_volumes
from berth.engine.plugins.volume_binding.scoring import CapacityScorer

__all__ = ["VolumeBinding", "new_plugin"]

_STATE_NOT_FOUND = "not found"  # upstream's framework.ErrNotFound, when the cycle has no state


@dataclass(slots=True)
class _State:
    """What one cycle learned about the pod's volumes; `claims` is None for a pod without any."""

    claims: PodClaims | None = None
    batches: list[BatchVolumes] = field(default_factory=list)
    reserved: PodVolumes | None = None
    all_bound: bool = False
    # Slot -> (batch index, column) of every node that passed, built when first asked for.
    _passed: dict[int, tuple[int, int]] | None = None

    def add(self, batch: BatchVolumes) -> None:
        self.batches.append(batch)
        self._passed = None

    def _where(self, cluster_slot: int) -> tuple[int, int] | None:
        """(batch index, column) of the node at `cluster_slot`, if it passed Filter."""
        if self._passed is None:
            self._passed = {}
            for index, batch in enumerate(self.batches):
                for column in np.flatnonzero(batch.verdicts.codes == 0).tolist():
                    self._passed[int(batch.slots[column])] = (index, column)
        return self._passed.get(cluster_slot)

    def volumes_on(self, cluster_slot: int | None) -> PodVolumes | None:
        """What Filter chose for the node at `cluster_slot`, if it passed Filter."""
        found = None if cluster_slot is None else self._where(cluster_slot)
        return None if found is None else self.batches[found[0]].at(found[1])

    def scores_on(self, slots: NodeSlots, scorer: CapacityScorer) -> Scores:
        """The capacity score of each node at `slots` (0 where it did not pass Filter)."""
        by_batch = [scorer.batch_scores(batch) for batch in self.batches]
        scores = np.zeros(slots.size, dtype=np.int64)
        for position, slot in enumerate(slots.tolist()):
            found = self._where(slot)
            if found is not None:
                scores[position] = by_batch[found[0]][found[1]]
        return scores


def _no_volumes_message(node_name: str) -> str:
    return f'no pod volume found for node "{node_name}"'


class VolumeBinding:
    name = names.VOLUME_BINDING

    def __init__(self, args: VolumeBindingArgs, handle: Handle | None) -> None:
        self.args = args
        self._handle = handle
        self._scorer = CapacityScorer(args.shape)

    # ------------------------------------------------------------------ filtering

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        if not pod.claim_names:
            state.write(self.name, _State())
            return PreFilterResult(SKIP)
        storage = state.cluster.storage
        problem = first_claim_problem(pod, storage)
        if problem is not None:
            return PreFilterResult(unresolvable(problem))
        claims = classify_claims(pod, storage)
        if isinstance(claims, ClaimProblem):
            return PreFilterResult(
                error(claims.message) if claims.error else unresolvable(claims.message)
            )
        state.write(self.name, _State(claims=claims))
        return PreFilterResult(SUCCESS)

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        data = state.get(self.name, _State)
        if data is None or data.claims is None:
            return accept_all(slots.size)
        batch = find_pod_volumes(state.cluster, state.cluster.storage, data.claims, slots)
        data.add(batch)
        return batch.verdicts

    # ------------------------------------------------------------------ scoring

    def pre_score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Status:
        # StorageCapacityScoring is on: scoring runs for every pod with a cycle state.
        if state.get(self.name, _State) is None:
            return error(_STATE_NOT_FOUND)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Scores:
        data = state.get(self.name, _State)
        if data is None or data.claims is None:
            return np.zeros(slots.size, dtype=np.int64)
        return data.scores_on(slots, self._scorer)

    # ------------------------------------------------------------------ reserve

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        data = state.get(self.name, _State)
        if data is None:
            return error(_STATE_NOT_FOUND)
        volumes = data.volumes_on(state.cluster.slot_of(node_name))
        storage = state.cluster.storage
        if volumes is None or binding.pod_claims_bound(pod, storage):
            data.all_bound = True
            return SUCCESS
        assumed = binding.assume_pod_volumes(storage, volumes, node_name)
        if isinstance(assumed, str):
            return error(assumed)
        data.reserved = assumed
        data.all_bound = False
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        data = state.get(self.name, _State)
        if data is not None and data.reserved is not None:
            binding.revert(state.cluster.storage, data.reserved)

    # ------------------------------------------------------------------ binding

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        data = state.get(self.name, _State)
        if data is None:
            return error(_STATE_NOT_FOUND)
        if data.all_bound:
            return SKIP
        if data.reserved is None:
            return error(_no_volumes_message(node_name))
        return SUCCESS

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        data = state.get(self.name, _State)
        if data is None:
            return error(_STATE_NOT_FOUND)
        if data.all_bound:
            return SUCCESS
        volumes = data.reserved
        if volumes is None:
            return error(_no_volumes_message(node_name))
        if self._handle is None:
            return error("VolumeBinding was built without a framework handle: it cannot bind")
        writer = self._handle.services.volumes
        cluster = state.cluster
        written = await binding.write_bindings(writer, cluster.storage, volumes, node_name)
        if isinstance(written, str):
            return error(written)
        failure = await binding.BindingWait(writer, self.args.bind_timeout_seconds).until_bound(
            cluster, pod, node_name, volumes, written
        )
        return SUCCESS if failure is None else error(failure)

    # ------------------------------------------------------------------ queueing

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return queueing.events_to_register()


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> VolumeBinding:
    """Args: `VolumeBindingArgs` — `bindTimeoutSeconds` (default 600) and `shape`
    (default utilization 0 → score 10, 100 → 0)."""
    return VolumeBinding(parse_args(args), handle)
