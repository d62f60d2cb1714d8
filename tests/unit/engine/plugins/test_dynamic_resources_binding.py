"""DynamicResources' binding cycle: PreBind writes allocation and reservation through the port,
assumes the answers, waits for device binding conditions; Unreserve undoes; queueing hints."""

from __future__ import annotations

import asyncio
import dataclasses

from berth.engine.cluster import ClusterState
from berth.engine.dra.claims import ConsumerReference
from berth.engine.framework.claim_port import Unreservation, take_releases
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import QueueingHint, Resource
from berth.engine.framework.status import Code, Status
from berth.engine.model.pod import Pod
from berth.engine.plugins.dynamic_resources import DynamicResources
from berth.engine.plugins.dynamic_resources.args import DynamicResourcesArgs
from berth.engine.plugins.dynamic_resources.queueing import claim_change_hint, pod_update_hint
from tests.builders import make_pod
from tests.unit.engine.plugins.dra_plugin_support import (
    FakeClaimWriter,
    Recorded,
    add_claim,
    claim_raw,
    gpu_cluster,
    plugin_for,
    verdicts_by_node,
)


def _scheduled(
    cluster: ClusterState, plugin: DynamicResources, pod: Pod, node: str
) -> tuple[CycleState, Status]:
    state = CycleState(cluster)
    assert plugin.pre_filter(state, pod).status.is_success
    verdicts_by_node(plugin, state, pod)
    assert plugin.reserve(state, pod, node).is_success
    assert plugin.pre_bind_pre_flight(state, pod, node).is_success
    return state, asyncio.run(plugin.pre_bind(state, pod, node))


def test_pre_bind_writes_the_allocation_and_the_pod_and_assumes_the_answer() -> None:
    cluster = gpu_cluster({"n1": 1})
    add_claim(cluster, claim_raw("c"))
    writer = FakeClaimWriter()
    plugin = plugin_for(cluster, writer)
    pod = make_pod("p").uid("p-uid").claim("gpu", "c").build()
    _, status = _scheduled(cluster, plugin, pod, "n1")
    assert status.is_success
    [(key, allocation, consumer)] = writer.reserved
    assert key == "default/c"
    assert allocation is not None
    assert [(d.pool, d.device) for d in allocation.devices] == [("n1", "gpu-0")]
    assert consumer == ConsumerReference(resource="pods", name="p", uid="p-uid")
    held = cluster.dra.claim("default", "c")
    assert held is not None and held.resource_version == "2"
    assert held.reserved_for == (consumer,)


def test_a_shared_allocated_claim_only_gets_the_pod_added() -> None:
    cluster = gpu_cluster({"n1": 1})
    add_claim(cluster, claim_raw("c"))
    writer = FakeClaimWriter()
    plugin = plugin_for(cluster, writer)
    _scheduled(cluster, plugin, make_pod("a").uid("a").claim("gpu", "c").build(), "n1")
    second = make_pod("b").uid("b").claim("gpu", "c").build()
    _, status = _scheduled(cluster, plugin, second, "n1")
    assert status.is_success
    assert [allocation is None for _, allocation, _ in writer.reserved] == [False, True]


def test_a_failed_write_is_an_error_and_unreserve_restores_the_claim() -> None:
    cluster = gpu_cluster({"n1": 1})
    add_claim(cluster, claim_raw("c"))
    writer = FakeClaimWriter(error="claim default/c got allocated elsewhere in the meantime")
    plugin = plugin_for(cluster, writer)
    pod = make_pod("p").uid("p").claim("gpu", "c").build()
    state, status = _scheduled(cluster, plugin, pod, "n1")
    assert (status.code, status.reasons) == (
        Code.ERROR,
        ("claim default/c got allocated elsewhere in the meantime",),
    )
    plugin.unreserve(state, pod, "n1")
    held = cluster.dra.claim("default", "c")
    assert held is not None and held.allocation is None
    assert take_releases(state) == []


def test_unreserve_after_a_written_reservation_removes_the_pod() -> None:
    cluster = gpu_cluster({"n1": 1})
    add_claim(cluster, claim_raw("c"))
    writer = FakeClaimWriter()
    plugin = plugin_for(cluster, writer)
    pod = make_pod("p").uid("p").claim("gpu", "c").build()
    state, status = _scheduled(cluster, plugin, pod, "n1")
    assert status.is_success
    plugin.unreserve(state, pod, "n1")
    assert [
        (release.claim.key, release.pod_uid)
        for release in take_releases(state)
        if isinstance(release, Unreservation)
    ] == [("default/c", "p")]


def _conditioned(cluster: ClusterState, conditions: dict[str, str]) -> None:
    """Set the driver's conditions on the written claim, as a watch update would."""
    held = cluster.dra.claim("default", "c")
    assert held is not None
    cluster.dra.upsert(
        dataclasses.replace(
            held,
            resource_version=str(int(held.resource_version) + 1),
            device_conditions={
                ("gpu.example.com", "n1", "gpu-0", None): {
                    kind: (value, "Because", "details") for kind, value in conditions.items()
                }
            },
        )
    )


def test_pre_bind_waits_for_binding_conditions() -> None:
    cluster = gpu_cluster(
        {"n1": 1}, bindingConditions=["attached"], bindingFailureConditions=["failed"]
    )
    add_claim(cluster, claim_raw("c"))
    writer = FakeClaimWriter(on_pause=lambda w: _conditioned(cluster, {"attached": "True"}))
    events = Recorded()
    plugin = plugin_for(cluster, writer, events=events)
    _, status = _scheduled(cluster, plugin, make_pod("p").uid("p").claim("gpu", "c").build(), "n1")
    assert status.is_success
    assert writer.pauses == [5.0]
    assert events.events == [
        ("BindingConditionsPending", "waiting for binding conditions for device on node n1")
    ]


def test_a_binding_failure_condition_fails_pre_bind() -> None:
    cluster = gpu_cluster(
        {"n1": 1}, bindingConditions=["attached"], bindingFailureConditions=["failed"]
    )
    add_claim(cluster, claim_raw("c"))
    writer = FakeClaimWriter(on_pause=lambda w: _conditioned(cluster, {"failed": "True"}))
    plugin = plugin_for(cluster, writer)
    _, status = _scheduled(cluster, plugin, make_pod("p").uid("p").claim("gpu", "c").build(), "n1")
    assert (status.code, status.reasons) == (
        Code.ERROR,
        ('device binding failed: claim=c, reason=Because, message="details"',),
    )


def test_binding_conditions_time_out() -> None:
    cluster = gpu_cluster({"n1": 1}, bindingConditions=["attached"])
    add_claim(cluster, claim_raw("c"))
    writer = FakeClaimWriter()
    plugin = plugin_for(cluster, writer, args=DynamicResourcesArgs(binding_timeout=12))
    _, status = _scheduled(cluster, plugin, make_pod("p").uid("p").claim("gpu", "c").build(), "n1")
    assert (status.code, status.reasons) == (
        Code.ERROR,
        ("device binding timeout: context deadline exceeded",),
    )
    assert writer.pauses == [5.0, 5.0, 5.0]


def test_pods_without_claims_skip_the_binding_cycle() -> None:
    cluster = gpu_cluster({"n1": 1})
    plugin = plugin_for(cluster)
    state = CycleState(cluster)
    pod = make_pod("p").build()
    assert plugin.pre_filter(state, pod).status.is_skip
    assert plugin.pre_bind_pre_flight(state, pod, "n1").is_skip
    assert plugin.reserve(state, pod, "n1").is_success


# ---------------------------------------------------------------------- queueing hints


def test_events_to_register_match_upstream() -> None:
    registered = {
        event.event.resource: event.hint is not None
        for event in plugin_for(gpu_cluster({})).events_to_register()
    }
    assert registered == {
        Resource.NODE: False,
        Resource.RESOURCE_CLAIM: True,
        Resource.TARGET_POD: True,
        Resource.DEVICE_CLASS: False,
        Resource.RESOURCE_SLICE: False,
    }


def test_claim_hints() -> None:
    cluster = gpu_cluster({"n1": 1})
    mine = add_claim(cluster, claim_raw("c"))
    other = add_claim(cluster, claim_raw("other"))
    pod = make_pod("p").uid("p").claim("gpu", "c").build()
    allocated = dataclasses.replace(other, allocation=_any_allocation(cluster))
    dra = cluster.dra
    assert claim_change_hint(dra, pod, None, mine) is QueueingHint.QUEUE  # created
    assert claim_change_hint(dra, pod, None, other) is QueueingHint.SKIP  # unrelated
    assert claim_change_hint(dra, pod, allocated, other) is QueueingHint.QUEUE  # freed devices
    assert claim_change_hint(dra, pod, mine, mine) is QueueingHint.SKIP  # same status
    assert claim_change_hint(dra, pod, other, None) is QueueingHint.SKIP  # deleted, held nothing
    assert claim_change_hint(dra, pod, allocated, None) is QueueingHint.QUEUE
    waiting = make_pod("w").resource_claim("gpu").build()
    created = make_pod("w").resource_claim("gpu").generated_claim("gpu", None).build()
    assert pod_update_hint(dra, waiting, waiting, waiting) is QueueingHint.SKIP
    assert pod_update_hint(dra, waiting, waiting, created) is QueueingHint.QUEUE


def _any_allocation(cluster: ClusterState):  # type: ignore[no-untyped-def]
    add_claim(cluster, claim_raw("probe"))
    plugin = plugin_for(cluster)
    pod = make_pod("probe").claim("gpu", "probe").build()
    state = CycleState(cluster)
    plugin.pre_filter(state, pod)
    verdicts_by_node(plugin, state, pod)
    from berth.engine.plugins.dynamic_resources.cycle import PodClaims

    return state.read("DynamicResources", PodClaims).node_allocations["n1"].results[0]
