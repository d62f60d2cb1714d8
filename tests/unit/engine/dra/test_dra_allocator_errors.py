"""Every way the allocator refuses a claim, in kube-scheduler's words."""

from __future__ import annotations

import itertools

import pytest

from berth.engine.dra.allocator import CannotAllocate
from berth.engine.dra.claims import ResourceClaim
from berth.engine.dra.errors import AllocationError, AllocationTimeout
from tests.unit.engine.dra.dra_builders import (
    FakeCel,
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


def _error(claim: ResourceClaim, *, classes: list | None = None, slices: list | None = None) -> str:
    allocator = make_allocator(slices or [make_slice("s", gpus(2))], classes)
    with pytest.raises(AllocationError) as caught:
        allocator.allocate(make_node(), [claim])
    return str(caught.value)


def test_a_missing_class() -> None:
    assert _error(make_claim("c", exactly("req", "tpu"))) == (
        "claim default/c, request req: could not retrieve device class tpu: "
        'deviceclass.resource.k8s.io "tpu" not found'
    )


def test_cel_compile_and_runtime_errors_name_class_or_claim() -> None:
    assert _error(make_claim("c"), classes=[make_class("gpu", ("true", "nonsense"))]) == (
        "class gpu: selector #1: CEL compile error: undeclared reference in 'nonsense'"
    )
    assert _error(make_claim("c", exactly(selectors=("fail()",)))) == (
        "claim default/c: selector #0 on device gpu.example.com/node-a/gpu-0: "
        "CEL runtime error: no such overload"
    )


def test_each_expression_is_compiled_once() -> None:
    cel = FakeCel()
    allocator = make_allocator([make_slice("s", gpus(4))], [make_class("gpu", ("true",))], cel=cel)
    claim = make_claim("c", exactly(count=4, selectors=("true && true",)))
    allocator.allocate(make_node(), [claim])
    allocator.allocate(make_node("node-b"), [claim])
    assert sorted(cel.compiled) == ["true", "true && true"]


def test_a_selector_of_an_unknown_type() -> None:
    claim = ResourceClaim.from_dict(
        {
            "metadata": {"name": "c", "namespace": "default"},
            "spec": {
                "devices": {
                    "requests": [
                        {"name": "req", "exactly": {"deviceClassName": "gpu", "selectors": [{}]}}
                    ]
                }
            },
        }
    )
    assert _error(claim) == (
        "claim default/c, request req, selector #0: CEL expression empty (unsupported selector type?)"
    )


def test_an_empty_constraint() -> None:
    claim = make_claim("c", constraints=[{"requests": ["req"]}])
    assert (
        _error(claim)
        == "claim default/c, constraint #0: empty constraint (unsupported constraint type?)"
    )


def test_too_many_devices_for_one_claim() -> None:
    claim = make_claim("c", exactly("a", count=30), exactly("b", count=3))
    assert _error(claim) == (
        "claim default/c, request b: adding 3 devices exceeds the claim limit of 32, "
        "with 30 already accounted for"
    )
    # firstAvailable counts its smallest alternative; a bigger one that does not fit
    # is skipped in favour of the next.
    fallback = make_claim(
        "c", exactly("a", count=30), first_available("b", exactly("x", count=3), exactly("y"))
    )
    outcome = make_allocator([make_slice("s", gpus(40))]).allocate(make_node(), [fallback])
    assert not isinstance(outcome, CannotAllocate)


def test_all_devices_with_a_constraint_that_cannot_hold() -> None:
    devices = [device("a", {"root": "x"}), device("b", {"root": "y"})]
    claim = make_claim(
        "c", exactly(mode="All"), constraints=[{"matchAttribute": "gpu.example.com/root"}]
    )
    assert _error(claim, slices=[make_slice("s", devices)]) == (
        "claim default/c, request req: cannot add device gpu.example.com/node-a/b because a "
        "claim constraint would not be satisfied"
    )


def test_all_devices_while_a_pool_is_incomplete_or_invalid() -> None:
    claim = make_claim("c", exactly(mode="All"))
    assert _error(claim, slices=[make_slice("s", gpus(1), count=2)]) == (
        "claim default/c, request req: asks for all devices, but resource pool "
        "gpu.example.com/node-a is currently being updated"
    )
    duplicated = [make_slice("a", gpus(1), count=2), make_slice("b", gpus(1), count=2)]
    assert _error(claim, slices=duplicated) == (
        "claim default/c, request req: asks for all devices, but resource pool "
        "gpu.example.com/node-a is currently invalid"
    )


def test_a_capacity_request_beyond_int64() -> None:
    shared = device(
        "nic",
        allowMultipleAllocations=True,
        capacity={
            "bw": {"value": "100E", "requestPolicy": {"validRange": {"min": "1", "step": "2"}}}
        },
    )
    claim = make_claim("c", exactly(capacity={"requests": {"bw": "10E"}}))
    assert _error(claim, slices=[make_slice("s", [shared])]) == (
        "claim default/c, request req: checking capacity for device gpu.example.com/node-a/nic: "
        'capacity "bw": capacity request cannot be represented in the device\'s range '
        "arithmetic: request 10E exceeds MaxInt64"
    )


def test_the_deadline_stops_the_search() -> None:
    ticks = itertools.count()
    allocator = make_allocator([make_slice("s", gpus(8))], clock=lambda: float(next(ticks)))
    claim = make_claim("c", exactly(count=4))
    with pytest.raises(AllocationTimeout) as caught:
        allocator.allocate(make_node(), [claim], deadline=3.0)
    assert str(caught.value) == "filter operation aborted: context deadline exceeded"
    assert not isinstance(allocator.allocate(make_node(), [claim]), CannotAllocate)
