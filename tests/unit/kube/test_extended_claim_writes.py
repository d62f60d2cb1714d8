"""ApiClaimWriter's writes for the claim for extended resources backed by DRA: the claim
created from the pod, the pod status patch that records it, and the deletion (finalizer
first, a conflict re-read, a missing claim no failure), with kube-scheduler's errors."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from berth.engine.dra.claims import ClaimSpec, ResourceClaim
from berth.engine.dra.extended_resources import RequestMapping
from berth.engine.dra.requests import DeviceRequest, RequestSpec
from berth.engine.framework.claim_port import ClaimWrite
from berth.kube.claim_writer import FINALIZER, ApiClaimWriter
from tests.builders import make_pod
from tests.unit.engine.plugins.dra_plugin_support import claim_raw
from tests.unit.kube.fakes import Call, FakeSession, api_error

POD = make_pod("p").uid("p-uid").build()
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"


def _in_memory() -> ResourceClaim:
    request = DeviceRequest(
        name="container-0-request-0",
        exactly=RequestSpec(name="container-0-request-0", device_class_name="gpu", count=2),
    )
    return ResourceClaim(
        namespace="default",
        name="<extended-resources>",
        uid="temporary",
        spec=ClaimSpec(requests=(request,)),
        controller_uid="p-uid",
        extended_resource_claim=True,
    )


def test_the_claim_is_created_from_the_pod() -> None:
    def answer(call: Call) -> Any:
        created = copy.deepcopy(call.body)
        created["metadata"].update(name="p-extended-resources-abcde", uid="u", resourceVersion="1")
        return created

    session = FakeSession(responder=answer)
    written = asyncio.run(ApiClaimWriter(session).create_extended_claim(_in_memory(), pod=POD))  # type: ignore[arg-type]
    assert written.claim is not None and written.claim.name == "p-extended-resources-abcde"
    assert written.claim.extended_resource_claim and written.claim.controller_uid == "p-uid"
    [call] = session.calls
    assert (call.method, call.path) == ("POST", CLAIMS)
    assert call.body["metadata"] == {
        "generateName": "p-extended-resources-",
        "namespace": "default",
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "p-uid", "controller": True}
        ],
        "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
    }
    assert call.body["spec"]["devices"]["requests"] == [
        {
            "name": "container-0-request-0",
            "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2},
        }
    ]


def test_a_refused_creation_gets_kube_schedulers_error() -> None:
    def refuse(call: Call) -> Any:
        raise api_error(403, "Forbidden", "resourceclaims is forbidden")

    session = FakeSession(responder=refuse)
    written = asyncio.run(ApiClaimWriter(session).create_extended_claim(_in_memory(), pod=POD))  # type: ignore[arg-type]
    assert (
        written.error == "create claim for extended resources default/: resourceclaims is forbidden"
    )


def test_the_claim_is_recorded_in_the_pod_status() -> None:
    session = FakeSession(responder=lambda call: {})
    mappings = (RequestMapping("c0", "example.com/gpu", "container-0-request-0"),)
    failure = asyncio.run(
        ApiClaimWriter(session).record_extended_claim(  # type: ignore[arg-type]
            POD, claim_name="p-extended-resources-abcde", mappings=mappings
        )
    )
    assert failure == ""
    [call] = session.calls
    assert (call.path, call.content_type) == (
        "/api/v1/namespaces/default/pods/p/status",
        "strategic",
    )
    assert call.body == {
        "status": {
            "extendedResourceClaimStatus": {
                "requestMappings": [
                    {
                        "containerName": "c0",
                        "resourceName": "example.com/gpu",
                        "requestName": "container-0-request-0",
                    }
                ],
                "resourceClaimName": "p-extended-resources-abcde",
            }
        }
    }


def test_deletion_drops_the_finalizer_first_and_rereads_after_a_conflict() -> None:
    raw = claim_raw("x")
    raw["metadata"]["finalizers"] = ["other", FINALIZER]
    stale = ResourceClaim.from_dict(raw)
    written, session = _delete(
        stale,
        api_error(409, "Conflict", "changed"),
        {**raw, "metadata": {**raw["metadata"], "resourceVersion": "2"}},
        {},
        {},
    )
    assert written == ClaimWrite()
    assert [(call.method, call.path) for call in session.calls] == [
        ("PATCH", f"{CLAIMS}/x"),
        ("GET", f"{CLAIMS}/x"),
        ("PATCH", f"{CLAIMS}/x"),
        ("DELETE", f"{CLAIMS}/x"),
    ]
    assert session.calls[2].body == [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "2"},
        {"op": "remove", "path": "/metadata/finalizers/1"},
    ]


def test_a_claim_deleted_meanwhile_fails_the_update_as_upstream() -> None:
    gone = api_error(404, "NotFound", 'resourceclaims.resource.k8s.io "x" not found')
    written, session = _delete(ResourceClaim.from_dict(claim_raw("x")), gone)
    # Upstream updates the claim (dropping the finalizer) before it deletes it.
    assert written.error == (
        'update resourceclaim default/x: resourceclaims.resource.k8s.io "x" not found'
    )
    assert [call.method for call in session.calls] == ["PATCH"]


def test_the_delete_itself_takes_not_found_as_done() -> None:
    gone = api_error(404, "NotFound", "not found")
    written, session = _delete(ResourceClaim.from_dict(claim_raw("x")), {}, gone)
    assert written == ClaimWrite()
    assert [call.method for call in session.calls] == ["PATCH", "DELETE"]


def _delete(claim: ResourceClaim, *replies: Any) -> tuple[ClaimWrite, FakeSession]:
    """Delete `claim` through an API answering `replies` in turn (an exception is raised)."""
    pending = list(replies)

    def answer(call: Call) -> Any:
        reply = pending.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    session = FakeSession(responder=answer)

    async def delete() -> ClaimWrite:
        writer = ApiClaimWriter(session)  # type: ignore[arg-type]
        return await writer.delete_extended_claim(claim)

    return asyncio.run(delete()), session
