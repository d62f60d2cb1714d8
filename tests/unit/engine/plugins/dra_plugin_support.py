"""A small DRA cluster for DynamicResources tests (real CEL, real cache) and the fake claim port."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.dra.allocations import AllocationResult
from berth.engine.dra.claims import ConsumerReference, ResourceClaim
from berth.engine.dra.extended_resources import RequestMapping
from berth.engine.framework.claim_port import ClaimWrite
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.status import Code
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.plugins.dynamic_resources import DynamicResources
from berth.engine.plugins.dynamic_resources.args import DynamicResourcesArgs
from tests.unit.engine.dra.dra_builders import (
    DRIVER,
    device,
    exactly,
    make_class,
    make_slice,
)

GPU_CLASS = make_class("gpu", (f'device.driver == "{DRIVER}"',))


def claim_raw(
    name: str, *requests: dict[str, Any], owner_uid: str = "", **extra: Any
) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "uid": f"uid-{name}",
        "resourceVersion": "1",
    }
    if owner_uid:
        metadata["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner_uid, "controller": True}
        ]
    return {
        "metadata": metadata,
        "spec": {"devices": {"requests": list(requests) or [exactly()], **extra}},
    }


def gpu_cluster(gpus: dict[str, int], **device_fields: Any) -> ClusterState:
    """Nodes with this many GPUs each (one slice per node), and the `gpu` class."""
    cluster = ClusterState(capacity=8)
    for name, count in gpus.items():
        cluster.upsert_node(Node.from_dict({"metadata": {"name": name, "labels": {}}}))
        if count:
            devices = [device(f"gpu-{index}", **device_fields) for index in range(count)]
            cluster.dra.upsert(make_slice(f"{name}-gpus", devices, node=name))
    cluster.dra.upsert(GPU_CLASS)
    return cluster


def add_claim(cluster: ClusterState, raw: dict[str, Any]) -> ResourceClaim:
    claim = ResourceClaim.from_dict(raw)
    cluster.dra.upsert(claim)
    return claim


@dataclass
class FakeClaimWriter:
    """Records the writes; answers as the API server would (or with `error`)."""

    error: str = ""
    now: float = 1_000_000.0
    reserved: list[tuple[str, AllocationResult | None, ConsumerReference]] = field(
        default_factory=list
    )
    unreserved: list[tuple[str, str]] = field(default_factory=list)
    deallocated: list[str] = field(default_factory=list)
    pauses: list[float] = field(default_factory=list)
    on_pause: Any = None  # called with the writer on every pause (to change the cluster)
    created: list[ResourceClaim] = field(default_factory=list)
    recorded: list[tuple[str, str, tuple[RequestMapping, ...]]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    create_error: str = ""
    watch: ClusterState | None = None  # where a created claim shows up, as the watch brings it

    async def reserve(
        self,
        claim: ResourceClaim,
        *,
        allocation: AllocationResult | None,
        consumer: ConsumerReference,
    ) -> ClaimWrite:
        self.reserved.append((claim.key, allocation, consumer))
        if self.error:
            return ClaimWrite(error=self.error)
        written = dataclasses.replace(
            claim,
            allocation=allocation or claim.allocation,
            reserved_for=(*claim.reserved_for, consumer),
            resource_version=str(int(claim.resource_version or "0") + 1),
            allocation_timestamp=claim.allocation_timestamp or "2026-11-26T10:00:00Z",
        )
        return ClaimWrite(claim=written)

    async def unreserve(self, claim: ResourceClaim, *, pod_uid: str) -> ClaimWrite:
        self.unreserved.append((claim.key, pod_uid))
        return ClaimWrite(error=self.error) if self.error else ClaimWrite(claim=claim)

    async def create_extended_claim(self, claim: ResourceClaim, *, pod: Pod) -> ClaimWrite:
        if self.create_error:
            return ClaimWrite(error=self.create_error)
        name = f"{pod.name}-extended-resources-x7k2q"
        created = dataclasses.replace(
            claim, name=name, uid=f"uid-{name}", resource_version="1", allocation=None
        )
        self.created.append(created)
        if self.watch is not None:
            self.watch.dra.upsert(created)
        return ClaimWrite(claim=created)

    async def record_extended_claim(
        self, pod: Pod, *, claim_name: str, mappings: tuple[RequestMapping, ...]
    ) -> str:
        self.recorded.append((pod.key, claim_name, mappings))
        return self.error

    async def delete_extended_claim(self, claim: ResourceClaim) -> ClaimWrite:
        self.deleted.append(claim.key)
        return ClaimWrite(error=self.error)

    async def deallocate(self, claim: ResourceClaim) -> ClaimWrite:
        self.deallocated.append(claim.key)
        return ClaimWrite(error=self.error) if self.error else ClaimWrite(claim=claim)

    def wall_time(self) -> float:
        return self.now

    async def pause(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds
        if self.on_pause is not None:
            self.on_pause(self)


@dataclass
class Recorded:
    events: list[tuple[str, str]] = field(default_factory=list)

    def record(
        self, pod: Pod, *, profile: str, event_type: str, reason: str, action: str, note: str
    ) -> None:
        self.events.append((reason, note))


def plugin_for(
    cluster: ClusterState,
    writer: FakeClaimWriter | None = None,
    *,
    args: DynamicResourcesArgs | None = None,
    clock: Any = None,
    events: Recorded | None = None,
) -> DynamicResources:
    port = writer or FakeClaimWriter()
    recorder = events or Recorded()
    extra = {} if clock is None else {"clock": clock}
    return DynamicResources(
        args or DynamicResourcesArgs(),
        cluster=lambda: cluster,
        writer=lambda: port,
        events=lambda: recorder,
        **extra,
    )


def slots_of(cluster: ClusterState) -> NodeSlots:
    return np.sort(cluster.node_order())


def verdicts_by_node(
    plugin: DynamicResources, state: CycleState, pod: Pod
) -> dict[str, tuple[Code, tuple[str, ...]]]:
    slots = slots_of(state.cluster)
    verdicts = plugin.filter(state, pod, slots)
    return {
        state.cluster.node_at(int(slot)).name: (
            Code(int(verdicts.codes[index])),
            verdicts.reasons_at(index),
        )
        for index, slot in enumerate(slots.tolist())
    }
