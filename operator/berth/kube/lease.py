"""Fencing the active replica with a coordination.k8s.io/v1 Lease, as client-go's leaderelection does.

kopf peering decides which replica is active, but it has no renew deadline: a
leader whose event loop stalls (SIGSTOP, a long GC, a blocked call) or that is cut
off from the API server keeps its view of being active, and once its peering
record expires a standby takes over while the old leader still has bindings to
post. The Lease adds what peering lacks:

* one writer wins: acquiring and renewing are updates guarded by the Lease's
  resourceVersion, so two replicas cannot both succeed in the same round;
* expiry measured locally: a candidate times the holder's lease from the moment
  *it observed* the record change (not from the timestamps in the record), so
  clock skew between replicas does not shorten or stretch it;
* self-fencing: the holder may post bindings, nominations and evictions only
  until `renew_deadline` after the start of its last successful renewal. That
  is a local monotonic deadline, checked synchronously right before each such
  request: a replica that wakes up from a stall finds the deadline passed before
  it can send anything. The gap `lease_duration - renew_deadline` (5 s with
  kube-scheduler's defaults) covers the request's trip to the API server and
  clock-rate differences; a request already on the wire when the stall began
  cannot be recalled (Kubernetes has no fencing tokens for Bindings).

The replica competes for the Lease only while kopf peering has it active; while
paused it still reads the Lease every retry period, so that its observation of
the holder's last renewal is fresh when peering hands it the lead.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Protocol

from berth.kube.lease_store import (
    LeaseConflict,
    LeaseRecord,
    LeaseSnapshot,
    LeaseStore,
    LeaseUnavailable,
)
from berth.kube.reporting import format_micro_time
from berth.scheduling.ports import Clock

__all__ = ["JITTER_FACTOR", "BootClock", "LeaseElector", "LeaseTiming", "WriteFence"]

logger = logging.getLogger(__name__)

# client-go requires renewDeadline > JitterFactor * retryPeriod; the same rule here.
JITTER_FACTOR = 1.2


@dataclass(frozen=True, slots=True)
class LeaseTiming:
    """kube-scheduler's defaults: --leader-elect-lease-duration / -renew-deadline / -retry-period."""

    lease_duration: int = 15  # the Lease stores whole seconds
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def problems(self) -> list[str]:
        """What is wrong with these durations, in client-go's words of the rule; [] if nothing."""
        found = []
        if self.retry_period <= 0:
            found.append(f"leaseRetryPeriodSeconds: must be positive, got {self.retry_period}")
        if self.lease_duration < 1:
            found.append(f"leaseDurationSeconds: must be at least 1, got {self.lease_duration}")
        if self.lease_duration <= self.renew_deadline:
            found.append(
                f"leaseDurationSeconds ({self.lease_duration}) must be greater than "
                f"leaseRenewDeadlineSeconds ({self.renew_deadline})"
            )
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            found.append(
                f"leaseRenewDeadlineSeconds ({self.renew_deadline}) must be greater than "
                f"{JITTER_FACTOR} x leaseRetryPeriodSeconds ({self.retry_period})"
            )
        return found


class BootClock:
    """Monotonic seconds that keep counting while the machine is suspended (Linux CLOCK_BOOTTIME).

    CLOCK_MONOTONIC stops during a suspend, so a holder resumed from one would
    believe its renew deadline still ahead; elsewhere fall back to time.monotonic.
    """

    _clock_id = getattr(time, "CLOCK_BOOTTIME", None)

    def now(self) -> float:
        if self._clock_id is not None:
            return time.clock_gettime(self._clock_id)
        return time.monotonic()


class WriteFence(Protocol):
    """Asked right before each write only the active replica may make."""

    def permits(self, write: str) -> bool:
        """True while this replica holds the Lease; `write` names the request (for metrics)."""
        ...


class LeaseElector:
    """Acquires, renews and releases one Lease for this replica; the fence of its writes.

    `run()` is the background task (one per process). `compete()` / `stand_down()`
    follow kopf peering; `leading` and the `wait_until_*` methods tell the app when to run
    the scheduling loop; `permits()` is the synchronous fence check.
    """

    def __init__(
        self,
        store: LeaseStore,
        *,
        identity: str,
        timing: LeaseTiming,
        clock: Clock | None = None,  # test seam: monotonic seconds (deadlines, observed times)
        wall_clock: Callable[[], datetime] | None = None,  # test seam: renewTime written
        on_refused: Callable[[str], None] | None = None,  # metrics: a write the fence refused
    ) -> None:
        problems = timing.problems()
        if problems:
            raise ValueError("; ".join(problems))
        self._store = store
        self.identity = identity
        self._timing = timing
        self._clock = clock or BootClock()
        self._wall_clock = wall_clock or (lambda: datetime.now(UTC))
        self._on_refused = on_refused
        self._observed: LeaseRecord | None = None
        self._observed_version = ""
        self._observed_at = -math.inf
        self._valid_until = -math.inf  # the fence: writes allowed while clock.now() is before it
        self._competing = False
        self._leading = False
        self._term = 0
        self._changed = asyncio.Event()
        self._wakeup = asyncio.Event()
        self._expiry: asyncio.TimerHandle | None = None

    # ------------------------------------------------------------------ state

    @property
    def leading(self) -> bool:
        self._expire_if_due()
        return self._leading

    def permits(self, write: str) -> bool:
        """The fence: no await may come between this check and the request it guards."""
        if self.leading:
            return True
        logger.info("Not sending %s: this replica does not hold the Lease", write)
        if self._on_refused is not None:
            self._on_refused(write)
        return False

    @property
    def term(self) -> int:
        """How many times this replica has acquired the Lease: tells one holding from the next."""
        return self._term

    async def wait_until_leading(self) -> int:
        """Until this replica holds the Lease; the term of that holding."""
        while not self.leading:
            self._changed.clear()
            await self._changed.wait()
        return self._term

    async def wait_until_lost(self, term: int) -> None:
        """Until the holding `term` is over, even if a later one already began."""
        while self.leading and self._term == term:
            self._changed.clear()
            await self._changed.wait()

    def _set_leading(self, leading: bool) -> None:
        if leading == self._leading:
            return
        self._leading = leading
        if leading:
            self._term += 1
        self._changed.set()
        if leading:
            logger.info("Holding the Lease as %s", self.identity)
        else:
            logger.warning("Lost the Lease: bindings and preemptions stop until it is regained")

    def _expire_if_due(self) -> None:
        if self._leading and self._clock.now() >= self._valid_until:
            self._set_leading(False)

    def _observe(self, snapshot: LeaseSnapshot) -> None:
        """client-go's rule: the holder's lease runs from when *we* saw its record change."""
        if snapshot.record != self._observed:
            self._observed = snapshot.record
            self._observed_at = self._clock.now()
        self._observed_version = snapshot.resource_version

    def _held_by_other(self) -> bool:
        record = self._observed
        if record is None or not record.holder or record.holder == self.identity:
            return False
        return self._clock.now() < self._observed_at + record.lease_duration_seconds

    # ------------------------------------------------------------------ peering's side

    def compete(self) -> None:
        """Peering made this replica active: try to acquire at once, then every retry period."""
        self._competing = True
        self._wakeup.set()

    async def stand_down(self) -> None:
        """Peering paused this replica (or it shuts down): stop writing, then release the Lease.

        Like client-go's ReleaseOnCancel: the holder becomes "" with a 1-second
        duration, so the next candidate need not wait out the full lease.
        """
        self._competing = False
        self._valid_until = -math.inf
        self._set_leading(False)
        try:
            async with asyncio.timeout(self._timing.renew_deadline):
                await self._release()
        except (TimeoutError, LeaseUnavailable) as error:
            logger.warning("Could not release the Lease (it will expire): %s", error)

    async def _release(self) -> None:
        for _ in range(2):  # a renewal may have landed meanwhile: one retry after a conflict
            snapshot = await self._store.get()
            if snapshot is None:
                return
            self._observe(snapshot)
            if snapshot.record.holder != self.identity:
                return
            now = format_micro_time(self._wall_clock())
            released = LeaseRecord(
                holder="",
                lease_duration_seconds=1,
                acquire_time=now,
                renew_time=now,
                transitions=snapshot.record.transitions,
            )
            try:
                version = await self._store.update(
                    released, resource_version=snapshot.resource_version
                )
            except LeaseConflict:
                continue
            self._observe(LeaseSnapshot(released, version))
            logger.info("Released the Lease")
            return

    # ------------------------------------------------------------------ the rounds

    async def run(self) -> None:
        """Every retry period: acquire or renew while competing, else only observe."""
        while True:
            await self.tick()
            self._wakeup.clear()
            try:
                async with asyncio.timeout(self._timing.retry_period):
                    await self._wakeup.wait()
            except TimeoutError:
                pass

    async def tick(self) -> None:
        """One round; never raises for API trouble (the deadline decides what failure costs)."""
        self._expire_if_due()
        try:
            async with asyncio.timeout(self._timing.renew_deadline):
                if self._competing:
                    await self._acquire_or_renew()
                else:
                    snapshot = await self._store.get()
                    if snapshot is not None:
                        self._observe(snapshot)
        except (TimeoutError, LeaseUnavailable, LeaseConflict) as error:
            logger.info("Lease round failed: %s", error)
        self._expire_if_due()

    async def _acquire_or_renew(self) -> None:
        wall = format_micro_time(self._wall_clock())
        mine = LeaseRecord(
            holder=self.identity,
            lease_duration_seconds=self._timing.lease_duration,
            acquire_time=wall,
            renew_time=wall,
            transitions=0,
        )
        observed = self._observed
        if self._leading and observed is not None:
            # Fast path: renew on the version we wrote last; any error falls back to a read.
            renewal = replace(
                mine, acquire_time=observed.acquire_time, transitions=observed.transitions
            )
            try:
                await self._write(renewal, resource_version=self._observed_version)
                return
            except (LeaseConflict, LeaseUnavailable) as error:
                logger.info("Renewing the Lease optimistically failed: %s", error)
        snapshot = await self._store.get()
        if snapshot is None:
            await self._write(mine, resource_version=None)
            return
        self._observe(snapshot)
        if self._held_by_other():
            return
        current = snapshot.record
        if current.holder == self.identity:
            desired = replace(
                mine, acquire_time=current.acquire_time, transitions=current.transitions
            )
        else:
            desired = replace(mine, transitions=current.transitions + 1)
        await self._write(desired, resource_version=snapshot.resource_version)

    async def _write(self, record: LeaseRecord, *, resource_version: str | None) -> None:
        """Create or update; on success move the fence to renew_deadline after the request began."""
        if not self._competing:
            return  # stand_down() came while this round was reading
        sent = self._clock.now()
        if resource_version is None:
            version = await self._store.create(record)
        else:
            version = await self._store.update(record, resource_version=resource_version)
        self._observe(LeaseSnapshot(record, version))
        if not self._competing:
            # stand_down() came while the write was in flight and may have read the Lease
            # before it landed: give back what was just taken.
            await self._release()
            return
        self._valid_until = sent + self._timing.renew_deadline
        self._arm_expiry()
        self._set_leading(self._clock.now() < self._valid_until)

    def _arm_expiry(self) -> None:
        """Announce a lost Lease when the deadline passes, even if no write asks first."""
        if self._expiry is not None:
            self._expiry.cancel()
        delay = max(0.0, self._valid_until - self._clock.now())
        self._expiry = asyncio.get_running_loop().call_later(delay, self._expire_if_due)
