"""ApiClaimWriter: the finalizer and status patches DynamicResources' PreBind sends, the retry on
conflict with a fresh read, kube-scheduler's errors, and the unreserve/deallocate patches."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from berth.engine.dra.claims import ConsumerReference, ResourceClaim
from berth.engine.framework.claim_port import ClaimWrite
from berth.kube.binder import NOT_HOLDING_LEASE
from berth.kube.claim_writer import FINALIZER, ApiClaimWriter, claim_path
from tests.unit.engine.plugins.dra_plugin_support import claim_raw
from tests.unit.kube.fakes import Call, FakeSession, api_error

POD = ConsumerReference(resource="pods", name="p", uid="p-uid")
ALLOCATION = {
    "devices": {"results": [{"request": "req", "driver": "d.test", "pool": "n1", "device": "g0"}]}
}


def _raw(**status: Any) -> dict[str, Any]:
    raw = claim_raw("c")
    if status:
        raw["status"] = status
    return raw


def _claim(**status: Any) -> ResourceClaim:
    return ResourceClaim.from_dict(_raw(**status))


def _api(raw: dict[str, Any]):  # type: ignore[no-untyped-def]
    """An API server holding one claim: applies the writer's patches to it."""
    held = copy.deepcopy(raw)

    def answer(call: Call) -> Any:
        if call.method == "GET":
            return copy.deepcopy(held)
        if call.content_type == "json-patch":
            held["metadata"]["finalizers"] = [FINALIZER]
        else:
            held.setdefault("status", {}).update(call.body["status"])
        held["metadata"]["resourceVersion"] = str(int(held["metadata"]["resourceVersion"]) + 1)
        return copy.deepcopy(held)

    return answer


def test_an_allocation_gets_the_finalizer_then_the_status() -> None:
    session = FakeSession(responder=_api(_raw()))
    writer = ApiClaimWriter(session)  # type: ignore[arg-type]
    allocation = ResourceClaim.from_dict(_raw(allocation=ALLOCATION)).allocation
    answer = asyncio.run(writer.reserve(_claim(), allocation=allocation, consumer=POD))
    assert answer.error == ""
    assert answer.claim is not None and answer.claim.finalizers == (FINALIZER,)
    assert answer.claim.reserved_for == (POD,)
    assert answer.claim.allocation == allocation
    finalizer, status = session.calls
    assert (finalizer.path, finalizer.content_type) == (claim_path("default", "c"), "json-patch")
    assert finalizer.body[0] == {"op": "test", "path": "/metadata/resourceVersion", "value": "1"}
    assert (status.path, status.content_type) == (claim_path("default", "c") + "/status", "merge")
    assert status.body["metadata"] == {"resourceVersion": "2"}
    assert status.body["status"]["reservedFor"] == [
        {"resource": "pods", "name": "p", "uid": "p-uid"}
    ]
    assert status.body["status"]["allocation"]["devices"] == ALLOCATION["devices"]
    assert "allocationTimestamp" in status.body["status"]["allocation"]


def test_a_conflict_reads_the_claim_again_and_retries() -> None:
    api = _api(_raw(allocation=ALLOCATION))
    conflicts = iter([True])

    def answer(call: Call) -> Any:
        if call.method == "PATCH" and next(conflicts, False):
            raise api_error(409, "Conflict", "the object has been modified")
        return api(call)

    session = FakeSession(responder=answer)
    writer = ApiClaimWriter(session)  # type: ignore[arg-type]
    answer_ = asyncio.run(
        writer.reserve(_claim(allocation=ALLOCATION), allocation=None, consumer=POD)
    )
    assert answer_.claim is not None and answer_.claim.reserved_for == (POD,)
    assert [call.method for call in session.calls] == ["PATCH", "GET", "PATCH"]


def test_kube_schedulers_errors() -> None:
    allocated = _claim(allocation=ALLOCATION)
    allocation = allocated.allocation
    writer = ApiClaimWriter(FakeSession(responder=_api(_raw(allocation=ALLOCATION))))  # type: ignore[arg-type]
    answer = asyncio.run(writer.reserve(allocated, allocation=allocation, consumer=POD))
    assert answer.error == "claim default/c got allocated elsewhere in the meantime"
    answer = asyncio.run(writer.reserve(_claim(), allocation=None, consumer=POD))
    assert answer.error == "claim default/c got deallocated elsewhere in the meantime"
    deleted = _raw()
    deleted["metadata"]["deletionTimestamp"] = "2026-11-26T10:00:00Z"
    answer = asyncio.run(
        writer.reserve(ResourceClaim.from_dict(deleted), allocation=allocation, consumer=POD)
    )
    assert answer.error == "claim default/c got deleted in the meantime"

    def refuse(call: Call) -> Any:
        raise api_error(422, "Invalid", "reservedFor: too many")

    refusing = ApiClaimWriter(FakeSession(responder=refuse))  # type: ignore[arg-type]
    answer = asyncio.run(refusing.reserve(allocated, allocation=None, consumer=POD))
    assert answer.error == "add reservation to claim default/c: reservedFor: too many"


def test_nothing_is_written_without_the_lease() -> None:
    class Fence:
        def permits(self, write: str) -> bool:
            return False

    session = FakeSession()
    writer = ApiClaimWriter(session, fence=Fence())  # type: ignore[arg-type]
    answer = asyncio.run(
        writer.reserve(_claim(allocation=ALLOCATION), allocation=None, consumer=POD)
    )
    assert answer.error == NOT_HOLDING_LEASE
    assert session.calls == []


def test_unreserve_and_deallocate_patch_the_status_and_answer_with_the_claim() -> None:
    session = FakeSession(responder=_api(_raw(allocation=ALLOCATION)))
    writer = ApiClaimWriter(session)  # type: ignore[arg-type]

    async def both() -> tuple[ClaimWrite, ClaimWrite]:
        unreserved = await writer.unreserve(_claim(allocation=ALLOCATION), pod_uid="p-uid")
        return unreserved, await writer.deallocate(_claim(allocation=ALLOCATION))

    unreserved, deallocated = asyncio.run(both())
    assert unreserved.error == deallocated.error == ""
    assert deallocated.claim is not None and deallocated.claim.allocation is None
    unreserve, deallocate = session.calls
    assert unreserve.content_type == "strategic"
    assert unreserve.body == {
        "metadata": {"uid": "uid-c"},
        "status": {"reservedFor": [{"$patch": "delete", "uid": "p-uid"}]},
    }
    assert deallocate.body == {
        "metadata": {"resourceVersion": "1"},
        "status": {"reservedFor": None, "allocation": None, "devices": None},
    }


def test_a_refused_deallocation_answers_with_the_api_servers_message() -> None:
    message = 'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "c": modified'

    def conflict(call: Call) -> Any:
        raise api_error(409, "Conflict", message)

    writer = ApiClaimWriter(FakeSession(responder=conflict))  # type: ignore[arg-type]
    answer = asyncio.run(writer.deallocate(_claim(allocation=ALLOCATION)))
    assert (answer.claim, answer.error) == (None, message)
