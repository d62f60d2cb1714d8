"""The DRA kinds reach the cache: watched through kopf event handlers, parsed once, malformed
objects skipped with a clear warning, re-listed when Berth starts leading."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from berth.kube import handlers
from berth.kube.dra_kinds import DRA_KINDS
from tests.unit.engine.dra.dra_builders import gpus, slice_dict
from tests.unit.kube.fakes import Call, FakeSession, api_error
from tests.unit.kube.test_storage_watches import make_app
from tests.unit.kube.watched_objects import deliver, held_keys

ONE_OF_EACH: dict[str, dict[str, Any]] = {
    "DeviceClass": {"metadata": {"name": "gpu"}, "spec": {}},
    "ResourceClaim": {
        "metadata": {"name": "c", "namespace": "ns", "uid": "u1"},
        "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}},
    },
    "ResourceSlice": slice_dict("node-a-gpus", gpus(2)),
    "DeviceTaintRule": {
        "metadata": {"name": "broken-gpu"},
        "spec": {
            "deviceSelector": {"device": "gpu-1"},
            "taint": {"key": "broken", "effect": "NoSchedule"},
        },
    },
}


def test_every_dra_kind_has_a_handler_and_a_list_path() -> None:
    assert sorted(handlers.DRA_HANDLERS) == sorted(ONE_OF_EACH)
    assert [kind.list_path for kind in DRA_KINDS] == [
        "/apis/resource.k8s.io/v1/deviceclasses",
        "/apis/resource.k8s.io/v1/resourceclaims",
        "/apis/resource.k8s.io/v1/resourceslices",
        "/apis/resource.k8s.io/v1/devicetaintrules",
    ]


async def test_the_cache_serves_what_the_watch_delivered() -> None:
    app = make_app()
    for kind, raw in ONE_OF_EACH.items():
        await deliver(app, kind, "ADDED", raw)
    dra = app.scheduler.cache.cluster.dra
    assert list(dra.device_classes()) == ["gpu"]
    assert dra.claim("ns", "c") is not None
    (patched,) = dra.patched_slices()
    assert [[taint.key for taint in device.taints] for device in patched.devices] == [
        [],
        ["broken"],
    ]


def test_a_malformed_object_is_logged_and_the_last_good_version_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = make_app()
    app.on_dra_event("ResourceClaim", "ADDED", ONE_OF_EACH["ResourceClaim"])
    broken = {
        "metadata": {"name": "c", "namespace": "ns", "resourceVersion": "2"},
        "spec": {"devices": {"requests": [{"name": "g", "exactly": {"count": "two"}}]}},
    }
    with caplog.at_level(logging.WARNING):
        app.on_dra_event("ResourceClaim", "MODIFIED", broken)
        app.on_dra_event("ResourceSlice", "ADDED", slice_dict("bad", gpus(1), count=0))
        app.on_dra_event("DeviceClass", "DELETED", {"metadata": {}})
    claim = app.scheduler.cache.cluster.dra.claim("ns", "c")
    assert claim is not None and claim.resource_version == ""
    assert held_keys(app, "ResourceSlice") == []
    messages = [record.getMessage() for record in caplog.records]
    assert any(
        message.startswith("Ignoring an object Berth cannot read: ResourceClaim ns/c: ")
        for message in messages
    ), messages
    assert (
        "Ignoring an object Berth cannot read: ResourceSlice bad: "
        "spec.pool.resourceSliceCount: must be at least 1" in messages
    )
    assert "Ignoring a deleted DeviceClass without a readable metadata.name" in messages


async def test_starting_to_lead_relists_every_dra_kind() -> None:
    listed = {kind.list_path: [ONE_OF_EACH[kind.kind]] for kind in DRA_KINDS}

    def respond(call: Call) -> Any:
        return listed.get(call.path, [])

    app = make_app(FakeSession(responder=respond))
    app.on_dra_event("DeviceClass", None, {"metadata": {"name": "deleted-while-paused"}})
    await app._reconcile_from_api()
    for kind in DRA_KINDS:
        assert held_keys(app, kind.kind) == [kind.key_of(ONE_OF_EACH[kind.kind])], kind.kind


async def test_a_dra_kind_berth_may_not_list_is_reported_and_the_rest_still_listed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def respond(call: Call) -> Any:
        if call.path == "/apis/resource.k8s.io/v1/devicetaintrules":
            raise api_error(403, "Forbidden", "devicetaintrules is forbidden")
        if call.path == "/apis/resource.k8s.io/v1/deviceclasses":
            return [ONE_OF_EACH["DeviceClass"]]
        return []

    app = make_app(FakeSession(responder=respond))
    with caplog.at_level(logging.ERROR):
        await app._reconcile_from_api()
    assert app.synced
    assert held_keys(app, "DeviceClass") == ["gpu"]
    assert any(
        "Cannot list devicetaintrules" in record.getMessage()
        and "DynamicResources sees none" in record.getMessage()
        for record in caplog.records
    )
