"""DynamicResources: PreEnqueue and PreFilter messages, Filter per node, Score, PostFilter,
with kube-scheduler v1.37's texts, over a real DRA cache and the real CEL environment."""

from __future__ import annotations

import pytest

from berth.engine.framework import names
from berth.engine.framework.claim_port import take_releases
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.interfaces import FilterDiagnosis
from berth.engine.framework.status import Code
from berth.engine.plugins.dynamic_resources import new_plugin
from berth.engine.plugins.dynamic_resources.args import DynamicResourcesArgs
from berth.engine.registry import IN_TREE
from berth.profiles import DEFAULT_MULTI_POINT
from tests.builders import make_pod
from tests.unit.engine.dra.dra_builders import exactly, first_available
from tests.unit.engine.plugins.dra_plugin_support import (
    FakeClaimWriter,
    add_claim,
    claim_raw,
    gpu_cluster,
    plugin_for,
    verdicts_by_node,
)

UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def _allocated_on(node: str) -> dict[str, object]:
    selector = {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
        ]
    }
    return {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "req", "driver": "gpu.example.com", "pool": node, "device": "gpu-0"}
                ]
            },
            "nodeSelector": selector,
        }
    }


# ---------------------------------------------------------------------- PreEnqueue


@pytest.mark.parametrize(
    ("pod", "claims", "expected"),
    [
        (make_pod("p").uid("pod-uid"), [], None),
        (make_pod("p").uid("pod-uid").claim("gpu", "c"), ["c"], None),
        (
            make_pod("p").uid("pod-uid").claim("gpu", "c"),
            [],
            'could not find ResourceClaim "default/c"',
        ),
        (
            make_pod("p").uid("pod-uid").resource_claim("gpu"),
            [],
            'pod "default/p": ResourceClaim not created yet',
        ),
        (make_pod("p").uid("pod-uid").resource_claim("gpu").generated_claim("gpu", None), [], None),
        (
            make_pod("p").uid("pod-uid").resource_claim("gpu").generated_claim("gpu", "c"),
            ["c"],
            "ResourceClaim default/c was not created for Pod default/p (Pod is not owner)",
        ),
        (
            make_pod("p").uid("pod-uid").resource_claim("gpu").generated_claim("gpu", "mine"),
            ["mine"],
            None,
        ),
        (
            make_pod("p").uid("pod-uid").claim("gpu", "gone"),
            ["gone"],
            'resourceclaim "gone" is being deleted',
        ),
    ],
    ids=[
        "no-claims",
        "claim-exists",
        "claim-missing",
        "template-claim-not-created",
        "template-claim-not-needed",
        "generated-for-another-pod",
        "generated-for-this-pod",
        "claim-being-deleted",
    ],
)
def test_pre_enqueue(pod: object, claims: list[str], expected: str | None) -> None:
    cluster = gpu_cluster({"n1": 1})
    for name in claims:
        raw = claim_raw(name, owner_uid="pod-uid" if name == "mine" else "other")
        if name == "gone":
            raw["metadata"]["deletionTimestamp"] = "2026-11-26T10:00:00Z"
        add_claim(cluster, raw)
    status = plugin_for(cluster).pre_enqueue(pod.build())  # type: ignore[attr-defined]
    if expected is None:
        assert status.is_success
    else:
        assert (status.code, status.reasons) == (UNRESOLVABLE, (expected,))


# ---------------------------------------------------------------------- PreFilter


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (exactly(device_class="nope"), "request req: device class nope does not exist"),
        (
            first_available("req", exactly("big", "gpu"), exactly("small", "missing")),
            "request req/small: device class missing does not exist",
        ),
    ],
    ids=["exactly", "subrequest"],
)
def test_pre_filter_refuses_a_missing_class(request_: dict[str, object], expected: str) -> None:
    cluster = gpu_cluster({"n1": 1})
    add_claim(cluster, claim_raw("c", request_))
    pod = make_pod("p").claim("gpu", "c").build()
    result = plugin_for(cluster).pre_filter(CycleState(cluster), pod)
    assert (result.status.code, result.status.reasons) == (UNRESOLVABLE, (expected,))


def test_pre_filter_skips_pods_without_claims() -> None:
    cluster = gpu_cluster({"n1": 1})
    assert plugin_for(cluster).pre_filter(CycleState(cluster), make_pod("p").build()).status.is_skip


def test_a_claim_reserved_by_another_pod_in_flight_waits() -> None:
    cluster = gpu_cluster({"n1": 1, "n2": 1})
    add_claim(cluster, claim_raw("shared"))
    plugin = plugin_for(cluster)
    first = make_pod("a").uid("a").claim("gpu", "shared").build()
    state = CycleState(cluster)
    assert plugin.pre_filter(state, first).status.is_success
    verdicts_by_node(plugin, state, first)
    assert plugin.reserve(state, first, "n1").is_success
    second = make_pod("b").uid("b").claim("gpu", "shared").build()
    result = plugin.pre_filter(CycleState(cluster), second)
    assert (result.status.code, result.status.reasons) == (
        UNRESOLVABLE,
        ("resource claim default/shared is in the process of being allocated",),
    )
    plugin.unreserve(state, first, "n1")
    assert plugin.pre_filter(CycleState(cluster), second).status.is_success


# ---------------------------------------------------------------------- Filter


def test_filter_allocates_per_node() -> None:
    cluster = gpu_cluster({"n1": 0, "n2": 1, "n3": 2})
    add_claim(cluster, claim_raw("c", exactly(count=2)))
    plugin = plugin_for(cluster)
    pod = make_pod("p").claim("gpu", "c").build()
    state = CycleState(cluster)
    assert plugin.pre_filter(state, pod).status.is_success
    assert verdicts_by_node(plugin, state, pod) == {
        "n1": (UNRESOLVABLE, ("cannot allocate all claims",)),
        "n2": (UNRESOLVABLE, ("cannot allocate all claims",)),
        "n3": (Code.SUCCESS, ()),
    }


def test_an_allocated_claim_is_usable_only_where_its_selector_says() -> None:
    cluster = gpu_cluster({"n1": 1, "n2": 1})
    raw = claim_raw("c")
    raw["status"] = _allocated_on("n1")
    add_claim(cluster, raw)
    plugin = plugin_for(cluster)
    pod = make_pod("p").uid("p").claim("gpu", "c").build()
    state = CycleState(cluster)
    assert plugin.pre_filter(state, pod).status.is_success
    assert verdicts_by_node(plugin, state, pod) == {
        "n1": (Code.SUCCESS, ()),
        "n2": (UNRESOLVABLE, ("resourceclaim not available on the node",)),
    }
    # Nobody uses it: PostFilter frees it so the devices can be allocated anew.
    writer = FakeClaimWriter()
    freeing = plugin_for(cluster, writer)
    state = CycleState(cluster)
    freeing.pre_filter(state, pod)
    verdicts_by_node(freeing, state, pod)
    result = freeing.post_filter(state, pod, FilterDiagnosis(node_count=2))
    assert (result.status.code, result.status.reasons) == (
        Code.UNSCHEDULABLE,
        ("deallocation of ResourceClaim completed",),
    )
    # Only asked for: the cycle's runner writes it (and waits) before the cycle ends.
    assert [(type(r).__name__, r.claim.key) for r in take_releases(state)] == [
        ("Deallocation", "default/c")
    ]
    assert writer.deallocated == []


def test_post_filter_keeps_a_claim_another_pod_uses() -> None:
    cluster = gpu_cluster({"n1": 1, "n2": 1})
    raw = claim_raw("c")
    raw["status"] = {
        **_allocated_on("n1"),
        "reservedFor": [{"resource": "pods", "name": "other", "uid": "other"}],
    }
    add_claim(cluster, raw)
    writer = FakeClaimWriter()
    plugin = plugin_for(cluster, writer)
    pod = make_pod("p").uid("p").claim("gpu", "c").node_selector(zone="none").build()
    state = CycleState(cluster)
    plugin.pre_filter(state, pod)
    verdicts_by_node(plugin, state, pod)
    result = plugin.post_filter(state, pod, FilterDiagnosis(node_count=2))
    assert (result.status.code, result.status.reasons) == (Code.UNSCHEDULABLE, ())
    assert take_releases(state) == []


def test_a_broken_selector_is_an_error_with_upstreams_words() -> None:
    cluster = gpu_cluster({"n1": 1})
    add_claim(cluster, claim_raw("c", exactly(selectors=("device.nope == 1",))))
    plugin = plugin_for(cluster)
    pod = make_pod("p").claim("gpu", "c").build()
    state = CycleState(cluster)
    plugin.pre_filter(state, pod)
    code, reasons = verdicts_by_node(plugin, state, pod)["n1"]
    assert code is Code.ERROR
    assert reasons[0].startswith(
        "claim default/c: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:7: "
        "undefined field 'nope'"
    )


def test_the_filter_timeout_is_an_error_naming_the_node() -> None:
    cluster = gpu_cluster({"n1": 4})
    add_claim(cluster, claim_raw("c", exactly(count=5)))
    ticks = iter(range(0, 10_000, 20))
    plugin = plugin_for(
        cluster, args=DynamicResourcesArgs(filter_timeout=10), clock=lambda: next(ticks)
    )
    pod = make_pod("p").claim("gpu", "c").build()
    state = CycleState(cluster)
    plugin.pre_filter(state, pod)
    assert verdicts_by_node(plugin, state, pod)["n1"] == (
        Code.ERROR,
        ("node n1: timed out trying to allocate devices",),
    )


# ---------------------------------------------------------------------- Score


def test_score_prefers_the_node_giving_the_first_choice() -> None:
    cluster = gpu_cluster({"n1": 0, "n2": 0})
    from tests.unit.engine.dra.dra_builders import device, make_slice

    cluster.dra.upsert(make_slice("n1-s", [device("small", {"size": "small"})], node="n1"))
    cluster.dra.upsert(make_slice("n2-s", [device("big", {"size": "big"})], node="n2"))
    big = exactly("big", selectors=('device.attributes["gpu.example.com"].size == "big"',))
    small = exactly("small", selectors=('device.attributes["gpu.example.com"].size == "small"',))
    add_claim(cluster, claim_raw("c", first_available("req", big, small)))
    plugin = plugin_for(cluster)
    pod = make_pod("p").claim("gpu", "c").build()
    state = CycleState(cluster)
    plugin.pre_filter(state, pod)
    assert all(code is Code.SUCCESS for code, _ in verdicts_by_node(plugin, state, pod).values())
    from tests.unit.engine.plugins.dra_plugin_support import slots_of

    slots = slots_of(cluster)
    raw = plugin.score(state, pod, slots)
    assert raw.tolist() == [7, 8]
    assert plugin.normalize_scores(state, pod, slots, raw).tolist() == [87, 100]


# ---------------------------------------------------------------------- Reserve / Unreserve


def test_reserve_takes_the_devices_for_the_next_pod_and_unreserve_gives_them_back() -> None:
    cluster = gpu_cluster({"n1": 1})
    add_claim(cluster, claim_raw("a"))
    add_claim(cluster, claim_raw("b"))
    plugin = plugin_for(cluster)
    first = make_pod("pa").uid("pa").claim("gpu", "a").build()
    state = CycleState(cluster)
    plugin.pre_filter(state, first)
    assert verdicts_by_node(plugin, state, first) == {"n1": (Code.SUCCESS, ())}
    assert plugin.reserve(state, first, "n1").is_success
    second = make_pod("pb").uid("pb").claim("gpu", "b").build()
    later = CycleState(cluster)
    plugin.pre_filter(later, second)
    assert verdicts_by_node(plugin, later, second) == {
        "n1": (UNRESOLVABLE, ("cannot allocate all claims",))
    }
    plugin.unreserve(state, first, "n1")
    again = CycleState(cluster)
    plugin.pre_filter(again, second)
    assert verdicts_by_node(plugin, again, second) == {"n1": (Code.SUCCESS, ())}


def test_reserve_without_an_allocation_for_the_node_is_an_error() -> None:
    cluster = gpu_cluster({"n1": 1})
    add_claim(cluster, claim_raw("a"))
    plugin = plugin_for(cluster)
    pod = make_pod("p").claim("gpu", "a").build()
    state = CycleState(cluster)
    plugin.pre_filter(state, pod)
    status = plugin.reserve(state, pod, "n1")
    assert (status.code, status.reasons) == (Code.ERROR, ("claim allocation not found for node",))


# ---------------------------------------------------------------------- registration


def test_registered_with_upstreams_weight_and_place() -> None:
    assert names.DYNAMIC_RESOURCES in IN_TREE
    enabled = DEFAULT_MULTI_POINT.enabled
    order = [ref.name for ref in enabled]
    position = order.index(names.DYNAMIC_RESOURCES)
    assert order[position - 1 : position + 2] == [
        names.INTER_POD_AFFINITY,
        names.DYNAMIC_RESOURCES,
        names.DEFAULT_PREEMPTION,
    ]
    assert enabled[position].weight == 2


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (None, DynamicResourcesArgs(10.0, 600.0)),
        ({"filterTimeout": "0s", "bindingTimeout": "1m"}, DynamicResourcesArgs(0.0, 60.0)),
    ],
    ids=["defaults", "given"],
)
def test_args(args: dict[str, str] | None, expected: DynamicResourcesArgs) -> None:
    assert new_plugin(args).args == expected


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"filterTimeout": "-1s"}, "must be zero or positive"),
        ({"bindingTimeout": "500ms"}, "must be at least 1 second"),
        ({"bindingTimeout": "soon"}, "expected a duration"),
        ({"scoringStrategy": {}}, "unknown field"),
    ],
    ids=["negative-filter-timeout", "short-binding-timeout", "not-a-duration", "unknown-field"],
)
def test_bad_args(args: dict[str, object], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        new_plugin(args)


def test_reserve_refuses_when_the_claim_changed_since_pre_filter() -> None:
    cluster = gpu_cluster({"n1": 1})
    raw = claim_raw("a")
    add_claim(cluster, raw)
    plugin = plugin_for(cluster)
    pod = make_pod("p").claim("gpu", "a").build()
    state = CycleState(cluster)
    plugin.pre_filter(state, pod)
    verdicts_by_node(plugin, state, pod)
    raw["metadata"]["resourceVersion"] = "7"
    add_claim(cluster, raw)
    status = plugin.reserve(state, pod, "n1")
    assert status.code is Code.ERROR
    assert status.reasons[0].startswith("internal error, couldn't signal allocation for claim a: ")


def _waiting_on_conditions(devices: list[dict[str, object]] | None = None) -> dict[str, object]:
    raw = claim_raw("c")
    status = _allocated_on("n1")
    result = status["allocation"]["devices"]["results"][0]  # type: ignore[index]
    result["bindingConditions"] = ["attached"]
    result["bindingFailureConditions"] = ["failed"]
    status["allocation"]["allocationTimestamp"] = "2026-11-26T10:00:00Z"  # type: ignore[index]
    if devices is not None:
        status["devices"] = devices
    raw["status"] = status
    return raw


@pytest.mark.parametrize(
    ("devices", "seconds_later", "usable"),
    [
        (None, 60, True),
        (None, 700, False),
        (
            [
                {
                    "driver": "gpu.example.com",
                    "pool": "n1",
                    "device": "gpu-0",
                    "conditions": [
                        {"type": "failed", "status": "True", "reason": "Broken", "message": "x"}
                    ],
                }
            ],
            60,
            False,
        ),
    ],
    ids=["still-preparing", "timed-out", "failed"],
)
def test_an_allocated_claim_whose_devices_failed_or_timed_out_is_not_available(
    devices: list[dict[str, object]] | None, seconds_later: int, usable: bool
) -> None:
    from datetime import datetime

    cluster = gpu_cluster({"n1": 1})
    add_claim(cluster, _waiting_on_conditions(devices))
    allocated = datetime.fromisoformat("2026-11-26T10:00:00+00:00").timestamp()
    plugin = plugin_for(cluster, FakeClaimWriter(now=allocated + seconds_later))
    pod = make_pod("p").uid("p").claim("gpu", "c").build()
    state = CycleState(cluster)
    plugin.pre_filter(state, pod)
    expected = (
        (Code.SUCCESS, ())
        if usable
        else (UNRESOLVABLE, ("resourceclaim not available on the node",))
    )
    assert verdicts_by_node(plugin, state, pod) == {"n1": expected}


def test_post_filter_reads_the_state_pre_filter_always_writes() -> None:
    cluster = gpu_cluster({"n1": 1})
    plugin = plugin_for(cluster)
    pod = make_pod("p").build()
    never_pre_filtered = plugin.post_filter(CycleState(cluster), pod, FilterDiagnosis(node_count=1))
    # An earlier PreFilter rejected the pod: upstream's state lookup error ends the message.
    assert (never_pre_filtered.status.code, never_pre_filtered.status.reasons) == (
        Code.ERROR,
        ("not found",),
    )
    state = CycleState(cluster)
    assert plugin.pre_filter(state, pod).status.is_skip
    result = plugin.post_filter(state, pod, FilterDiagnosis(node_count=1))
    assert (result.status.code, result.status.reasons) == (Code.UNSCHEDULABLE, ())
