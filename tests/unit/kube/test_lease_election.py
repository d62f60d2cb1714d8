"""LeaseElector: client-go's leader-election rules on a fake Lease and a fake clock.

Each replica is an elector with its own store view onto one shared FakeLease and
its own FakeClock (so a "frozen" replica is one whose clock jumps without ticks).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import timedelta

import pytest

from berth.kube.lease import LeaseElector, LeaseTiming
from berth.kube.lease_store import LeaseConflict
from tests.unit.kube.fakes import FakeClock, FakeLease, FakeLeaseStore, FakeWallClock

TIMING = LeaseTiming()  # kube-scheduler's defaults: 15 s lease, 10 s renew deadline, 2 s retry


@dataclass
class Replica:
    elector: LeaseElector
    store: FakeLeaseStore
    clock: FakeClock
    refused: list[str] = field(default_factory=list)

    async def round_after(self, seconds: float) -> None:
        """Time passes for this replica, then it runs one round."""
        self.clock.advance(seconds)
        await self.elector.tick()


def replica(
    lease: FakeLease, identity: str, *, clock: FakeClock | None = None, skew: float = 0.0
) -> Replica:
    clock = clock or FakeClock()
    wall = FakeWallClock(clock)
    wall.origin += timedelta(seconds=skew)
    store = FakeLeaseStore(lease)
    refused: list[str] = []
    elector = LeaseElector(
        store,
        identity=identity,
        timing=TIMING,
        clock=clock,
        wall_clock=wall,
        on_refused=refused.append,
    )
    return Replica(elector, store, clock, refused)


async def leader_and_standby(lease: FakeLease) -> tuple[Replica, Replica]:
    """Replica a holds the Lease; b competes and has observed a's latest record."""
    shared = FakeClock()
    a, b = replica(lease, "a", clock=shared), replica(lease, "b", clock=shared)
    a.elector.compete()
    await a.elector.tick()
    b.elector.compete()
    await b.elector.tick()
    assert a.elector.leading and not b.elector.leading
    return a, b


async def test_a_free_lease_is_created_and_held_by_the_replica() -> None:
    lease = FakeLease()
    a = replica(lease, "a")
    a.elector.compete()

    await a.elector.tick()

    assert a.elector.leading and a.elector.permits("binding")
    assert lease.record is not None
    assert (lease.record.holder, lease.record.lease_duration_seconds) == ("a", 15)
    assert lease.record.transitions == 0


async def test_the_holder_renews_on_the_version_it_wrote_and_keeps_its_acquire_time() -> None:
    lease = FakeLease()
    a = replica(lease, "a")
    a.elector.compete()
    await a.elector.tick()
    acquired = lease.record

    for _ in range(5):
        await a.round_after(TIMING.retry_period)

    assert lease.record is not None and acquired is not None
    assert len(lease.writes) == 6
    assert lease.record.acquire_time == acquired.acquire_time
    assert lease.record.renew_time > acquired.renew_time
    assert lease.record.transitions == 0
    assert a.elector.leading


async def test_a_standby_never_takes_a_lease_that_keeps_being_renewed() -> None:
    a, b = await leader_and_standby(FakeLease())

    for _ in range(30):  # a minute of rounds
        a.clock.advance(TIMING.retry_period)
        await a.elector.tick()
        await b.elector.tick()

    assert a.elector.leading and not b.elector.leading


@pytest.mark.parametrize("skew", [-3600.0, 0.0, 3600.0], ids=["behind", "in-sync", "ahead"])
async def test_expiry_is_timed_from_the_standbys_own_observation_not_the_record(
    skew: float,
) -> None:
    lease = FakeLease()
    a = replica(lease, "a", skew=skew)  # renewTime written by a clock an hour off
    a.elector.compete()
    await a.elector.tick()
    b = replica(lease, "b")
    b.elector.compete()

    await b.round_after(0.0)  # b sees a's record for the first time now
    await b.round_after(TIMING.lease_duration - 0.1)
    assert not b.elector.leading
    await b.round_after(0.1)

    assert b.elector.leading
    assert lease.record is not None
    assert (lease.record.holder, lease.record.transitions) == ("b", 1)


async def test_a_replica_that_cannot_renew_stops_writing_at_the_renew_deadline() -> None:
    lease = FakeLease()
    a = replica(lease, "a")
    a.elector.compete()
    await a.elector.tick()
    a.store.cut_off = True  # partitioned: every renewal fails, nobody else took over

    await a.round_after(TIMING.renew_deadline - 0.1)
    assert a.elector.permits("binding")
    a.clock.advance(0.1)

    assert not a.elector.permits("binding")
    assert not a.elector.leading
    assert a.refused == ["binding"]


async def test_a_stalled_leader_is_fenced_on_wake_up_and_does_not_take_the_lease_back() -> None:
    lease = FakeLease()
    a, b = await leader_and_standby(lease)

    # a is frozen (no rounds) while b's rounds go on until the lease expires for b.
    for _ in range(8):
        await b.round_after(TIMING.retry_period)
    assert b.elector.leading

    # a wakes up: before any round it must refuse to write, then it sees b's record.
    assert not a.elector.permits("binding")
    await a.elector.tick()
    await a.round_after(TIMING.retry_period)

    assert not a.elector.leading
    assert lease.record is not None and lease.record.holder == "b"
    assert a.refused == ["binding"]


async def test_a_renewal_is_a_compare_and_swap_so_racing_candidates_get_one_winner() -> None:
    lease = FakeLease()
    shared = FakeClock()
    a, b = replica(lease, "a", clock=shared), replica(lease, "b", clock=shared)
    a.elector.compete()
    b.elector.compete()

    await asyncio.gather(a.elector.tick(), b.elector.tick())

    assert [a.elector.leading, b.elector.leading].count(True) == 1
    assert len(lease.writes) == 1


async def test_a_conflicting_update_raises_in_the_store() -> None:
    lease = FakeLease()
    a = replica(lease, "a")
    a.elector.compete()
    await a.elector.tick()
    assert lease.record is not None

    with pytest.raises(LeaseConflict):
        await a.store.update(lease.record, resource_version="0")


async def test_standing_down_releases_the_lease_so_the_standby_takes_it_at_once() -> None:
    lease = FakeLease()
    a, b = await leader_and_standby(lease)

    await a.elector.stand_down()
    assert not a.elector.permits("nomination")
    assert lease.record is not None
    assert (lease.record.holder, lease.record.lease_duration_seconds) == ("", 1)

    await b.elector.tick()  # no waiting: the holder is empty
    assert b.elector.leading
    assert lease.record is not None
    assert (lease.record.holder, lease.record.transitions) == ("b", 1)


async def test_a_paused_replica_observes_so_it_can_take_over_one_lease_after_the_last_renewal() -> (
    None
):
    lease = FakeLease()
    shared = FakeClock()
    a, b = replica(lease, "a", clock=shared), replica(lease, "b", clock=shared)
    a.elector.compete()
    await a.elector.tick()
    for _ in range(5):  # b is paused by peering: it only reads
        shared.advance(TIMING.retry_period)
        await a.elector.tick()
        await b.elector.tick()
    last_renewal = shared.now()

    # a dies; peering makes b active 14 s later (b's rounds keep reading).
    for _ in range(7):
        await b.round_after(TIMING.retry_period)
    b.elector.compete()
    await b.round_after(0.0)
    assert not b.elector.leading
    await b.round_after(TIMING.lease_duration - (shared.now() - last_renewal))

    assert b.elector.leading
    assert not b.refused


async def test_a_replica_that_stood_down_does_not_compete_until_told_again() -> None:
    lease = FakeLease()
    a = replica(lease, "a")
    a.elector.compete()
    await a.elector.tick()
    await a.elector.stand_down()

    await a.round_after(TIMING.lease_duration + 1)
    assert not a.elector.leading
    a.elector.compete()
    await a.elector.tick()
    assert a.elector.leading


async def test_waiting_for_the_loss_of_a_holding_ends_even_if_the_lease_is_regained() -> None:
    lease = FakeLease()
    a = replica(lease, "a")
    a.elector.compete()
    await a.elector.tick()
    term = await a.elector.wait_until_leading()
    waiting = asyncio.create_task(a.elector.wait_until_lost(term))
    await asyncio.sleep(0)
    assert not waiting.done()

    # Lost at the deadline and regained in the same round (nobody else took it):
    a.clock.advance(TIMING.renew_deadline)
    await a.elector.tick()

    assert a.elector.leading and a.elector.term == term + 1
    await asyncio.wait_for(waiting, timeout=1)


@pytest.mark.parametrize(
    ("timing", "problem"),
    [
        (LeaseTiming(lease_duration=10, renew_deadline=10), "must be greater than leaseRenew"),
        (LeaseTiming(renew_deadline=2.4, retry_period=2), "1.2 x leaseRetryPeriodSeconds"),
        (LeaseTiming(retry_period=0), "leaseRetryPeriodSeconds: must be positive"),
        (LeaseTiming(lease_duration=0, renew_deadline=0.5, retry_period=0.1), "at least 1"),
    ],
    ids=["lease-not-longer-than-deadline", "deadline-within-jitter", "no-retry", "zero-lease"],
)
def test_inconsistent_timings_are_named(timing: LeaseTiming, problem: str) -> None:
    assert any(problem in text for text in timing.problems()), timing.problems()
    with pytest.raises(ValueError, match="lease"):
        LeaseElector(FakeLeaseStore(FakeLease()), identity="a", timing=timing)


def test_kube_scheduler_defaults_are_consistent() -> None:
    assert TIMING.problems() == []
    assert (TIMING.lease_duration, TIMING.renew_deadline, TIMING.retry_period) == (15, 10.0, 2.0)


async def test_standing_down_while_an_acquisition_is_in_flight_gives_the_lease_back() -> None:
    lease = FakeLease()
    a = replica(lease, "a")
    held = a.store.writes_held = asyncio.Event()
    a.elector.compete()
    acquiring = asyncio.create_task(a.elector.tick())
    for _ in range(3):  # the round reads no Lease and sends its create, which is held
        await asyncio.sleep(0)

    await a.elector.stand_down()  # reads no Lease yet: the create has not landed
    held.set()  # now it lands
    await acquiring

    assert not a.elector.leading
    assert [record.holder for record in lease.writes] == ["a", ""]
