"""Carrying out a preemption the engine decided: mark and evict the victims, nominate the preemptor.

As kube-scheduler does: each victim first gets the `DisruptionTarget` condition
(reason `PreemptionByScheduler`), then a graceful DELETE and a `Preempted` event;
the preemptor's `status.nominatedNodeName` is set so that later cycles try that
node first. The scheduling loop only calls `preempt`/`nominate`; the API calls
run as background tasks and failures are logged (the next cycle re-decides).

With a `WriteFence` (the Lease, lease.py) each write (nomination patch, the
victim's DisruptionTarget patch, its DELETE) is checked right before it starts:
a replica that lost the Lease while these tasks waited sends none of them.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from berth.engine.model.pod import Pod
from berth.kube.api import ApiError, ApiSession, ApiTransportError
from berth.kube.lease import WriteFence
from berth.kube.reporting import event_body, format_micro_time, format_time

logger = logging.getLogger(__name__)


def disruption_patch(scheduler_name: str, now: datetime) -> dict[str, Any]:
    return {
        "status": {
            "conditions": [
                {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": "PreemptionByScheduler",
                    "message": f"{scheduler_name}: preempting to accommodate a higher priority pod",
                    "lastTransitionTime": format_time(now),
                }
            ]
        }
    }


def nomination_patch(node_name: str) -> dict[str, Any]:
    # An empty string clears the nomination (merge patch with null removes the field).
    return {"status": {"nominatedNodeName": node_name or None}}


class ApiPreemptor:
    def __init__(
        self, session: ApiSession, *, instance: str, fence: WriteFence | None = None
    ) -> None:
        self._session = session
        self._fence = fence
        self._instance = instance
        self._tasks: set[asyncio.Task[None]] = set()

    def preempt(
        self, preemptor: Pod, node_name: str, victims: Sequence[Pod], *, profile: str
    ) -> None:
        self._spawn(self._preempt(preemptor, node_name, tuple(victims), profile))

    def nominate(self, pod: Pod, node_name: str) -> None:
        self._spawn(self._nominate(pod, node_name))

    async def drain(self) -> None:
        """Wait for the preemptions and nominations under way (graceful shutdown, tests)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _preempt(
        self, preemptor: Pod, node_name: str, victims: tuple[Pod, ...], profile: str
    ) -> None:
        await self._nominate(preemptor, node_name)
        await asyncio.gather(
            *(self._evict(victim, preemptor, node_name, profile) for victim in victims)
        )

    def _permitted(self, write: str) -> bool:
        return self._fence is None or self._fence.permits(write)

    async def _nominate(self, pod: Pod, node_name: str) -> None:
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status"
        if not self._permitted("nomination"):
            return
        try:  # no await between the fence and the request
            await self._session.patch_json(path, nomination_patch(node_name), content_type="merge")
        except (ApiError, ApiTransportError) as error:
            logger.warning("Could not set nominatedNodeName of %s: %s", pod.key, error)

    async def _evict(self, victim: Pod, preemptor: Pod, node_name: str, profile: str) -> None:
        base = f"/api/v1/namespaces/{victim.namespace}/pods/{victim.name}"
        now = datetime.now(UTC)
        if not self._permitted("disruption-condition"):
            return
        try:  # no await between each fence check and its request
            await self._session.patch_json(
                f"{base}/status", disruption_patch(profile, now), content_type="strategic"
            )
            if not self._permitted("eviction"):
                return
            await self._session.delete_json(base)
        except (ApiError, ApiTransportError) as error:
            if not (isinstance(error, ApiError) and error.status == 404):
                logger.warning("Could not preempt %s for %s: %s", victim.key, preemptor.key, error)
            return
        event = event_body(
            name=f"{victim.name}.{uuid.uuid4().hex[:16]}",
            pod=victim,
            type="Normal",
            reason="Preempted",
            action="Preempting",
            note=f"Preempted by pod {preemptor.uid} on node {node_name}",
            controller=profile,
            instance=self._instance,
            event_time=format_micro_time(now),
        )
        try:
            await self._session.post_json(
                f"/apis/events.k8s.io/v1/namespaces/{victim.namespace}/events", event
            )
        except (ApiError, ApiTransportError) as error:
            logger.warning("Could not post the Preempted event of %s: %s", victim.key, error)
