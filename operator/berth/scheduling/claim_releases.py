"""Sending the claim releases a cycle asked for, and waiting for them.

DynamicResources' PostFilter (deallocate a claim nobody uses, or delete the pod's claim
for extended resources left by an earlier attempt) and Unreserve (take the pod out of a
claim's reservedFor, delete a claim for extended resources it made) write the API
synchronously in kube-scheduler: the
next attempt starts only after the write returned. Berth's engine only records them in
the cycle state (`claim_port.request_release`); here they are sent through the
framework's claim port, each as its own task so that a cancelled loop (a lost Lease, a
shutdown) never aborts a write half-way, and `drain` lets shutdown wait for all of them
before the Lease is released.

Failures are handled as upstream handles them: a failed unreservation is only logged
(the next attempt tries again); a failed deallocation or deletion is logged and
returned, and when PostFilter asked for it, it becomes PostFilter's status, whose message
ends the pod's FailedScheduling text (after Unreserve nobody reads it).
"""

from __future__ import annotations

import asyncio
import logging

from berth.engine.framework.claim_port import (
    ClaimRelease,
    ClaimStatusWriter,
    Deallocation,
    Deletion,
    take_releases,
)
from berth.engine.framework.cycle_state import CycleState

__all__ = ["ClaimReleases", "settled"]

logger = logging.getLogger(__name__)


class ClaimReleases:
    """The releases in flight, started from cycle states."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[str]] = set()

    def start(self, writer: ClaimStatusWriter, state: CycleState) -> asyncio.Task[str] | None:
        """Send what `state` asked for, in order; None when it asked for nothing.

        The task's result is the error of a failed deallocation or deletion, or "".
        """
        requested = take_releases(state)
        if not requested:
            return None
        task = asyncio.get_running_loop().create_task(_send(writer, requested))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    async def drain(self) -> None:
        """Wait for every release started so far (graceful shutdown, tests)."""
        while self._tasks:
            await asyncio.wait(list(self._tasks))


async def settled(task: asyncio.Task[str]) -> str:
    """`task`'s result, waited for without cancelling it when the waiter is cancelled."""
    await asyncio.wait([task])
    return task.result()


async def _send(writer: ClaimStatusWriter, requested: list[ClaimRelease]) -> str:
    failure = ""
    for release in requested:
        claim = release.claim
        if isinstance(release, Deallocation):
            written = await writer.deallocate(claim)
            if written.error:
                failure = written.error
                logger.error("Deallocation of ResourceClaim %s failed: %s", claim.key, failure)
        elif isinstance(release, Deletion):
            written = await writer.delete_extended_claim(claim)
            if written.error:
                failure = written.error
                logger.error("Deletion of ResourceClaim %s failed: %s", claim.key, failure)
        else:
            written = await writer.unreserve(claim, pod_uid=release.pod_uid)
            if written.error:
                # As upstream: the next attempt of the pod gets here again.
                logger.error("Unreserve of ResourceClaim %s failed: %s", claim.key, written.error)
    return failure
