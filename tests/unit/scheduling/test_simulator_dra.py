"""The simulator holds the DRA objects, makes the claims of pods that name a template as the
resourceclaim controller would, settles the allocations Reserve assumed as PreBind and the
API would, and reports which devices each placed pod's claims hold.

A small stand-in for DynamicResources (the real allocator over the cluster's DRA cache, with
test CEL: a node fits when the pod's unallocated claims can be allocated there, Reserve
assumes the allocations) drives it, so the test pins the simulator's side of the contract
whatever the real plugin decides.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from berth.cli.simulate_output import to_json
from berth.engine.cluster import NodeSlots
from berth.engine.cluster.dra import DraObjects
from berth.engine.dra.allocator import Allocated, Allocator
from berth.engine.dra.claims import ResourceClaim, ResourceClaimTemplate
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.handle import Handle
from berth.engine.framework.status import SUCCESS, Code, Status, unresolvable, unschedulable
from berth.engine.framework.verdicts import Verdicts, accept_all, reject_where
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.scheduling.simulated_claims import generated_claim_name, pod_claims_held
from berth.scheduling.simulator import Simulation, explain, simulate
from tests.builders import make_node
from tests.unit.engine.dra.dra_builders import (
    DRIVER,
    exactly,
    gpus,
    make_class,
    make_slice,
    selectors,
)
from tests.unit.engine.fakes import Built, FakeScore, framework_with

HOSTNAME = "kubernetes.io/hostname"


def _claims(pod: Pod, dra: DraObjects) -> list[ResourceClaim]:
    return [claim for _, claim in pod_claims_held(pod, dra)]


@dataclass
class FakeDynamicResources:
    name: str = "FakeDynamicResources"

    def _allocate(self, state: CycleState, pod: Pod, node: Node) -> Allocated | None:
        dra = state.cluster.dra
        claims = _claims(pod, dra)
        for claim in claims:
            allocation = claim.allocation
            if allocation is not None and not allocation.available_on(
                node_name=node.name, labels=node.labels
            ):
                return None
        pending = [claim for claim in claims if claim.allocation is None]
        allocator = Allocator(
            slices=dra.slice_index(),
            classes=dra.device_classes(),
            allocated=dra.allocated_state(),
            selectors=selectors(),
        )
        outcome = allocator.allocate(node, pending)
        return outcome if isinstance(outcome, Allocated) else None

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        fits = np.array(
            [
                self._allocate(state, pod, state.cluster.node_at(int(slot))) is not None
                for slot in slots
            ],
            dtype=bool,
        )
        if fits.all():
            return accept_all(slots.size)
        return reject_where(~fits, Code.UNSCHEDULABLE, "cannot allocate all claims")

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        dra = state.cluster.dra
        node = state.cluster.node_named(node_name)
        assert node is not None
        allocated = self._allocate(state, pod, node)
        if allocated is None:
            return unschedulable("cannot allocate all claims")
        pending = [claim for claim in _claims(pod, dra) if claim.allocation is None]
        for claim, allocation in zip(pending, allocated.results, strict=True):
            dra.assume_claim(dataclasses.replace(claim, allocation=allocation))
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        dra = state.cluster.dra
        for claim in dra.assumed_claims():
            dra.restore_claim(claim.namespace, claim.name)


def _nodes() -> list[Node]:
    return [
        make_node(name).capacity(cpu="4", memory="8Gi", pods=10).label(HOSTNAME, name).build()
        for name in ("node-a", "node-b")
    ]


def _gpu_pod(name: str, *, template: str | None = None, claim: str | None = None) -> Pod:
    entry: dict[str, Any] = {"name": "gpu"}
    if template is not None:
        entry["resourceClaimTemplateName"] = template
    if claim is not None:
        entry["resourceClaimName"] = claim
    return Pod.from_dict(
        {
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "c"}], "resourceClaims": [entry]},
        }
    )


def _template(name: str = "one-gpu") -> ResourceClaimTemplate:
    return ResourceClaimTemplate.from_dict(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [exactly("gpu")]}}},
        }
    )


def _claim(name: str) -> ResourceClaim:
    return ResourceClaim.from_dict(
        {
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": [exactly("gpu")]}},
        }
    )


def _framework() -> Any:
    # node-a preferred: only its GPU is used when it fits.
    return framework_with(
        FakeDynamicResources(), FakeScore("Prefer", {"node-a": 10}), weights={"Prefer": 1}
    )


def test_template_claims_are_made_allocated_settled_and_reported() -> None:
    dra_objects = [
        make_class("gpu"),
        make_slice("a", gpus(1), node="node-a"),
        make_slice("b", gpus(1), node="node-b"),
        _template(),
    ]
    pods = [_gpu_pod(f"train-{index}", template="one-gpu") for index in range(3)]
    result = simulate(nodes=_nodes(), pods=pods, default=_framework(), dra=dra_objects)

    # One GPU per node: the first pod takes node-a's, the second node-b's, the third none.
    assert [p.node for p in result.placements] == ["node-a", "node-b", None]
    dra = result.cluster.dra
    assert not dra.assumed_claims()  # settled: what the API would hold
    first = result.placements[0]
    claim_name_0 = generated_claim_name(first.pod, "gpu")
    assert first.pod.resource_claim_statuses == {"gpu": claim_name_0}
    claim = dra.claim("default", claim_name_0)
    assert claim is not None
    assert claim.controller_uid == "uid-train-0"
    assert [entry.uid for entry in claim.reserved_for] == ["uid-train-0"]

    document = to_json(result, [])
    assert document["pods"][0]["resourceClaims"] == [
        {
            "name": "gpu",
            "resourceClaimName": claim_name_0,
            "devices": [{"request": "gpu", "driver": DRIVER, "pool": "node-a", "device": "gpu-0"}],
        }
    ]
    assert document["pods"][1]["resourceClaims"][0]["devices"][0]["pool"] == "node-b"
    assert "resourceClaims" not in document["pods"][2]  # not placed
    json.dumps(document)


def test_a_shared_claim_is_allocated_once_and_reserved_for_each_pod() -> None:
    dra_objects = [make_class("gpu"), make_slice("b", gpus(1), node="node-b"), _claim("shared")]
    pods = [_gpu_pod("one", claim="shared"), _gpu_pod("two", claim="shared")]
    result = simulate(nodes=_nodes(), pods=pods, default=_framework(), dra=dra_objects)
    assert [p.node for p in result.placements] == ["node-b", "node-b"]
    claim = result.cluster.dra.claim("default", "shared")
    assert claim is not None and claim.allocation is not None
    assert [entry.uid for entry in claim.reserved_for] == ["uid-one", "uid-two"]
    assert [p.claims[0].devices[0].device for p in result.placements] == ["gpu-0", "gpu-0"]


def test_a_pod_whose_template_is_missing_gets_no_claim() -> None:
    simulation = Simulation(nodes=_nodes(), default=_framework(), dra=[make_class("gpu")])
    placement = simulation.place(_gpu_pod("lonely", template="absent"))
    assert placement.pod.resource_claim_statuses == {}
    assert list(simulation.cluster.dra.held("ResourceClaim")) == []


@pytest.mark.parametrize(
    ("pod_name", "claim", "base"),
    [
        ("train-0", "gpu", "train-0-gpu-"),
        # Over 57 characters, both names are cut in proportion and the last hyphen dropped.
        ("p" * 60, "c" * 20, "p" * 41 + "-" + "c" * 13),
    ],
    ids=["short", "shortened"],
)
def test_generated_names_follow_the_controller(pod_name: str, claim: str, base: str) -> None:
    pod = dataclasses.replace(_gpu_pod("x"), name=pod_name)
    name = generated_claim_name(pod, claim)
    assert name.startswith(base) and len(name) == len(base) + 5
    assert name == generated_claim_name(pod, claim)  # the same in every run
    assert set(name[len(base) :]) <= set("bcdfghjklmnpqrstvwxz2456789")


@dataclass
class NeedsItsClaims:
    """PreEnqueue through the handle, as DynamicResources does: the pod's claims must exist."""

    handle: Handle
    name: str = "NeedsItsClaims"

    def pre_enqueue(self, pod: Pod) -> Status:
        dra = self.handle.services.cluster.dra
        if len(pod_claims_held(pod, dra)) < len(pod.resource_claims):
            return unresolvable("waiting for its claims")
        return SUCCESS


@pytest.mark.parametrize("offline", ["simulate", "explain"])
def test_plugins_reading_the_cluster_outside_a_cycle_see_the_simulated_one(offline: str) -> None:
    framework = framework_with(Built("NeedsItsClaims", NeedsItsClaims))
    pod = _gpu_pod("p", template="one-gpu")
    dra_objects = [make_class("gpu"), _template()]
    if offline == "simulate":
        (placement,) = simulate(
            nodes=_nodes(), pods=[pod], default=framework, dra=dra_objects
        ).placements
        assert placement.node is not None, placement.message
    else:
        answer = explain(pod, nodes=_nodes(), default=framework, dra=dra_objects)
        assert not isinstance(answer, str), answer
