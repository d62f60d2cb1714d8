"""BerthApp: the scheduling loop runs only while peering has the replica active *and* it holds the Lease."""

from __future__ import annotations

import asyncio

from berth.kube.app import BerthApp, Settings
from berth.kube.binder import ApiBinder
from berth.kube.lease import LeaseElector, LeaseTiming
from berth.kube.metrics import SchedulerMetrics
from berth.kube.observer import PrometheusObserver
from berth.kube.reporting import ApiReporter
from tests.unit.kube.fakes import FakeClock, FakeLease, FakeLeaseStore, FakeSession, FakeWallClock


class LeaderRecorder(PrometheusObserver):
    """Real metrics, plus the order in which the loop started (True) and stopped (False)."""

    def __init__(self) -> None:
        super().__init__(SchedulerMetrics())
        self.changes: list[bool] = []

    def leader(self, leading: bool) -> None:
        super().leader(leading)
        self.changes.append(leading)


def make_app(
    lease: FakeLease, identity: str, clock: FakeClock, store: FakeLeaseStore | None = None
) -> tuple[BerthApp, LeaseElector]:
    session = FakeSession()
    elector = LeaseElector(
        store or FakeLeaseStore(lease),
        identity=identity,
        timing=LeaseTiming(),
        clock=clock,
        wall_clock=FakeWallClock(clock),
    )
    app = BerthApp(
        settings=Settings(),
        session=session,  # type: ignore[arg-type]
        binder=ApiBinder(session, fence=elector),  # type: ignore[arg-type]
        reporter=ApiReporter(session, clock=clock, instance=identity),  # type: ignore[arg-type]
        metrics=LeaderRecorder(),
        lease=elector,
    )
    return app, elector


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def test_peering_alone_does_not_start_the_loop_while_another_replica_holds_the_lease() -> (
    None
):
    lease, clock = FakeLease(), FakeClock()
    other, other_elector = make_app(lease, "other", clock)
    await other.acquire()
    await other_elector.tick()
    await settle()
    app, elector = make_app(lease, "me", clock)

    await app.acquire()  # kopf peering says active
    await elector.tick()
    await settle()

    assert other.leading and not app.leading
    await other.release()
    await app.release()


async def test_the_loop_starts_with_the_lease_and_stops_when_renewal_fails() -> None:
    lease, clock = FakeLease(), FakeClock()
    store = FakeLeaseStore(lease)
    app, elector = make_app(lease, "me", clock, store)

    await app.acquire()
    assert not app.leading
    await elector.tick()
    await settle()
    assert app.leading

    store.cut_off = True
    clock.advance(LeaseTiming().renew_deadline)
    await elector.tick()
    await settle()

    assert not app.leading  # although peering still has it active
    assert app.leadership.holders == 1
    assert isinstance(app.metrics, LeaderRecorder)
    assert app.metrics.changes == [True, False]
    await app.release()


async def test_a_peering_pause_stops_the_loop_and_releases_the_lease() -> None:
    lease, clock = FakeLease(), FakeClock()
    app, elector = make_app(lease, "me", clock)
    await app.acquire()
    await elector.tick()
    await settle()

    await app.release()

    assert not app.leading and not elector.leading
    assert lease.record is not None and lease.record.holder == ""
