"""ApiVolumeWriter: the merge patches VolumeBinding's PreBind sends, and how answers come back."""

from __future__ import annotations

from typing import Any

from berth.engine.framework.handle import ClaimReference
from berth.kube.api import ApiTransportError
from berth.kube.binder import NOT_HOLDING_LEASE
from berth.kube.volume_writer import ApiVolumeWriter
from tests.unit.kube.fakes import Call, FakeSession, api_error

CLAIM = ClaimReference(namespace="shop", name="data", uid="claim-uid", resource_version="41")


async def test_binding_a_volume_patches_its_claim_ref_on_the_version_decided_on() -> None:
    session = FakeSession(responder=lambda call: {"metadata": {"resourceVersion": "77"}})
    writer = ApiVolumeWriter(session)  # type: ignore[arg-type]
    written = await writer.bind_volume(
        volume="pv-1", resource_version="12", claim=CLAIM, bound_by_controller=True
    )
    assert written.written and written.resource_version == "77"
    (call,) = session.calls
    assert (call.method, call.path, call.content_type) == (
        "PATCH",
        "/api/v1/persistentvolumes/pv-1",
        "merge",
    )
    assert call.body == {
        "metadata": {
            "resourceVersion": "12",
            "annotations": {"pv.kubernetes.io/bound-by-controller": "yes"},
        },
        "spec": {
            "claimRef": {
                "kind": "PersistentVolumeClaim",
                "apiVersion": "v1",
                "namespace": "shop",
                "name": "data",
                "uid": "claim-uid",
                "resourceVersion": "41",
            }
        },
    }


async def test_a_claim_pre_bound_by_its_user_is_not_marked_bound_by_controller() -> None:
    session = FakeSession(responder=lambda call: {"metadata": {"resourceVersion": "2"}})
    writer = ApiVolumeWriter(session)  # type: ignore[arg-type]
    await writer.bind_volume(
        volume="pv-1", resource_version="1", claim=CLAIM, bound_by_controller=False
    )
    assert "annotations" not in session.calls[0].body["metadata"]


async def test_selecting_a_node_annotates_the_claim() -> None:
    session = FakeSession(responder=lambda call: {"metadata": {"resourceVersion": "90"}})
    writer = ApiVolumeWriter(session)  # type: ignore[arg-type]
    written = await writer.select_node(
        namespace="shop", claim="data", resource_version="41", node_name="n-3"
    )
    assert written.resource_version == "90"
    (call,) = session.calls
    assert call.path == "/api/v1/namespaces/shop/persistentvolumeclaims/data"
    assert call.body == {
        "metadata": {
            "resourceVersion": "41",
            "annotations": {"volume.kubernetes.io/selected-node": "n-3"},
        }
    }


async def test_a_conflict_answers_the_api_servers_message() -> None:
    message = (
        'Operation cannot be fulfilled on persistentvolumes "pv-1": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )

    def refuse(call: Call) -> Any:
        raise api_error(409, "Conflict", message)

    writer = ApiVolumeWriter(FakeSession(responder=refuse))  # type: ignore[arg-type]
    written = await writer.bind_volume(
        volume="pv-1", resource_version="1", claim=CLAIM, bound_by_controller=True
    )
    assert not written.written and written.error == message


async def test_no_answer_is_an_error_too() -> None:
    def drop(call: Call) -> Any:
        raise ApiTransportError("PATCH /api/v1/...: connection reset")

    writer = ApiVolumeWriter(FakeSession(responder=drop))  # type: ignore[arg-type]
    written = await writer.select_node(
        namespace="shop", claim="data", resource_version="1", node_name="n"
    )
    assert written.error == "PATCH /api/v1/...: connection reset"


class _Refusing:
    def permits(self, write: str) -> bool:
        return False


async def test_nothing_is_sent_without_the_lease() -> None:
    session = FakeSession()
    writer = ApiVolumeWriter(session, fence=_Refusing())  # type: ignore[arg-type]
    written = await writer.select_node(
        namespace="shop", claim="data", resource_version="1", node_name="n"
    )
    assert written.error == NOT_HOLDING_LEASE
    assert session.calls == []
