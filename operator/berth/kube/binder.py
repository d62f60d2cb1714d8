"""Posting a v1 Binding: the only write Berth makes to a pod's spec.

Like kube-scheduler's DefaultBinder it POSTs to the pod's `binding`
subresource with the pod's UID in the Binding's metadata, so a pod deleted
and recreated under the same name is never bound by a stale decision. The API
server answers a `Status` (not a Binding); every failure is classified into
a `BindOutcome` for the scheduling loop and never raised.

While the API server is away or starting, a POST that could not connect, or
was refused with 403 or 429, is repeated after each of `RETRY_DELAYS` (it
surely had no effect). A POST whose answer was lost (the server died or the
connection broke after the request went out), or that got a 5xx, may have
bound the pod: reporting it as failed would make
the loop forget the assumed pod and hand its place to another pod while it
may be taken, and report a bound pod unschedulable. So the binder reads the
pod itself, until the API answers or `RETRY_DELAYS` run out; only then is
the binding reported failed (the later 409 or the watch reconcile it). A 409
is checked the same way: it is our own earlier binding when the pod is on
the node we chose.

With a `WriteFence` (the Lease, lease.py) nothing is posted unless this replica
holds the Lease at the moment the request starts. A refused bind is answered as
`BindOutcome.GONE`: the loop forgets the assumed pod and neither requeues it nor
reports a failure, because a replica without the Lease must write nothing more,
and the next leader lists the pod afresh.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from berth.engine.model.pod import Pod
from berth.kube.api import ApiError, ApiSession, ApiTransportError, is_transient
from berth.kube.lease import WriteFence
from berth.kube.metrics import SchedulerMetrics
from berth.scheduling.ports import BindOutcome, BindResult, Clock, MonotonicClock

__all__ = ["NOT_HOLDING_LEASE", "RETRY_DELAYS", "ApiBinder", "binding_body", "binding_path"]

logger = logging.getLogger(__name__)

NOT_HOLDING_LEASE = "not posted: this replica does not hold the leader Lease"

# Pauses between attempts while the API server is away or starting: about 45 s in all,
# more than an API server takes to restart, while the pod's place stays reserved. Short
# and flat, so binding resumes within 2 s of the server's return (a refused connection
# costs the server nothing).
RETRY_DELAYS = (0.5, 1.0, *(2.0,) * 22)


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


def _outcome_from_pod(pod: Pod, node_name: str, live: dict[str, Any]) -> BindOutcome | None:
    """What the live pod says about a binding of `pod` to `node_name`; None: not bound yet."""
    if (live.get("metadata") or {}).get("uid") != pod.uid:
        return BindOutcome.GONE  # deleted and recreated under the same name
    bound_to = (live.get("spec") or {}).get("nodeName") or ""
    if not bound_to:
        return None
    return BindOutcome.BOUND if bound_to == node_name else BindOutcome.CONFLICT


class ApiBinder:
    """`ports.Binder` over the shared session; optionally times binds into `metrics`."""

    def __init__(
        self,
        session: ApiSession,
        *,
        metrics: SchedulerMetrics | None = None,
        clock: Clock | None = None,  # test seam for the binding-duration metric
        retry_delays: Sequence[float] = RETRY_DELAYS,  # test seam: no real waiting
        fence: WriteFence | None = None,
    ) -> None:
        self._session = session
        self._fence = fence
        self._metrics = metrics
        self._clock = clock or MonotonicClock()
        self._retry_delays = tuple(retry_delays)

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
        delays = iter(self._retry_delays)
        while True:
            # Checked before every attempt, repeats included: a replica that lost the Lease
            # during an outage must not post when the API server returns.
            if self._fence is not None and not self._fence.permits("binding"):
                return BindResult(BindOutcome.GONE, NOT_HOLDING_LEASE)
            try:  # no await between the fence and the request
                await self._session.post_json(binding_path(pod), binding_body(pod, node_name))
            except ApiError as error:
                result = BindResult(outcome_for_status(error.status), error.message or str(error))
                if result.outcome is BindOutcome.CONFLICT:
                    return await self._resolve(pod, node_name, result, delays=())
                if error.status >= 500:  # the binding may have been stored all the same
                    return await self._resolve(pod, node_name, result, delays=self._retry_delays)
                if not is_transient(error):
                    return result
                # 403 or 429: refused before anything was done, by a server still starting
                # (RBAC caches not filled yet) or throttling; worth the same POST again.
            except ApiTransportError as error:
                result = BindResult(BindOutcome.FAILED, str(error))
                if error.possibly_sent:
                    return await self._resolve(pod, node_name, result, delays=self._retry_delays)
                # Could not connect: the API server is away, and the POST surely had no effect.
            else:
                return BindResult(BindOutcome.BOUND)
            delay = next(delays, None)
            if delay is None:
                return result
            # Wait here, holding the pod's place, rather than fail the pod for an outage.
            await asyncio.sleep(delay)

    async def _resolve(
        self, pod: Pod, node_name: str, unresolved: BindResult, *, delays: Sequence[float]
    ) -> BindResult:
        """Read the pod to learn whether a binding to `node_name` is in place.

        Reads again after each of `delays` while the API cannot answer; if it never
        does, or the pod is not bound, the `unresolved` result stands.
        """
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
        for delay in (*delays, None):
            try:
                live = await self._session.get_json(path)
            except ApiError as error:
                if error.status == 404:
                    return BindResult(BindOutcome.GONE, error.message or str(error))
                if not is_transient(error):
                    return unresolved
            except ApiTransportError:
                pass
            else:
                outcome = _outcome_from_pod(pod, node_name, live)
                if outcome is BindOutcome.BOUND:
                    logger.info(
                        "Binding %s to %s is in place; an earlier answer was lost",
                        pod.key,
                        node_name,
                    )
                    return BindResult(BindOutcome.BOUND)
                return unresolved if outcome is None else BindResult(outcome, unresolved.message)
            if delay is None:
                return unresolved
            await asyncio.sleep(delay)
        return unresolved
