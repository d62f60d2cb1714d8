"""Parsing resource.k8s.io/v1 objects: what is kept, and errors that name the object and field."""

from __future__ import annotations

from typing import Any

import pytest

from berth.engine.dra.allocations import parse_allocation
from berth.engine.dra.cel_semver import parse_semver
from berth.engine.dra.claims import ResourceClaim, ResourceClaimTemplate
from berth.engine.dra.classes import DeviceClass
from berth.engine.dra.slices import ResourceSlice
from berth.engine.errors import InvalidObjectError
from tests.unit.engine.dra.dra_builders import device, exactly, first_available, slice_dict


def test_a_slice_keeps_devices_capacity_counters_taints_and_binding_conditions() -> None:
    raw = slice_dict(
        "s",
        [
            device(
                "gpu-0",
                {
                    "model": "a100",
                    "memory": 40,
                    "healthy": True,
                    "driverVersion": parse_semver("1.2.3"),
                },
                capacity={
                    "memory": {
                        "value": "40Gi",
                        "requestPolicy": {
                            "default": "1Gi",
                            "validRange": {"min": "1Gi", "max": "40Gi", "step": "1Gi"},
                        },
                    }
                },
                consumesCounters=[{"counterSet": "gpu-0", "counters": {"mem": {"value": "10Gi"}}}],
                taints=[{"key": "broken", "effect": "NoSchedule"}],
                bindingConditions=["attached"],
                bindingFailureConditions=["failed"],
                bindsToNode=True,
                allowMultipleAllocations=True,
            )
        ],
    )
    parsed = ResourceSlice.from_dict(raw)
    assert parsed.driver == "gpu.example.com" and parsed.node.node_name == "node-a"
    gpu = parsed.devices[0]
    assert gpu.attributes == {
        "model": "a100",
        "memory": 40,
        "healthy": True,
        "driverVersion": parse_semver("1.2.3"),
    }
    memory = gpu.capacity["memory"]
    assert memory.value.text == "40Gi" and memory.value.units == 40 * 2**30
    assert memory.request_policy is not None and memory.request_policy.valid_range is not None
    assert memory.request_policy.valid_range.step is not None
    assert gpu.consumes_counters[0].counters["mem"].units == 10 * 2**30
    assert gpu.taints[0].effect == "NoSchedule"
    assert gpu.binding_conditions == ("attached",) and gpu.binds_to_node
    assert gpu.allow_multiple_allocations is True


def _slice_error(**spec: Any) -> str:
    raw = slice_dict("s", [device("d")], **spec)
    with pytest.raises(InvalidObjectError) as caught:
        ResourceSlice.from_dict(raw)
    return str(caught.value)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"driver": ""}, "ResourceSlice s: spec.driver: must be set"),
        (
            {"allNodes": True, "nodeName": "n"},
            "ResourceSlice s: spec: at most one of nodeName, nodeSelector, allNodes may be set",
        ),
        (
            {"node": None},
            "ResourceSlice s: spec: exactly one of nodeName, nodeSelector, allNodes, "
            "perDeviceNodeSelection must be set",
        ),
        (
            {"count": 0},
            "ResourceSlice s: spec.pool.resourceSliceCount: must be at least 1",
        ),
    ],
    ids=["no-driver", "two-node-selections", "no-node-selection", "no-slice-count"],
)
def test_slice_errors_name_the_field(spec: dict[str, Any], message: str) -> None:
    assert _slice_error(**spec) == message


def test_device_errors_name_the_device_field() -> None:
    bad_attribute = slice_dict("s", [{"name": "d", "attributes": {"x": {"int": 1, "string": "a"}}}])
    with pytest.raises(
        InvalidObjectError, match=r"spec\.devices\[0\]\.attributes\['x'\]: exactly one"
    ):
        ResourceSlice.from_dict(bad_attribute)
    bad_capacity = slice_dict("s", [{"name": "d", "capacity": {"mem": {"value": "lots"}}}])
    with pytest.raises(
        InvalidObjectError, match=r"ResourceSlice s: spec\.devices\[0\]\.capacity\['mem'\]\.value"
    ):
        ResourceSlice.from_dict(bad_capacity)


def _claim(*requests: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"devices": {"requests": list(requests)}},
    }


def test_a_claim_keeps_requests_with_api_defaults() -> None:
    claim = ResourceClaim.from_dict(
        _claim(
            exactly("one"),
            first_available("pick", exactly("big", count=2), exactly("small")),
            exactly("every", mode="All", adminAccess=True),
        )
    )
    one, pick, every = claim.spec.requests
    assert one.exactly is not None and one.exactly.count == 1
    assert one.exactly.allocation_mode == "ExactCount" and one.exactly.admin_access is None
    assert [sub.name for sub in pick.first_available] == ["big", "small"]
    assert pick.first_available[0].count == 2
    assert every.exactly is not None and every.exactly.allocation_mode == "All"
    assert every.exactly.admin_access is True and claim.key == "ns/c"


@pytest.mark.parametrize(
    ("request_raw", "message"),
    [
        (
            {"name": "r", "exactly": {"deviceClassName": "g"}, "firstAvailable": [{"name": "a"}]},
            "ResourceClaim ns/c: spec.devices.requests[0]: exactly one of exactly, "
            "firstAvailable must be set",
        ),
        (
            {"name": "r", "exactly": {}},
            "ResourceClaim ns/c: spec.devices.requests[0].exactly.deviceClassName: must be set",
        ),
        (
            {"name": "r", "exactly": {"deviceClassName": "g", "allocationMode": "Some"}},
            "ResourceClaim ns/c: spec.devices.requests[0].exactly.allocationMode: "
            "unsupported value 'Some'",
        ),
        (
            {"name": "r", "exactly": {"deviceClassName": "g", "allocationMode": "All", "count": 2}},
            "ResourceClaim ns/c: spec.devices.requests[0].exactly.count: must not be set when "
            "allocationMode is All",
        ),
        (
            {
                "name": "r",
                "firstAvailable": [{"name": "a", "deviceClassName": "g", "adminAccess": True}],
            },
            "ResourceClaim ns/c: spec.devices.requests[0].firstAvailable[0].adminAccess: "
            "is not allowed in a subrequest",
        ),
    ],
    ids=["both-shapes", "no-class", "bad-mode", "count-with-all", "admin-in-subrequest"],
)
def test_claim_errors_name_the_field(request_raw: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidObjectError) as caught:
        ResourceClaim.from_dict(_claim(request_raw))
    assert str(caught.value) == message


def test_a_constraint_attribute_must_be_fully_qualified() -> None:
    raw = _claim(exactly())
    raw["spec"]["devices"]["constraints"] = [{"matchAttribute": "pcieRoot"}]
    with pytest.raises(InvalidObjectError, match=r"constraints\[0\]: attribute pcieRoot must be"):
        ResourceClaim.from_dict(raw)


def test_a_template_carries_the_claim_spec_and_metadata() -> None:
    template = ResourceClaimTemplate.from_dict(
        {
            "metadata": {"name": "t", "namespace": "ns"},
            "spec": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {"devices": {"requests": [exactly("gpu")]}},
            },
        }
    )
    assert template.labels == {"app": "x"}
    assert template.spec.requests[0].name == "gpu"


def test_a_class_needs_cel_selectors() -> None:
    parsed = DeviceClass.from_dict(
        {
            "metadata": {"name": "gpu"},
            "spec": {
                "selectors": [{"cel": {"expression": "true"}}],
                "extendedResourceName": "example.com/gpu",
            },
        }
    )
    assert parsed.selectors == ("true",) and parsed.extended_resource_name == "example.com/gpu"
    with pytest.raises(
        InvalidObjectError, match=r"DeviceClass gpu: spec.selectors\[0\]: cel must be set"
    ):
        DeviceClass.from_dict({"metadata": {"name": "gpu"}, "spec": {"selectors": [{}]}})


def test_an_allocation_survives_a_round_trip_through_the_status() -> None:
    written = {
        "devices": {
            "results": [
                {
                    "request": "req/sub",
                    "driver": "d",
                    "pool": "p",
                    "device": "x",
                    "adminAccess": True,
                    "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
                    "bindingConditions": ["ready"],
                    "shareID": "abc",
                    "consumedCapacity": {"memory": "1Gi"},
                }
            ],
            "config": [{"source": "FromClass", "requests": ["req"], "opaque": {"driver": "d"}}],
        },
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}
            ]
        },
    }
    parsed = parse_allocation(written, "status.allocation")
    assert parsed.to_dict() == written
