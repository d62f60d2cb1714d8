"""DynamicResources with extended resources backed by DRA (DRAExtendedResource, kube-scheduler v1.37).

A pod asking for `example.com/gpu` where a DeviceClass serves that name gets its devices
through the claim kube-scheduler builds for it: per node only what the node's allocatable
does not provide, one request per container, created in PreBind and recorded in the pod's
status; deleted when the attempt fails or a claim is left over from an earlier attempt.
"""

from __future__ import annotations

import asyncio
from typing import Any

from berth.engine.cluster import ClusterState
from berth.engine.dra.classes import DeviceClass
from berth.engine.dra.extended_resources import RequestMapping, classes_by_extended_resource
from berth.engine.framework.claim_port import Deletion, take_releases
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.interfaces import FilterDiagnosis
from berth.engine.framework.status import Code
from berth.engine.model.pod import Pod
from berth.engine.plugins.dynamic_resources import DynamicResources
from berth.engine.plugins.dynamic_resources.binding import FINALIZER
from berth.engine.plugins.dynamic_resources.cycle import PodClaims
from berth.engine.plugins.dynamic_resources.extended_requests import claim_requests
from tests.builders import make_node, make_pod
from tests.unit.engine.dra.dra_builders import DRIVER
from tests.unit.engine.plugins.dra_plugin_support import (
    FakeClaimWriter,
    add_claim,
    claim_raw,
    gpu_cluster,
    plugin_for,
    verdicts_by_node,
)

GPU = "example.com/gpu"
OK = (Code.SUCCESS, ())


def _class(name: str = "gpu", resource: str | None = GPU, created: str = "") -> DeviceClass:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}
    if resource is not None:
        spec["extendedResourceName"] = resource
    metadata: dict[str, Any] = {"name": name}
    if created:
        metadata["creationTimestamp"] = created
    return DeviceClass.from_dict({"metadata": metadata, "spec": spec})


def _cluster(gpus: dict[str, int], *, resource: str | None = GPU) -> ClusterState:
    cluster = gpu_cluster(gpus)
    cluster.dra.upsert(_class(resource=resource))
    return cluster


def _pod(**requests: str | int) -> Pod:
    return make_pod("p").uid("p-uid").req(**(requests or {"example_com__gpu": 1})).build()


def _filtered(
    cluster: ClusterState, pod: Pod, writer: FakeClaimWriter | None = None
) -> tuple[DynamicResources, CycleState, dict[str, tuple[Code, tuple[str, ...]]]]:
    plugin = plugin_for(cluster, writer)
    state = CycleState(cluster)
    assert plugin.pre_filter(state, pod).status.is_success
    return plugin, state, verdicts_by_node(plugin, state, pod)


# ------------------------------------------------------------------ which class serves a name


def test_a_class_serves_its_extended_resource_name_and_its_implicit_name() -> None:
    served = classes_by_extended_resource({"gpu": _class()})
    assert set(served) == {GPU, "deviceclass.resource.kubernetes.io/gpu"}


def test_of_two_classes_naming_one_resource_the_older_serves_it_then_the_smaller_name() -> None:
    newer = _class("a-new", created="2026-01-02T00:00:00Z")
    older = _class("z-old", created="2026-01-01T00:00:00Z")
    assert classes_by_extended_resource({"a": newer, "z": older})[GPU].name == "z-old"
    twin = _class("b", created="2026-01-01T00:00:00Z")
    assert classes_by_extended_resource({"z": older, "b": twin})[GPU].name == "b"


# ------------------------------------------------------------------ PreFilter and Filter


def test_pods_without_a_served_extended_resource_are_skipped() -> None:
    cluster = _cluster({"n1": 1})
    plugin = plugin_for(cluster)
    for pod in (_pod(example_com__fpga=1), make_pod("q").req(cpu="1").build()):
        assert plugin.pre_filter(CycleState(cluster), pod).status.code is Code.SKIP


def test_devices_are_allocated_where_the_node_does_not_advertise_the_resource() -> None:
    cluster = _cluster({"n1": 1, "n2": 0})
    _, state, verdicts = _filtered(cluster, _pod())
    assert verdicts == {
        "n1": OK,
        "n2": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("cannot allocate all claims",)),
    }
    prepared = state.get("DynamicResources", PodClaims)
    assert prepared is not None and prepared.extended is not None
    node_claim = prepared.extended.per_node["n1"]
    [request] = node_claim.claim.spec.requests
    assert request.name == "container-0-request-0"
    assert request.exactly is not None
    assert (request.exactly.device_class_name, request.exactly.count) == ("gpu", 1)
    assert node_claim.mappings == (RequestMapping("c0", GPU, "container-0-request-0"),)


def test_the_implicit_name_asks_for_the_class_too() -> None:
    cluster = _cluster({"n1": 2}, resource=None)
    pod = _pod(deviceclass_resource_kubernetes_io__gpu=2)
    _, state, verdicts = _filtered(cluster, pod)
    assert verdicts == {"n1": OK}
    prepared = state.get("DynamicResources", PodClaims)
    assert prepared is not None and prepared.extended is not None
    [request] = prepared.extended.per_node["n1"].claim.spec.requests
    assert request.exactly is not None and request.exactly.count == 2


def test_a_node_advertising_the_resource_leaves_it_to_its_device_plugin() -> None:
    cluster = _cluster({})
    cluster.upsert_node(make_node("dp").capacity(pods=10, example_com__gpu=4).build())
    _, state, verdicts = _filtered(cluster, _pod())
    assert verdicts == {"dp": OK}
    prepared = state.get("DynamicResources", PodClaims)
    assert prepared is not None and prepared.extended is not None
    assert prepared.extended.per_node == {}  # nothing for DRA to allocate there


def test_another_extended_resource_the_node_lacks_cannot_fit() -> None:
    cluster = _cluster({"n1": 1})
    _, _, verdicts = _filtered(cluster, _pod(example_com__gpu=1, example_com__fpga=1))
    assert verdicts == {"n1": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("cannot fit resource",))}


# ------------------------------------------------------------------ requests per container


def test_each_long_lived_container_gets_its_own_request_named_by_position() -> None:
    pod = (
        make_pod("p")
        .req(0, cpu="1", example_com__gpu=1)
        .container(example_com__gpu=2)
        .init_container(sidecar=True, example_com__gpu=1)
        .build()
    )
    requests, mappings = claim_requests(pod, {GPU: 4}, {GPU: _class()})
    counts = [(r.name, r.exactly.count if r.exactly else 0) for r in requests]
    # The sidecar is container 0; "cpu" sorts before the gpu in container 1.
    assert counts == [
        ("container-0-request-0", 1),
        ("container-1-request-1", 1),
        ("container-2-request-0", 2),
    ]
    assert [m.container_name for m in mappings] == ["init0", "c0", "c1"]


def test_init_containers_reuse_later_devices_and_share_the_largest_extra_request() -> None:
    pod = (
        make_pod("p")
        .req(0, example_com__gpu=1)
        .init_container(example_com__gpu=3)
        .init_container(example_com__gpu=2)
        .build()
    )
    requests, mappings = claim_requests(pod, {GPU: 3}, {GPU: _class()})
    counts = [(r.name, r.exactly.count if r.exactly else 0) for r in requests]
    assert counts == [("container-0-request-0", 2), ("container-2-request-0", 1)]
    assert mappings == (
        RequestMapping("c0", GPU, "container-2-request-0"),
        RequestMapping("init0", GPU, "container-2-request-0"),
        RequestMapping("init0", GPU, "container-0-request-0"),
        RequestMapping("init1", GPU, "container-2-request-0"),
        RequestMapping("init1", GPU, "container-0-request-0"),
    )


# ------------------------------------------------------------------ Reserve, PreBind, Unreserve


def _reserved(
    cluster: ClusterState, writer: FakeClaimWriter
) -> tuple[DynamicResources, CycleState, Pod]:
    pod = _pod()
    plugin, state, verdicts = _filtered(cluster, pod, writer)
    assert verdicts["n1"] == OK
    assert plugin.reserve(state, pod, "n1").is_success
    return plugin, state, pod


def test_reserve_holds_the_devices_for_the_next_pod() -> None:
    cluster = _cluster({"n1": 1})
    _reserved(cluster, FakeClaimWriter())
    other = make_pod("q").uid("q-uid").req(example_com__gpu=1).build()
    _, _, verdicts = _filtered(cluster, other)
    assert verdicts == {
        "n1": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("cannot allocate all claims",))
    }


def test_pre_bind_creates_the_claim_writes_it_and_records_it_in_the_pod() -> None:
    cluster = _cluster({"n1": 1})
    writer = FakeClaimWriter(watch=cluster)
    plugin, state, pod = _reserved(cluster, writer)
    assert asyncio.run(plugin.pre_bind(state, pod, "n1")).is_success
    [created] = writer.created
    assert created.extended_resource_claim and created.controller_uid == "p-uid"
    assert [r.name for r in created.spec.requests] == ["container-0-request-0"]
    [(key, allocation, consumer)] = writer.reserved
    assert key == "default/p-extended-resources-x7k2q" and consumer.uid == "p-uid"
    assert allocation is not None and [d.device for d in allocation.devices] == ["gpu-0"]
    assert writer.recorded == [
        (
            "default/p",
            "p-extended-resources-x7k2q",
            (RequestMapping("c0", GPU, "container-0-request-0"),),
        )
    ]
    held = cluster.dra.claim("default", "p-extended-resources-x7k2q")
    assert held is not None and held.allocation == allocation  # the written claim holds them
    assert cluster.dra.in_flight_claims() == []


def test_a_failed_creation_fails_pre_bind_and_unreserve_frees_the_devices() -> None:
    cluster = _cluster({"n1": 1})
    writer = FakeClaimWriter(create_error="create claim for extended resources default/: boom")
    plugin, state, pod = _reserved(cluster, writer)
    status = asyncio.run(plugin.pre_bind(state, pod, "n1"))
    assert status.code is Code.ERROR
    assert status.message == "create claim for extended resources default/: boom"
    assert [claim.allocation is not None for claim in cluster.dra.in_flight_claims()] == [True]
    plugin.unreserve(state, pod, "n1")
    assert cluster.dra.in_flight_claims() == [] and writer.deleted == []


def test_unreserve_deletes_a_claim_pre_bind_created() -> None:
    cluster = _cluster({"n1": 1})
    writer = FakeClaimWriter(watch=cluster, error="update pod default/p: denied")
    plugin, state, pod = _reserved(cluster, writer)
    status = asyncio.run(plugin.pre_bind(state, pod, "n1"))
    assert status.code is Code.ERROR
    plugin.unreserve(state, pod, "n1")
    assert _deletions(state) == ["default/p-extended-resources-x7k2q"]


def test_a_claim_left_by_an_earlier_attempt_rejects_every_node_and_post_filter_deletes_it() -> None:
    cluster = _cluster({"n1": 1})
    raw = claim_raw("p-extended-resources-old", owner_uid="p-uid")
    raw["metadata"]["annotations"] = {"resource.kubernetes.io/extended-resource-claim": "true"}
    raw["metadata"]["finalizers"] = [FINALIZER]
    add_claim(cluster, raw)
    writer = FakeClaimWriter()
    plugin, state, verdicts = _filtered(cluster, _pod(), writer)
    assert verdicts == {
        "n1": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("cannot schedule extended resource claim",))
    }
    result = plugin.post_filter(state, _pod(), FilterDiagnosis(node_count=1))
    assert result.status.code is Code.UNSCHEDULABLE
    assert result.status.reasons == ("deletion of ResourceClaim completed",)
    assert _deletions(state) == ["default/p-extended-resources-old"]


def _deletions(state: CycleState) -> list[str]:
    """The claims the cycle asked its runner to delete (and await) before it ends."""
    return [r.claim.key for r in take_releases(state) if isinstance(r, Deletion)]
