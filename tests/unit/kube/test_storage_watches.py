"""The storage kinds reach the cache: watched through kopf event handlers, parsed once, malformed
objects skipped with a clear warning, re-listed when Berth starts leading."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from berth.kube import handlers
from berth.kube.storage_kinds import STORAGE_KINDS
from tests.storage_builders import (
    make_attachment,
    make_capacity,
    make_class,
    make_csi_driver,
    make_csi_node,
    make_pv,
    make_pvc,
)
from tests.unit.kube.fakes import Call, FakeSession, api_error, make_app
from tests.unit.kube.watched_objects import held_keys

ONE_OF_EACH: dict[str, dict[str, Any]] = {
    "PersistentVolumeClaim": make_pvc("data", "ns").obj(),
    "PersistentVolume": make_pv("pv1").obj(),
    "StorageClass": make_class("fast").obj(),
    "CSINode": make_csi_node("n1").driver("d", count=2).obj(),
    "CSIDriver": make_csi_driver("d").obj(),
    "CSIStorageCapacity": make_capacity("cap", "fast").obj(),
    "VolumeAttachment": make_attachment("va", attacher="d", node="n1", pv="pv1").obj(),
}


def test_every_storage_kind_has_a_handler_and_a_list_path() -> None:
    assert sorted(handlers.STORAGE_HANDLERS) == sorted(ONE_OF_EACH)
    assert [kind.list_path for kind in STORAGE_KINDS] == [
        "/api/v1/persistentvolumeclaims",
        "/api/v1/persistentvolumes",
        "/apis/storage.k8s.io/v1/storageclasses",
        "/apis/storage.k8s.io/v1/csinodes",
        "/apis/storage.k8s.io/v1/csidrivers",
        "/apis/storage.k8s.io/v1/csistoragecapacities",
        "/apis/storage.k8s.io/v1/volumeattachments",
    ]


def test_a_malformed_object_is_logged_and_the_last_good_version_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = make_app()
    app.on_storage_event("PersistentVolumeClaim", "ADDED", make_pvc("good", "ns").obj())
    broken = make_pvc("good", "ns").request("plenty").version("2").obj()
    with caplog.at_level(logging.WARNING):
        app.on_storage_event("PersistentVolumeClaim", "MODIFIED", broken)
        app.on_storage_event("StorageClass", "ADDED", make_class("s").set("provisioner", 3).obj())
        app.on_storage_event("PersistentVolume", "DELETED", {"metadata": {}})
    claim = app.scheduler.cache.cluster.storage.claim("ns", "good")
    assert claim is not None and claim.resource_version == "1"
    assert held_keys(app, "StorageClass") == []
    messages = [record.getMessage() for record in caplog.records]
    assert (
        "Ignoring an object Berth cannot read: PersistentVolumeClaim ns/good: "
        "spec.resources.requests.storage: invalid quantity 'plenty'" in messages
    )
    assert (
        "Ignoring an object Berth cannot read: StorageClass s: provisioner: "
        "expected a string, got 3" in messages
    )
    assert "Ignoring a deleted PersistentVolume without a readable metadata.name" in messages


async def test_starting_to_lead_relists_every_storage_kind() -> None:
    listed = {kind.list_path: [ONE_OF_EACH[kind.kind]] for kind in STORAGE_KINDS}

    def respond(call: Call) -> Any:
        return listed.get(call.path, [])

    app = make_app(FakeSession(responder=respond))
    app.on_storage_event("PersistentVolume", None, make_pv("deleted-while-paused").obj())
    await app._reconcile_from_api()
    for kind in STORAGE_KINDS:
        assert held_keys(app, kind.kind) == [kind.key_of(ONE_OF_EACH[kind.kind])], kind.kind


async def test_the_watch_wins_over_a_listing_taken_meanwhile() -> None:
    app = make_app()

    def respond(call: Call) -> Any:
        if call.path != "/api/v1/persistentvolumes":
            return []
        app.on_storage_event("PersistentVolume", "ADDED", make_pv("created").obj())
        app.on_storage_event("PersistentVolume", "DELETED", make_pv("deleted").obj())
        return [make_pv("deleted").obj(), make_pv("listed").obj()]

    app.session = FakeSession(responder=respond)  # type: ignore[assignment]
    await app._reconcile_from_api()
    assert held_keys(app, "PersistentVolume") == ["created", "listed"]


async def test_a_kind_berth_may_not_list_is_reported_and_the_rest_still_listed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def respond(call: Call) -> Any:
        if call.path == "/apis/storage.k8s.io/v1/volumeattachments":
            raise api_error(403, "Forbidden", "volumeattachments is forbidden")
        if call.path == "/api/v1/persistentvolumes":
            return [make_pv("listed").obj()]
        return []

    app = make_app(FakeSession(responder=respond))
    app.on_storage_event("VolumeAttachment", None, ONE_OF_EACH["VolumeAttachment"])
    with caplog.at_level(logging.ERROR):
        await app._reconcile_from_api()
    assert app.synced
    assert held_keys(app, "PersistentVolume") == ["listed"]
    assert held_keys(app, "VolumeAttachment") == ["va"]  # as the watch had it
    assert any(
        "Cannot list volumeattachments" in record.getMessage()
        and "needs get, list and watch on volumeattachments" in record.getMessage()
        for record in caplog.records
    )
