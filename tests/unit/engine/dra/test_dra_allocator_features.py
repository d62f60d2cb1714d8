"""The allocator, feature by feature, against what kube-scheduler v1.37's allocator picks."""

from __future__ import annotations

from typing import Any

from berth.engine.dra.allocator import Allocated, AllocationOutcome, CannotAllocate, NodeFailure
from berth.engine.dra.values import DeviceID
from tests.unit.engine.dra.dra_builders import (
    DRIVER,
    device,
    exactly,
    first_available,
    gpus,
    make_allocator,
    make_claim,
    make_class,
    make_node,
    make_slice,
)


def picked(outcome: AllocationOutcome) -> list[list[tuple[str, str]]]:
    """Per claim: (request, device) in result order."""
    assert isinstance(outcome, Allocated), outcome
    return [
        [(result.request, result.device) for result in claim.devices] for claim in outcome.results
    ]


def allocated_claim(name: str, *devices: str, pool: str = "node-a", **extra: Any) -> Any:
    results = [
        {"request": "req", "driver": DRIVER, "pool": pool, "device": device_name, **extra}
        for device_name in devices
    ]
    return make_claim(name, status={"allocation": {"devices": {"results": results}}})


def test_devices_are_tried_in_pool_then_slice_name_then_device_order() -> None:
    slices = [
        make_slice("z-slice", gpus(1), pool="a-pool", count=2),
        make_slice("b-slice", [device("first")], pool="a-pool", count=2),
        make_slice("other", [device("x")], pool="0-pool", driver="z.example.com"),
    ]
    outcome = make_allocator(slices).allocate(make_node(), [make_claim("c", exactly(count=2))])
    assert picked(outcome) == [[("req", "first"), ("req", "gpu-0")]]


def test_devices_in_use_are_skipped_and_admin_access_ignores_use() -> None:
    slices = [make_slice("s", gpus(2))]
    taken = [allocated_claim("old", "gpu-0")]
    allocator = make_allocator(slices, allocated=taken)
    assert picked(allocator.allocate(make_node(), [make_claim("c")])) == [[("req", "gpu-1")]]
    admin = make_claim("c", exactly(adminAccess=True, count=2))
    outcome = allocator.allocate(make_node(), [admin])
    assert picked(outcome) == [[("req", "gpu-0"), ("req", "gpu-1")]]
    assert isinstance(outcome, Allocated)
    assert all(result.admin_access for result in outcome.results[0].devices)
    # Admin access takes nothing away from others.
    admin_taken = [allocated_claim("old", "gpu-0", "gpu-1", adminAccess=True)]
    allocator = make_allocator(slices, allocated=admin_taken)
    assert picked(allocator.allocate(make_node(), [make_claim("c")])) == [[("req", "gpu-0")]]


def test_claims_of_one_pod_do_not_share_devices() -> None:
    allocator = make_allocator([make_slice("s", gpus(2))])
    outcome = allocator.allocate(make_node(), [make_claim("a"), make_claim("b")])
    assert picked(outcome) == [[("req", "gpu-0")], [("req", "gpu-1")]]
    three = [make_claim("a"), make_claim("b"), make_claim("c")]
    assert isinstance(allocator.allocate(make_node(), three), CannotAllocate)


def test_all_mode_takes_every_matching_device() -> None:
    slices = [
        make_slice("s", [device("a", {"kind": "big"}), device("b"), device("c", {"kind": "big"})])
    ]
    allocator = make_allocator(slices)
    claim = make_claim(
        "c", exactly(mode="All", selectors=(f'device.attributes["{DRIVER}"].kind == "big"',))
    )
    assert picked(allocator.allocate(make_node(), [claim])) == [[("req", "a"), ("req", "c")]]
    none = make_claim("c", exactly(mode="All", selectors=("false",)))
    assert isinstance(allocator.allocate(make_node(), [none]), CannotAllocate)
    busy = make_allocator(slices, allocated=[allocated_claim("old", "a")])
    assert isinstance(busy.allocate(make_node(), [claim]), CannotAllocate)


def test_first_available_falls_back_in_order_and_names_the_subrequest() -> None:
    slices = [make_slice("s", [device("small", {"size": 1}), device("big", {"size": 2})])]
    allocator = make_allocator(slices)
    size = f'device.attributes["{DRIVER}"].size == '
    claim = make_claim(
        "c",
        first_available(
            "req",
            exactly("two-big", count=2, selectors=(size + "2",)),
            exactly("one-big", selectors=(size + "2",)),
            exactly("one-small", selectors=(size + "1",)),
        ),
    )
    assert picked(allocator.allocate(make_node(), [claim])) == [[("req/one-big", "big")]]
    busy = make_allocator(slices, allocated=[allocated_claim("old", "big")])
    assert picked(busy.allocate(make_node(), [claim])) == [[("req/one-small", "small")]]


def test_match_attribute_keeps_devices_on_one_pcie_root() -> None:
    root = "resource.kubernetes.io/pcieRoot"
    devices = [
        device("gpu-0", {root: "pci0"}),
        device("gpu-1", {root: "pci1"}),
        device("nic-0", {root: "pci1"}),
    ]
    allocator = make_allocator([make_slice("s", devices)])
    claim = make_claim(
        "c",
        exactly(
            "gpu",
            selectors=('device.attributes["resource.kubernetes.io"].pcieRoot == "pci0" && false',),
        ),
    )
    assert isinstance(allocator.allocate(make_node(), [claim]), CannotAllocate)
    pair = make_claim(
        "c",
        exactly("gpu"),
        exactly("nic"),
        constraints=[{"requests": ["gpu", "nic"], "matchAttribute": root}],
    )
    # gpu-0 first, then no second device on pci0: backtrack to gpu-1 + nic-0.
    assert picked(allocator.allocate(make_node(), [pair])) == [[("gpu", "gpu-1"), ("nic", "nic-0")]]


def test_match_attribute_reads_bare_names_in_the_driver_domain_and_types_matter() -> None:
    devices = [device("a", {"index": 1}), device("b", {"index": "1"}), device("c", {"index": 1})]
    allocator = make_allocator([make_slice("s", devices)])
    claim = make_claim("c", exactly(count=2), constraints=[{"matchAttribute": f"{DRIVER}/index"}])
    assert picked(allocator.allocate(make_node(), [claim])) == [[("req", "a"), ("req", "c")]]


def test_distinct_attribute_spreads_devices() -> None:
    devices = [device("a", {"numa": 0}), device("b", {"numa": 0}), device("c", {"numa": 1})]
    allocator = make_allocator([make_slice("s", devices)])
    claim = make_claim("c", exactly(count=2), constraints=[{"distinctAttribute": f"{DRIVER}/numa"}])
    assert picked(allocator.allocate(make_node(), [claim])) == [[("req", "a"), ("req", "c")]]


def _partitioned(memory: str = "40Gi") -> list[Any]:
    counters = make_slice(
        "counters",
        None,
        count=2,
        sharedCounters=[{"name": "gpu-0", "counters": {"memory": {"value": memory}}}],
    )
    parts = [
        device(
            name,
            consumesCounters=[{"counterSet": "gpu-0", "counters": {"memory": {"value": size}}}],
        )
        for name, size in (("whole", "40Gi"), ("half-0", "20Gi"), ("half-1", "20Gi"))
    ]
    return [counters, make_slice("parts", parts, count=2)]


def test_partitionable_devices_share_counters() -> None:
    allocator = make_allocator(_partitioned())
    assert picked(allocator.allocate(make_node(), [make_claim("c", exactly(count=2))])) == [
        [("req", "half-0"), ("req", "half-1")]
    ]
    assert picked(allocator.allocate(make_node(), [make_claim("c")])) == [[("req", "whole")]]
    # An allocated half leaves room for the other half only.
    busy = make_allocator(_partitioned(), allocated=[allocated_claim("old", "half-0")])
    assert picked(busy.allocate(make_node(), [make_claim("c")])) == [[("req", "half-1")]]


def test_consumable_capacity_shares_a_device_by_amount() -> None:
    shared = device(
        "nic",
        allowMultipleAllocations=True,
        capacity={
            "bandwidth": {
                "value": "10",
                "requestPolicy": {"default": "1", "validRange": {"min": "1", "step": "2"}},
            }
        },
    )
    allocator = make_allocator([make_slice("s", [shared])])
    claim = make_claim("c", exactly(capacity={"requests": {"bandwidth": "4"}}))
    outcome = allocator.allocate(make_node(), [claim, make_claim("d")])
    assert isinstance(outcome, Allocated)
    first, second = (result.devices[0] for result in outcome.results)
    assert first.consumed_capacity is not None and second.consumed_capacity is not None
    assert first.consumed_capacity["bandwidth"].text == "5"  # 4 rounded up: min 1, step 2
    assert second.consumed_capacity["bandwidth"].text == "1"  # the policy's default
    assert (first.share_id, second.share_id) == ("share-1", "share-2")
    too_much = make_claim("c", exactly(capacity={"requests": {"bandwidth": "11"}}))
    assert isinstance(allocator.allocate(make_node(), [too_much]), CannotAllocate)
    # Shares written into claims count against the device.
    taken = allocated_claim("old", "nic", shareID="x", consumedCapacity={"bandwidth": "7"})
    busy = make_allocator([make_slice("s", [shared])], allocated=[taken])
    assert isinstance(busy.allocate(make_node(), [claim]), CannotAllocate)
    assert picked(busy.allocate(make_node(), [make_claim("d")])) == [[("req", "nic")]]


def test_untolerated_taints_keep_devices_away() -> None:
    devices = [
        device("a", taints=[{"key": "broken", "value": "yes", "effect": "NoSchedule"}]),
        device("b", taints=[{"key": "note", "effect": "None"}]),
    ]
    allocator = make_allocator([make_slice("s", devices)])
    assert picked(allocator.allocate(make_node(), [make_claim("c")])) == [[("req", "b")]]
    tolerating = make_claim(
        "c", exactly(tolerations=[{"key": "broken", "operator": "Equal", "value": "yes"}])
    )
    outcome = allocator.allocate(make_node(), [tolerating])
    assert picked(outcome) == [[("req", "a")]]
    assert isinstance(outcome, Allocated)
    assert outcome.results[0].devices[0].tolerations[0].key == "broken"
    wrong_value = make_claim("c", exactly(count=2, tolerations=[{"key": "broken", "value": "no"}]))
    assert isinstance(allocator.allocate(make_node(), [wrong_value]), CannotAllocate)


def test_pools_with_binding_conditions_come_last_and_pin_the_node() -> None:
    slices = [
        make_slice(
            "a",
            [device("attached", bindingConditions=["ready"], bindsToNode=True)],
            pool="a",
            node=None,
            allNodes=True,
        ),
        make_slice("b", [device("plain")], pool="b", node=None, allNodes=True),
    ]
    allocator = make_allocator(slices)
    outcome = allocator.allocate(make_node(), [make_claim("c")])
    assert picked(outcome) == [[("req", "plain")]]
    assert isinstance(outcome, Allocated) and outcome.results[0].node_selector is None
    outcome = allocator.allocate(make_node(), [make_claim("c", exactly(count=2))])
    assert isinstance(outcome, Allocated)
    attached = outcome.results[0].devices[1]
    assert attached.binding_conditions == ("ready",)
    assert outcome.results[0].to_dict()["nodeSelector"] == {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}
        ]
    }


def test_node_selected_slices_give_their_selector_to_the_allocation() -> None:
    zone = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
        ]
    }
    slices = [make_slice("s", [device("fpga")], node=None, nodeSelector=zone, pool="shared")]
    allocator = make_allocator(slices)
    outcome = allocator.allocate(make_node("n1", {"zone": "a"}), [make_claim("c")])
    assert isinstance(outcome, Allocated)
    assert outcome.results[0].to_dict()["nodeSelector"] == zone
    assert isinstance(
        allocator.allocate(make_node("n2", {"zone": "b"}), [make_claim("c")]), CannotAllocate
    )


def test_per_device_node_selection_filters_devices() -> None:
    devices = [device("far", nodeName="node-b"), device("near", nodeName="node-a")]
    slices = [make_slice("s", devices, node=None, perDeviceNodeSelection=True, pool="p")]
    outcome = make_allocator(slices).allocate(make_node(), [make_claim("c")])
    assert picked(outcome) == [[("req", "near")]]


def test_pool_generations_and_completeness() -> None:
    node = make_node()
    old_and_new = [
        make_slice("old", [device("old")], generation=1),
        make_slice("new", [device("new")], generation=2),
    ]
    assert picked(make_allocator(old_and_new).allocate(node, [make_claim("c")])) == [
        [("req", "new")]
    ]
    incomplete = [make_slice("half", [device("x")], count=2)]
    assert isinstance(make_allocator(incomplete).allocate(node, [make_claim("c")]), CannotAllocate)
    # The pool's other slice is elsewhere (another node): complete, usable here.
    elsewhere = [
        make_slice("here", [device("x")], count=2, pool="p"),
        make_slice("there", [device("y")], count=2, pool="p", node="node-b"),
    ]
    assert picked(make_allocator(elsewhere).allocate(node, [make_claim("c")])) == [[("req", "x")]]
    # A newer generation is arriving on another node: the pool is skipped for now.
    updating = [
        make_slice("here", [device("x")], count=2, pool="p"),
        make_slice("there", [device("y")], count=2, pool="p", node="node-b", generation=2),
    ]
    assert isinstance(make_allocator(updating).allocate(node, [make_claim("c")]), CannotAllocate)


def test_an_invalid_pool_fails_the_node_when_nothing_else_fits() -> None:
    duplicated = [
        make_slice("a", [device("x")], count=2, pool="p"),
        make_slice("b", [device("x")], count=2, pool="p"),
    ]
    outcome = make_allocator(duplicated).allocate(make_node(), [make_claim("c")])
    assert outcome == NodeFailure("invalid resource pools were encountered")
    other = [*duplicated, make_slice("c", [device("y")], pool="q")]
    assert picked(make_allocator(other).allocate(make_node(), [make_claim("c")])) == [
        [("req", "y")]
    ]


def test_configuration_from_class_and_claim() -> None:
    opaque = {"opaque": {"driver": DRIVER, "parameters": {"mode": "fast"}}}
    classes = [make_class("gpu", config=[opaque]), make_class("nic")]
    slices = [make_slice("s", gpus(3))]
    claim = make_claim(
        "c",
        exactly("a"),
        first_available("b", exactly("x", "nic", selectors=("false",)), exactly("y", "gpu")),
        config=[
            {"requests": ["a"], **opaque},
            {"requests": ["b/y"], **opaque},
            {"requests": ["b/x"], **opaque},
            {**opaque},
        ],
    )
    outcome = make_allocator(slices, classes).allocate(make_node(), [claim])
    assert picked(outcome) == [[("a", "gpu-0"), ("b/y", "gpu-1")]]
    assert isinstance(outcome, Allocated)
    assert [(config.source, config.requests) for config in outcome.results[0].config] == [
        ("FromClass", ()),  # names a and b/y: every request, so "all"
        ("FromClaim", ("a",)),
        ("FromClaim", ("b/y",)),
        ("FromClaim", ()),
    ]


def test_devices_ids_and_steps_are_reported() -> None:
    outcome = make_allocator([make_slice("s", gpus(1))]).allocate(make_node(), [make_claim("c")])
    assert isinstance(outcome, Allocated) and outcome.steps > 0
    assert outcome.results[0].devices[0].id == DeviceID(DRIVER, "node-a", "gpu-0")


def test_a_shared_device_charges_its_counters_once() -> None:
    counters = make_slice(
        "counters",
        None,
        count=2,
        sharedCounters=[{"name": "cs", "counters": {"mem": {"value": "2"}}}],
    )
    shared = device(
        "nic",
        allowMultipleAllocations=True,
        consumesCounters=[{"counterSet": "cs", "counters": {"mem": {"value": "2"}}}],
    )
    slices = [counters, make_slice("devices", [shared], count=2)]
    outcome = make_allocator(slices).allocate(make_node(), [make_claim("a"), make_claim("b")])
    assert picked(outcome) == [[("req", "nic")], [("req", "nic")]]
    taken = allocated_claim("old", "nic", shareID="x")
    assert picked(
        make_allocator(slices, allocated=[taken]).allocate(make_node(), [make_claim("a")])
    ) == [[("req", "nic")]]


def test_a_node_whose_labels_change_gets_its_pools_again() -> None:
    zone = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
        ]
    }
    slices = [make_slice("s", [device("fpga")], node=None, nodeSelector=zone, pool="shared")]
    allocator = make_allocator(slices)
    assert isinstance(
        allocator.allocate(make_node("n", {"zone": "b"}), [make_claim("c")]), CannotAllocate
    )
    assert picked(allocator.allocate(make_node("n", {"zone": "a"}), [make_claim("c")])) == [
        [("req", "fpga")]
    ]


def test_selectors_see_capacity_as_quantities() -> None:
    devices = [
        device("small", capacity={"memory": {"value": "20Gi"}}),
        device("big", capacity={"memory": {"value": "80Gi"}}),
    ]
    allocator = make_allocator([make_slice("s", devices)])
    claim = make_claim(
        "c", exactly(selectors=(f'device.capacity["{DRIVER}"].memory >= {40 * 2**30}',))
    )
    assert picked(allocator.allocate(make_node(), [claim])) == [[("req", "big")]]


def test_admin_access_within_one_pod_follows_upstream() -> None:
    # Upstream's cases "admin-access-claims-device-allocating-for-non-admin-access" and
    # "all-devices-some-allocating-admin-access".
    allocator = make_allocator([make_slice("s", gpus(2))])
    admin = make_claim("admin", exactly(adminAccess=True))
    assert picked(allocator.allocate(make_node(), [make_claim("plain"), admin])) == [
        [("req", "gpu-0")],
        [("req", "gpu-0")],
    ]
    both_admin = make_claim(
        "c", exactly("one", adminAccess=True), exactly("all", mode="All", adminAccess=True)
    )
    assert isinstance(allocator.allocate(make_node(), [both_admin]), CannotAllocate)


def test_an_allocation_says_where_its_devices_can_be_used() -> None:
    outcome = make_allocator([make_slice("s", gpus(1))]).allocate(make_node(), [make_claim("c")])
    assert isinstance(outcome, Allocated)
    local = outcome.results[0]
    assert local.available_on(node_name="node-a", labels={})
    assert not local.available_on(node_name="node-b", labels={})
    anywhere = make_slice("s", gpus(1), node=None, allNodes=True)
    outcome = make_allocator([anywhere]).allocate(make_node(), [make_claim("c")])
    assert isinstance(outcome, Allocated)
    assert outcome.results[0].available_on(node_name="node-b", labels={})
