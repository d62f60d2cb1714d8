"""The writes of VolumeBinding's PreBind: a PV's claimRef and a claim's selected node.

kube-scheduler's volume binder PUTs the PV (claimRef set, `bound-by-controller`
annotated) and the PVC (`volume.kubernetes.io/selected-node` annotated) it decided on,
as read from its informer, so that a change made since makes the API server refuse the
write with 409. Berth holds parsed objects, not the raw ones, so it sends merge patches
of exactly those fields, each carrying the `resourceVersion` the decision was made on:
the API server checks it as the same precondition. The PV controller (and, for
provisioning, an external provisioner) does the rest; PreBind then waits for the watch
to show the claims bound.

With a `WriteFence` nothing is sent unless this replica holds the Lease at that moment.
Failures are answered, never raised: the plugin turns them into the pod's error.
"""

from __future__ import annotations

import asyncio
from typing import Any

from berth.engine.framework.handle import ClaimReference, VolumeWrite
from berth.kube.api import ApiError, ApiSession, ApiTransportError, JsonObject
from berth.kube.binder import NOT_HOLDING_LEASE
from berth.kube.lease import WriteFence
from berth.scheduling.ports import Clock, MonotonicClock

__all__ = [
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_SELECTED_NODE",
    "ApiVolumeWriter",
    "claim_patch",
    "volume_patch",
]

ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"


def volume_patch(
    *, resource_version: str, claim: ClaimReference, bound_by_controller: bool
) -> JsonObject:
    """The merge patch that binds a PV to `claim`, as the PV controller's helper words it."""
    metadata: dict[str, Any] = {"resourceVersion": resource_version}
    if bound_by_controller:
        metadata["annotations"] = {ANN_BOUND_BY_CONTROLLER: "yes"}
    return {
        "metadata": metadata,
        "spec": {
            "claimRef": {
                "kind": "PersistentVolumeClaim",
                "apiVersion": "v1",
                "namespace": claim.namespace,
                "name": claim.name,
                "uid": claim.uid,
                "resourceVersion": claim.resource_version,
            }
        },
    }


def claim_patch(*, resource_version: str, node_name: str) -> JsonObject:
    """The merge patch that asks for a claim to be provisioned for `node_name`."""
    return {
        "metadata": {
            "resourceVersion": resource_version,
            "annotations": {ANN_SELECTED_NODE: node_name},
        }
    }


class ApiVolumeWriter:
    """`VolumeBindingWriter` over the shared API session."""

    def __init__(
        self,
        session: ApiSession,
        *,
        fence: WriteFence | None = None,
        clock: Clock | None = None,  # test seam: the bind timeout's clock
    ) -> None:
        self._session = session
        self._fence = fence
        self._clock = clock or MonotonicClock()

    async def bind_volume(
        self,
        *,
        volume: str,
        resource_version: str,
        claim: ClaimReference,
        bound_by_controller: bool,
    ) -> VolumeWrite:
        body = volume_patch(
            resource_version=resource_version, claim=claim, bound_by_controller=bound_by_controller
        )
        return await self._patch(f"/api/v1/persistentvolumes/{volume}", body, "volume binding")

    async def select_node(
        self, *, namespace: str, claim: str, resource_version: str, node_name: str
    ) -> VolumeWrite:
        body = claim_patch(resource_version=resource_version, node_name=node_name)
        path = f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{claim}"
        return await self._patch(path, body, "claim provisioning")

    def now(self) -> float:
        return self._clock.now()

    async def pause(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def _patch(self, path: str, body: JsonObject, write: str) -> VolumeWrite:
        if self._fence is not None and not self._fence.permits(write):
            return VolumeWrite(error=NOT_HOLDING_LEASE)
        try:  # no await between the fence and the request
            stored = await self._session.patch_json(path, body)
        except ApiError as failure:
            # client-go's error text is the Status message the API server sent.
            return VolumeWrite(error=failure.message or str(failure))
        except ApiTransportError as failure:
            return VolumeWrite(error=str(failure))
        version = (stored.get("metadata") or {}).get("resourceVersion")
        return VolumeWrite(resource_version=str(version or ""))
