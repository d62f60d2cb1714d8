"""Posting a v1 Binding: the only write Berth makes to a pod's spec.

Like kube-scheduler's DefaultBinder it POSTs to the pod's `binding`
subresource with the pod's UID in the Binding's metadata, so a pod deleted
and recreated under the same name is never bound by a stale decision. The API
server answers a `Status` (not a Binding); every failure is classified into
a `BindOutcome` for the scheduling loop and never raised.

With a `WriteFence` (the Lease, lease.py) nothing is posted unless this replica
holds the Lease at the moment the request starts. A refused bind is answered as
`BindOutcome.GONE`: the loop forgets the assumed pod and neither requeues it nor
reports a failure, because a replica without the Lease must write nothing more,
and the next leader lists the pod afresh.
"""

from __future__ import annotations

from typing import Any

from berth.engine.model.pod import Pod
from berth.kube.api import ApiError, ApiSession, ApiTransportError
from berth.kube.lease import WriteFence
from berth.kube.metrics import SchedulerMetrics
from berth.scheduling.ports import BindOutcome, BindResult, Clock, MonotonicClock

__all__ = ["NOT_HOLDING_LEASE", "ApiBinder", "binding_body", "binding_path"]

NOT_HOLDING_LEASE = "not posted: this replica does not hold the leader Lease"


def binding_path(pod: Pod) -> str:
    return f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding"


def binding_body(pod: Pod, node_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
    }


def outcome_for_status(status: int) -> BindOutcome:
    if status in (200, 201):
        return BindOutcome.BOUND
    if status == 409:  # already assigned, UID precondition failed, gated, being deleted
        return BindOutcome.CONFLICT
    if status == 404:
        return BindOutcome.GONE
    return BindOutcome.FAILED


class ApiBinder:
    """`ports.Binder` over the shared session; optionally times binds into `metrics`."""

    def __init__(
        self,
        session: ApiSession,
        *,
        metrics: SchedulerMetrics | None = None,
        clock: Clock | None = None,  # test seam for the binding-duration metric
        fence: WriteFence | None = None,
    ) -> None:
        self._session = session
        self._fence = fence
        self._metrics = metrics
        self._clock = clock or MonotonicClock()

    async def bind(self, pod: Pod, node_name: str) -> BindResult:
        metrics = self._metrics
        if metrics is None:
            return await self._post(pod, node_name)
        started = self._clock.now()
        metrics.binding_started()
        try:
            result = await self._post(pod, node_name)
        finally:
            metrics.binding_finished()
        metrics.observe_binding(result.outcome.value, self._clock.now() - started)
        return result

    async def _post(self, pod: Pod, node_name: str) -> BindResult:
        if self._fence is not None and not self._fence.permits("binding"):
            return BindResult(BindOutcome.GONE, NOT_HOLDING_LEASE)
        try:  # no await between the fence and the request
            await self._session.post_json(binding_path(pod), binding_body(pod, node_name))
        except ApiError as error:
            return BindResult(outcome_for_status(error.status), error.message or str(error))
        except ApiTransportError as error:
            return BindResult(BindOutcome.FAILED, str(error))
        return BindResult(BindOutcome.BOUND)
