"""The API writes for a pod's claim for extended resources backed by DRA.

kube-scheduler's DynamicResources creates that claim in PreBind: named from the pod
(`<pod>-extended-resources-` plus the API server's random suffix), owned by the pod as
its controller, annotated `resource.kubernetes.io/extended-resource-claim: "true"`, with
one ExactCount request per container need. After writing its allocation it records the
claim and the container-to-request mappings in the pod's
`status.extendedResourceClaimStatus` (a strategic-merge patch of the status
subresource). When the attempt fails it deletes the claim, first dropping the
delete-protection finalizer it added (retried on a conflict), with upstream's error
texts: PostFilter reports them, Unreserve logs them.
"""

from __future__ import annotations

from berth.engine.dra.claims import EXTENDED_RESOURCE_CLAIM_ANNOTATION, ResourceClaim
from berth.engine.dra.extended_resources import RequestMapping
from berth.engine.errors import InvalidObjectError
from berth.kube.api import ApiError, ApiSession, ApiTransportError, JsonObject

__all__ = [
    "claims_path",
    "delete_claim",
    "error_text",
    "extended_claim_body",
    "extended_status_patch",
    "record_path",
]

_TRIES = 5  # client-go's retry.DefaultRetry


def claims_path(namespace: str) -> str:
    return f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims"


def record_path(namespace: str, pod_name: str) -> str:
    return f"/api/v1/namespaces/{namespace}/pods/{pod_name}/status"


def extended_claim_body(claim: ResourceClaim, *, pod_name: str) -> JsonObject:
    """The ResourceClaim to create: `claim`'s requests, owned by and named after the pod."""
    requests: list[JsonObject] = []
    for request in claim.spec.requests:
        assert request.exactly is not None  # built with `exactly` only
        requests.append(
            {
                "name": request.name,
                "exactly": {
                    "deviceClassName": request.exactly.device_class_name,
                    "allocationMode": request.exactly.allocation_mode,
                    "count": request.exactly.count,
                },
            }
        )
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "generateName": f"{pod_name}-extended-resources-",
            "namespace": claim.namespace,
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": pod_name,
                    "uid": claim.controller_uid,
                    "controller": True,
                }
            ],
            "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
        },
        "spec": {"devices": {"requests": requests}},
    }


def extended_status_patch(claim_name: str, mappings: tuple[RequestMapping, ...]) -> JsonObject:
    return {
        "status": {
            "extendedResourceClaimStatus": {
                "requestMappings": [
                    {
                        "containerName": mapping.container_name,
                        "resourceName": mapping.resource_name,
                        "requestName": mapping.request_name,
                    }
                    for mapping in mappings
                ],
                "resourceClaimName": claim_name,
            }
        }
    }


async def delete_claim(session: ApiSession, claim: ResourceClaim, *, finalizer: str) -> str:
    """Drop `finalizer` (re-reading after a conflict), then delete; kube-scheduler's error or "".

    As upstream, the finalizer step is an update even when there is no finalizer to drop
    (here a patch that only tests the version), so a claim gone or changed meanwhile is
    noticed there; only the delete itself takes "not found" as done.
    """
    path = f"{claims_path(claim.namespace)}/{claim.name}"
    current = claim
    for attempt in range(_TRIES):
        if attempt:
            try:
                current = ResourceClaim.from_dict(await session.get_json(path))
            except (ApiError, ApiTransportError, InvalidObjectError) as failure:
                return f"get resourceclaim {claim.key}: {error_text(failure)}"
        operations: list[JsonObject] = [
            {"op": "test", "path": "/metadata/resourceVersion", "value": current.resource_version},
        ]
        if finalizer in current.finalizers:
            index = current.finalizers.index(finalizer)
            operations.append({"op": "remove", "path": f"/metadata/finalizers/{index}"})
        try:
            await session.patch_json(path, operations, content_type="json-patch")
            break
        except ApiError as failure:
            stale = failure.status == 409 or (
                failure.status == 422 and "testing value" in failure.message
            )
            if not stale or attempt + 1 == _TRIES:
                return f"update resourceclaim {claim.key}: {error_text(failure)}"
        except ApiTransportError as failure:
            return f"update resourceclaim {claim.key}: {failure}"
    try:
        await session.delete_json(path)
    except ApiError as failure:
        if failure.status != 404:
            return error_text(failure)
    except ApiTransportError as failure:
        return str(failure)
    return ""


def error_text(failure: Exception) -> str:
    """What a failed API call says: the server's message, else the error itself."""
    if isinstance(failure, ApiError):
        return failure.message or str(failure)
    return str(failure)
