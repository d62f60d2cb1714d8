"""The allocator against a plain exhaustive reference on small random device pools.

Same answer (the very same devices for the same requests, in kube-scheduler's order) or
both impossible; and every allocation returned passes the reference's validity check.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.dra.allocated_state import AllocatedState
from berth.engine.dra.allocations import AllocatedDevice, AllocationResult
from berth.engine.dra.allocator import Allocated, Allocator, CannotAllocate
from berth.engine.dra.claims import ResourceClaim
from berth.engine.dra.pools import SliceIndex
from berth.engine.dra.slices import ResourceSlice
from berth.engine.dra.values import Amount, QualifiedName
from berth.engine.model.quantity import parse_quantity
from tests.unit.engine.dra.dra_builders import (
    DRIVER,
    FakeCel,
    device,
    exactly,
    make_class,
    make_node,
    selectors,
    share_ids,
    slice_dict,
)
from tests.unit.engine.reference.dra_allocation import (
    Choice,
    ordered_devices,
    reference_allocation,
    valid,
)

NIC = "nic.example.com"
ROOT_IS_0 = f'device.attributes["{DRIVER}"].root == 0'
KIND_IS_A = f'device.attributes["{DRIVER}"].kind == "a"'
ONE = Amount.of(parse_quantity("1"))
CLASSES = {item.name: item for item in (make_class("gpu"), make_class("kind-a", (KIND_IS_A,)))}


@st.composite
def pools(draw: st.DrawFn) -> list[ResourceSlice]:
    slices: list[ResourceSlice] = []
    budget = 6  # devices in all, so that the exhaustive reference stays quick
    names = iter(draw(st.permutations([f"s-{letter}" for letter in "abcdefghijkl"])))
    pool_ids = draw(
        st.lists(
            st.tuples(st.sampled_from([DRIVER, NIC]), st.sampled_from(["p0", "p1"])),
            min_size=1,
            max_size=3,
            unique=True,
        )
    )
    for driver, pool in pool_ids:
        counters = draw(st.booleans())
        device_slices = draw(st.integers(1, 2))
        total = device_slices + counters
        raws: list[dict[str, Any]] = []
        if counters:
            shared = [{"name": "cs", "counters": {"mem": {"value": str(draw(st.integers(1, 4)))}}}]
            raws.append(
                slice_dict(
                    next(names), None, driver=driver, pool=pool, count=total, sharedCounters=shared
                )
            )
        index = 0
        for _ in range(device_slices):
            devices = []
            for _ in range(draw(st.integers(1 if budget else 0, min(3, budget)))):
                devices.append(_device(draw, f"d{index}", counters))
                index += 1
                budget -= 1
            raws.append(slice_dict(next(names), devices, driver=driver, pool=pool, count=total))
        slices.extend(ResourceSlice.from_dict(raw) for raw in raws)
    return slices


def _device(draw: st.DrawFn, name: str, counters: bool) -> dict[str, Any]:
    attrs: dict[str, Any] = {"kind": draw(st.sampled_from(["a", "b"]))}
    if draw(st.integers(0, 4)):
        attrs["root"] = draw(st.integers(0, 1))
    fields: dict[str, Any] = {}
    if draw(st.integers(0, 4)) == 0:
        fields["taints"] = [
            {"key": "t", "value": "x", "effect": draw(st.sampled_from(["NoSchedule", "None"]))}
        ]
    if draw(st.integers(0, 4)) == 0:
        fields["allowMultipleAllocations"] = True
        fields["capacity"] = {"bw": {"value": str(draw(st.integers(1, 3)))}}
    if counters and draw(st.booleans()):
        fields["consumesCounters"] = [
            {"counterSet": "cs", "counters": {"mem": {"value": str(draw(st.integers(1, 2)))}}}
        ]
    if draw(st.integers(0, 7)) == 0:
        fields["bindingConditions"] = ["ready"]
    return device(name, attrs, **fields)


@st.composite
def request_specs(draw: st.DrawFn, name: str, *, subrequest: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if draw(st.integers(0, 3)) == 0:
        fields["selectors"] = (ROOT_IS_0,)
    if not subrequest and draw(st.integers(0, 4)) == 0:
        fields["adminAccess"] = True
    if draw(st.booleans()):
        fields["tolerations"] = [{"key": "t", "operator": "Exists"}]
    if draw(st.integers(0, 3)) == 0:
        fields["capacity"] = {"requests": {"bw": str(draw(st.integers(1, 2)))}}
    return exactly(
        name,
        draw(st.sampled_from(sorted(CLASSES))),
        count=draw(st.sampled_from([1, 1, 2])),
        **fields,
    )


@st.composite
def claims(draw: st.DrawFn, name: str) -> ResourceClaim:
    requests = []
    exact_names = []
    has_all = False
    for index in range(draw(st.integers(1, 2))):
        request_name = f"r{index}"
        kind = draw(st.sampled_from(["exact", "exact", "first", "all"]))
        if kind == "exact":
            requests.append(draw(request_specs(request_name, subrequest=False)))
            exact_names.append(request_name)
        elif kind == "first":
            subs = [draw(request_specs(f"s{sub}", subrequest=True)) for sub in range(2)]
            requests.append(
                {
                    "name": request_name,
                    "firstAvailable": [{"name": s["name"], **s["exactly"]} for s in subs],
                }
            )
            exact_names.append(draw(st.sampled_from([request_name, f"{request_name}/s0"])))
        else:
            requests.append(
                exactly(
                    request_name,
                    "gpu",
                    mode="All",
                    selectors=draw(st.sampled_from([(), (KIND_IS_A,)])),
                )
            )
            has_all = True
    constraints = []
    if exact_names and draw(st.integers(0, 2)):
        kind = draw(st.sampled_from(["matchAttribute", "distinctAttribute"]))
        attribute = draw(st.sampled_from([f"{DRIVER}/root", f"{DRIVER}/kind"]))
        names = exact_names if has_all or draw(st.booleans()) else []
        constraints.append({kind: attribute, "requests": names})
    devices: dict[str, Any] = {"requests": requests, "constraints": constraints}
    return ResourceClaim.from_dict(
        {"metadata": {"name": name, "namespace": "ns"}, "spec": {"devices": devices}}
    )


@st.composite
def allocated_states(draw: st.DrawFn, slices: list[ResourceSlice]) -> AllocatedState:
    results = []
    for option in ordered_devices(slices):
        taken = draw(st.integers(0, 4)) == 0
        if not taken:
            continue
        # A shared device is taken by a share that consumed one unit of its capacity.
        share: dict[str, Any] = (
            {"share_id": "old", "consumed_capacity": {QualifiedName("bw"): ONE}}
            if option.device.allow_multiple_allocations
            else {}
        )
        driver, pool, name = option.id
        results.append(AllocatedDevice(request="r", driver=driver, pool=pool, device=name, **share))
    return AllocatedState.of([AllocationResult(devices=tuple(results))])


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[ResourceSlice], list[ResourceClaim], AllocatedState]:
    slices = draw(pools())
    pod_claims = [draw(claims(f"c{index}")) for index in range(draw(st.integers(1, 2)))]
    return slices, pod_claims, draw(allocated_states(slices))


def _as_choices(
    outcome: Allocated, pod_claims: list[ResourceClaim], slices: list[ResourceSlice]
) -> list[list[Choice]]:
    """The allocator's result in the reference's terms (grouping devices by request)."""
    options = {option.id: option for option in ordered_devices(slices)}
    assignment: list[list[Choice]] = []
    for claim, result in zip(pod_claims, outcome.results, strict=True):
        choices = []
        for request in claim.spec.requests:
            picked = [
                device for device in result.devices if device.request.split("/")[0] == request.name
            ]
            parent = bool(request.first_available)
            sub_name = picked[0].request.split("/")[1] if parent and picked else None
            spec = (
                next(s for s in request.first_available if s.name == sub_name)
                if parent
                else request.exactly
            )
            assert spec is not None
            choices.append(Choice(request.name, spec, parent, tuple(options[d.id] for d in picked)))
        assignment.append(choices)
    return assignment


def _picks(assignment: list[list[Choice]]) -> list[list[tuple[str, str]]]:
    return [
        [(choice.name, str(option.id)) for choice in choices for option in choice.devices]
        for choices in assignment
    ]


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_the_allocator_picks_what_an_exhaustive_search_picks(
    scenario: tuple[list[ResourceSlice], list[ResourceClaim], AllocatedState],
) -> None:
    slices, pod_claims, state = scenario
    cel = FakeCel()
    allocator = Allocator(
        slices=SliceIndex(slices),
        classes=CLASSES,
        allocated=state,
        selectors=selectors(cel),
        new_share_id=share_ids(),
    )
    outcome = allocator.allocate(make_node(), pod_claims)
    expected = reference_allocation(
        claims=pod_claims, slices=slices, classes=CLASSES, allocated=state, compile_selector=cel
    )
    if expected is None:
        assert isinstance(outcome, CannotAllocate)
        return
    assert isinstance(outcome, Allocated)
    got = _as_choices(outcome, pod_claims, slices)
    assert valid(got, pod_claims, state, slices)
    assert _picks(got) == _picks(expected)
