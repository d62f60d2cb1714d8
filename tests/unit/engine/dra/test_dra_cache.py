"""The cluster's DRA cache: lookups, assumed allocations, and what it derives lazily."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from berth.engine.cluster.dra import DraObjects, dra_kind
from berth.engine.cluster.state import ClusterState
from berth.engine.cluster.storage_assume import AssumeConflictError
from berth.engine.dra.allocations import AllocationResult, parse_allocation
from berth.engine.dra.claims import ResourceClaim
from berth.engine.dra.taint_rules import DeviceTaintRule
from berth.engine.dra.values import DeviceID
from berth.engine.errors import InvalidObjectError
from tests.unit.engine.dra.dra_builders import DRIVER, gpus, make_class, make_node, make_slice


def _claim(name: str, *, version: str = "1", devices: tuple[str, ...] = ()) -> ResourceClaim:
    raw: dict[str, Any] = {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "resourceVersion": version,
        },
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
    }
    if devices:
        raw["status"] = {"allocation": _allocation_dict(devices)}
    return ResourceClaim.from_dict(raw)


def _allocation_dict(devices: tuple[str, ...]) -> dict[str, Any]:
    return {
        "devices": {
            "results": [
                {"request": "gpu", "driver": DRIVER, "pool": "node-a", "device": name}
                for name in devices
            ]
        }
    }


def _allocation(*devices: str) -> AllocationResult:
    return parse_allocation(_allocation_dict(devices), "status.allocation")


def _gpu(name: str) -> DeviceID:
    return DeviceID(DRIVER, "node-a", name)


def _rule(name: str, **selector: str) -> DeviceTaintRule:
    return DeviceTaintRule.from_dict(
        {
            "metadata": {"name": name, "resourceVersion": "1"},
            "spec": {
                "deviceSelector": selector,
                "taint": {"key": "broken", "value": "yes", "effect": "NoSchedule"},
            },
        }
    )


def test_the_cluster_carries_the_dra_cache() -> None:
    assert isinstance(ClusterState().dra, DraObjects)


def test_lookups_by_name_and_namespace() -> None:
    dra = DraObjects()
    dra.upsert(make_class("gpu"))
    dra.upsert(_claim("c1"))
    assert dra.device_class("gpu") == make_class("gpu")
    assert dra.device_class("other") is None
    assert list(dra.device_classes()) == ["gpu"]
    assert dra.claim("ns", "c1") == _claim("c1")
    assert dra.claim("default", "c1") is None
    assert [dra_kind(obj) for obj in dra.held("ResourceClaim").values()] == ["ResourceClaim"]


def test_allocated_state_counts_allocated_and_assumed_claims() -> None:
    dra = DraObjects()
    dra.upsert(_claim("done", devices=("gpu-0",)))
    dra.upsert(_claim("pending"))
    assert dra.allocated_state().devices == {_gpu("gpu-0")}

    pending = dra.claim("ns", "pending")
    assert pending is not None
    dra.assume_claim(dataclasses.replace(pending, allocation=_allocation("gpu-1")))
    assert dra.is_assumed("ns", "pending")
    assert dra.allocated_state().devices == {_gpu("gpu-0"), _gpu("gpu-1")}
    assert [claim.name for claim in dra.assumed_claims()] == ["pending"]

    dra.restore_claim("ns", "pending")  # Unreserve
    assert dra.allocated_state().devices == {_gpu("gpu-0")}
    assert not dra.is_assumed("ns", "pending")


def test_allocated_state_is_kept_until_a_claim_changes() -> None:
    dra = DraObjects()
    dra.upsert(_claim("done", devices=("gpu-0",)))
    first = dra.allocated_state()
    dra.upsert(make_class("gpu"))
    dra.upsert(make_slice("s", gpus(1)))
    assert dra.allocated_state() is first
    dra.remove("ResourceClaim", "ns/done")
    assert dra.allocated_state().devices == frozenset()


def test_the_api_version_written_after_prebind_replaces_the_assumption() -> None:
    dra = DraObjects()
    dra.upsert(_claim("c", version="5"))
    reserved = dataclasses.replace(_claim("c", version="5"), allocation=_allocation("gpu-0"))
    dra.assume_claim(reserved)
    dra.upsert(_claim("c", version="5"))  # a re-list repeating the old version
    assert dra.claim("ns", "c") == reserved

    written = _claim("c", version="6", devices=("gpu-0",))
    dra.assume_claim(written)  # what the status write returned, before the watch has it
    assert dra.claim("ns", "c") == written
    dra.upsert(written)  # the watch catches up
    assert not dra.is_assumed("ns", "c")
    assert dra.allocated_state().devices == {_gpu("gpu-0")}


def test_a_newer_api_version_wins_over_the_assumption() -> None:
    dra = DraObjects()
    dra.upsert(_claim("c", version="5"))
    dra.assume_claim(dataclasses.replace(_claim("c", version="5"), allocation=_allocation("x")))
    dra.upsert(_claim("c", version="7"))
    assert not dra.is_assumed("ns", "c")
    assert dra.claim("ns", "c") == _claim("c", version="7")


@pytest.mark.parametrize(
    ("stored", "problem"),
    [(None, "ResourceClaim 'ns/c' is not in the cache"), ("9", r"out of sync \(stored: 9")],
    ids=["missing", "stale-copy"],
)
def test_assuming_needs_a_version_at_least_as_new(stored: str | None, problem: str) -> None:
    dra = DraObjects()
    if stored is not None:
        dra.upsert(_claim("c", version=stored))
    with pytest.raises(AssumeConflictError, match=problem):
        dra.assume_claim(_claim("c", version="8"))


def test_the_slice_index_is_rebuilt_only_when_slices_or_rules_change() -> None:
    dra = DraObjects()
    dra.upsert(make_slice("s1", gpus(2)))
    index = dra.slice_index()
    dra.upsert(_claim("c"))
    dra.upsert(make_class("gpu"))
    assert dra.slice_index() is index
    dra.upsert(make_slice("s2", gpus(1), node="node-b"))
    assert dra.slice_index() is not index
    pools = dra.slice_index().pools_for(make_node("node-b"))
    assert [str(pool.id) for pool in pools] == [f"{DRIVER}/node-b"]


def test_taint_rules_patch_the_matching_devices() -> None:
    dra = DraObjects()
    dra.upsert(make_slice("s1", gpus(2)))
    dra.upsert(_rule("one-gpu", driver=DRIVER, device="gpu-1"))
    dra.upsert(_rule("other-driver", driver="nic.example.com"))
    (patched,) = dra.patched_slices()
    assert [len(device.taints) for device in patched.devices] == [0, 1]
    (pool,) = dra.slice_index().pools_for(make_node("node-a"))
    taints = [candidate.device.taints for candidate in pool.slices[0].candidates]
    assert [len(found) for found in taints] == [0, 1]
    dra.remove("DeviceTaintRule", "one-gpu")
    (pool,) = dra.slice_index().pools_for(make_node("node-a"))
    assert all(not candidate.device.taints for candidate in pool.slices[0].candidates)


def test_a_rule_without_selector_taints_nothing() -> None:
    rule = DeviceTaintRule.from_dict(
        {"metadata": {"name": "r"}, "spec": {"taint": {"key": "k", "effect": "NoExecute"}}}
    )
    dra = DraObjects()
    dra.upsert(make_slice("s1", gpus(1)))
    dra.upsert(rule)
    assert all(not device.taints for device in dra.patched_slices()[0].devices)


def test_every_change_moves_the_generation() -> None:
    dra = DraObjects()
    seen = [dra.generation]
    for change in (
        lambda: dra.upsert(make_class("gpu")),
        lambda: dra.upsert(_claim("c")),
        lambda: dra.assume_claim(_claim("c")),
        lambda: dra.restore_claim("ns", "c"),
        lambda: dra.upsert(make_slice("s", gpus(1))),
        lambda: dra.upsert(_rule("r")),
        lambda: dra.remove("DeviceTaintRule", "r"),
        lambda: dra.remove("ResourceSlice", "s"),
        lambda: dra.remove("ResourceClaim", "ns/c"),
        lambda: dra.remove("DeviceClass", "gpu"),
    ):
        change()
        assert dra.generation > seen[-1]
        seen.append(dra.generation)
    generation = dra.generation
    dra.remove("ResourceSlice", "gone")
    dra.restore_claim("ns", "gone")
    assert dra.generation == generation


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="not a DRA kind: 'Pod'"):
        DraObjects().remove("Pod", "x")
    with pytest.raises(ValueError, match="not a DRA kind: 'Pod'"):
        DraObjects().held("Pod")


def test_a_generated_claim_knows_its_controlling_pod() -> None:
    claim = ResourceClaim.from_dict(
        {
            "metadata": {
                "name": "p-gpu-abcde",
                "namespace": "ns",
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "pod-uid"},
                    {"kind": "Pod", "name": "p", "uid": "controller-uid", "controller": True},
                ],
            },
            "spec": {"devices": {"requests": []}},
        }
    )
    assert claim.controller_uid == "controller-uid"


def test_a_malformed_taint_rule_names_the_field() -> None:
    with pytest.raises(
        InvalidObjectError, match=r"DeviceTaintRule r: spec\.taint\.effect: must be set"
    ):
        DeviceTaintRule.from_dict(
            {"metadata": {"name": "r"}, "spec": {"deviceSelector": {}, "taint": {"key": "k"}}}
        )


def test_assumptions_are_reported_as_upstreams_assume_cache_reports_them() -> None:
    dra = DraObjects()
    heard: list[tuple[str, str]] = []
    dra.on_claim_assumption = lambda old, new: heard.append(
        (old.resource_version, new.resource_version)
    )
    dra.upsert(_claim("c", version="5"))
    in_flight = dataclasses.replace(_claim("c", version="5"), allocation=_allocation("gpu-0"))
    dra.assume_claim(in_flight)  # Reserve: in flight upstream, outside the assume cache
    dra.restore_claim("ns", "c")  # Unreserve before any write
    assert heard == []

    written = _claim("c", version="6", devices=("gpu-0",))
    dra.assume_claim(written)  # PreBind: what the status write returned
    dra.restore_claim("ns", "c")  # Unreserve after the write
    assert heard == [("5", "6"), ("6", "5")]
