"""The running tally of allocated devices agrees with a rebuild from every claim, always."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.cluster.dra import DraObjects
from berth.engine.dra.allocated_state import AllocatedState, AllocationTally
from berth.engine.dra.allocations import AllocationResult, parse_allocation
from berth.engine.dra.claims import ResourceClaim

_result = st.fixed_dictionaries(
    {"request": st.just("gpu"), "driver": st.just("gpu.example.com"), "pool": st.just("p")},
    optional={
        "adminAccess": st.booleans(),
        "shareID": st.sampled_from(["s1", "s2"]),
        "consumedCapacity": st.dictionaries(
            st.sampled_from(["memory", "cores"]), st.sampled_from(["1", "2Gi", "500m"])
        ),
    },
).flatmap(lambda fields: st.sampled_from(["d0", "d1", "d2"]).map(lambda d: {**fields, "device": d}))

_allocation = st.none() | st.lists(_result, min_size=1, max_size=3).map(
    lambda results: parse_allocation({"devices": {"results": results}}, "status.allocation")
)

# (claim name, what it holds now); None: the claim is deleted
_changes = st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]), _allocation), max_size=25)


@settings(max_examples=200, deadline=None)
@given(_changes)
def test_the_tally_equals_a_rebuild_after_every_change(
    changes: list[tuple[str, AllocationResult | None]],
) -> None:
    tally = AllocationTally()
    held: dict[str, AllocationResult] = {}
    for key, allocation in changes:
        tally.set(key, allocation)
        if allocation is None:
            held.pop(key, None)
        else:
            held[key] = allocation
        assert tally.state() == AllocatedState.of(held.values())


def _claim(name: str, version: int, allocation: AllocationResult | None) -> ResourceClaim:
    raw: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "ns", "uid": name, "resourceVersion": str(version)},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "g"}}]}},
    }
    return replace(ResourceClaim.from_dict(raw), allocation=allocation)


_operations = st.lists(
    st.tuples(
        st.sampled_from(["upsert", "remove", "assume", "restore", "hold", "release"]),
        st.sampled_from(["a", "b", "c"]),
        _allocation,
    ),
    max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(_operations)
def test_the_cache_sees_every_claim_change_api_assumed_and_in_flight(
    operations: list[tuple[str, str, AllocationResult | None]],
) -> None:
    dra = DraObjects()
    for version, (operation, name, allocation) in enumerate(operations, start=1):
        held = dra.claims.get_api(f"ns/{name}")
        if operation == "upsert":
            dra.upsert(_claim(name, version, allocation))
        elif operation == "remove":
            dra.remove("ResourceClaim", f"ns/{name}")
        elif operation == "assume" and held is not None and not dra.is_assumed("ns", name):
            dra.assume_claim(_claim(name, int(held.resource_version), allocation))
        elif operation == "restore":
            dra.restore_claim("ns", name)
        elif operation == "hold":  # an in-memory claim (extended resources), by its UID
            dra.hold_in_flight(replace(_claim(name, version, allocation), uid=f"tmp-{name}"))
        elif operation == "release":
            dra.release_in_flight(f"tmp-{name}")
        held = (*dra.claims.values(), *dra.in_flight_claims())
        rebuilt = AllocatedState.of(
            claim.allocation for claim in held if claim.allocation is not None
        )
        assert dra.allocated_state() == rebuilt
