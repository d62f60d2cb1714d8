"""The simulator holds the storage objects, runs Reserve as the scheduling cycle does, and settles
assumed volume bindings as the PV controller would: a claim bound for one pod is bound for the next.

A small stand-in for VolumeBinding (assume a PV for an unbound claim at Reserve; keep a pod
whose claim is bound on the nodes its PV reaches) drives it, so the test pins the simulator's
side of the contract whatever the real plugin decides.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from berth.engine.cluster import NodeSlots
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.status import SUCCESS, Code, Status, unschedulable
from berth.engine.framework.verdicts import Verdicts, accept_all, reject_where
from berth.engine.model.pod import Pod
from berth.engine.model.storage import ClaimRef
from berth.engine.nodematch import volume_node_affinity_mask
from berth.scheduling.simulator import Simulation, simulate
from tests.builders import make_node, make_pod
from tests.storage_builders import make_pv, make_pvc
from tests.unit.engine.fakes import FakeScore, framework_with

HOSTNAME = "kubernetes.io/hostname"


@dataclass
class FakeVolumeBinding:
    """A pod goes where its bound claims' PVs, or free PVs of its unbound claims' classes, are;
    Reserve binds an unbound claim to the first free PV of its class that the node reaches."""

    name: str = "FakeVolumeBinding"

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        storage = state.cluster.storage
        keep = np.ones(slots.size, dtype=bool)
        for claim_name in pod.claim_names:
            claim = storage.claim(pod.namespace, claim_name)
            assert claim is not None
            if claim.bind_completed:
                candidates = [storage.volume(claim.volume_name)]
            else:
                candidates = [
                    v for v in storage.volumes_of_class(claim.storage_class) if v.claim_ref is None
                ]
            reach = np.zeros(slots.size, dtype=bool)
            for volume in candidates:
                assert volume is not None
                reach |= volume_node_affinity_mask(state.cluster, volume.node_affinity, slots)
            keep &= reach
        if keep.all():
            return accept_all(slots.size)
        return reject_where(~keep, Code.UNSCHEDULABLE, "node(s) had no volume to use")

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        storage = state.cluster.storage
        node = state.cluster.node_named(node_name)
        assert node is not None
        for claim_name in pod.claim_names:
            claim = storage.claim(pod.namespace, claim_name)
            assert claim is not None
            if claim.bind_completed:
                continue
            for volume in storage.volumes_of_class(claim.storage_class):
                if volume.claim_ref is None and volume.node_affinity_matches(node.labels):
                    ref = ClaimRef(claim.namespace, claim.name, claim.uid)
                    storage.assume_volume(dataclasses.replace(volume, claim_ref=ref))
                    break
            else:
                return unschedulable("node(s) didn't find available persistent volumes to bind")
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for volume in list(state.cluster.storage.volumes.assumed_values()):
            state.cluster.storage.restore_volume(volume.name)


def _nodes() -> list:  # type: ignore[type-arg]
    return [
        make_node(name).capacity(cpu="4", memory="8Gi", pods=10).label(HOSTNAME, name).build()
        for name in ("n1", "n2")
    ]


def _local_pv(name: str, node: str) -> object:
    return (
        make_pv(name)
        .storage_class("local")
        .node_affinity(HOSTNAME, node)
        .phase("Available")
        .build()
    )


def test_a_claim_bound_for_one_pod_is_bound_for_the_next() -> None:
    claim = make_pvc("data").storage_class("local").build()
    framework = framework_with(
        FakeVolumeBinding(), FakeScore("Prefer", {"n2": 10}), weights={"Prefer": 1}
    )
    first = make_pod("first").pvc("data").build()
    second = make_pod("second").pvc("data").build()
    result = simulate(
        nodes=_nodes(),
        pods=[first, second],
        default=framework,
        storage=[_local_pv("pv-n1", "n1"), claim],
    )
    # Only n1's volume was free: the first pod got it (n2 had none), the second follows it.
    assert [p.node for p in result.placements] == ["n1", "n1"]
    storage = result.cluster.storage
    settled_claim = storage.claim("default", "data")
    settled_volume = storage.volume("pv-n1")
    assert settled_claim is not None and settled_volume is not None
    assert settled_claim.bind_completed and settled_claim.volume_name == "pv-n1"
    assert settled_claim.phase == "Bound"
    assert settled_volume.phase == "Bound" and settled_volume.claim_ref is not None
    assert not storage.volumes.is_assumed("pv-n1")  # settled: the API's version now


@dataclass
class RejectsAtReserve:
    name: str = "RejectsAtReserve"
    unreserved: int = 0

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return unschedulable("node(s) lost a race for a volume")

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.unreserved += 1


def test_a_reserve_rejection_unplaces_the_pod_with_a_one_node_message() -> None:
    rejecting = RejectsAtReserve()
    simulation = Simulation(nodes=_nodes(), default=framework_with(rejecting))
    placement = simulation.place(make_pod("p").uid("p-uid").build())
    assert placement.node is None
    assert placement.message == "0/1 nodes are available: 1 node(s) lost a race for a volume."
    assert simulation.cluster.pod("p-uid") is None
    assert rejecting.unreserved == 1


def test_a_pods_ephemeral_claim_is_created_owned_by_it() -> None:
    framework = framework_with(FakeVolumeBinding())
    simulation = Simulation(nodes=_nodes(), default=framework, storage=[_local_pv("pv-n2", "n2")])
    pod = make_pod("web-0").uid("web-uid").ephemeral("scratch", "local").build()
    placement = simulation.place(pod)
    assert placement.node == "n2"
    claim = simulation.cluster.storage.claim("default", "web-0-scratch")
    assert claim is not None
    assert claim.metadata.controller_uid == "web-uid"
    assert claim.volume_name == "pv-n2" and claim.bind_completed
