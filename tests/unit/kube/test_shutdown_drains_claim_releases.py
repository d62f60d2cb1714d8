"""Graceful shutdown: claim writes still in flight (an Unreserve whose cycle was cut short)
finish while this replica holds the Lease, and only then is the Lease released, so a
failover never leaves a claim reserved for a pod nobody will bind."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from berth.engine.dra.claims import ResourceClaim
from berth.engine.framework.claim_port import ClaimWrite, Unreservation, request_release
from berth.engine.framework.cycle_state import CycleState
from tests.unit.engine.plugins.dra_plugin_support import FakeClaimWriter, claim_raw
from tests.unit.kube.fakes import FakeClock, FakeLease, FakeLeaseStore
from tests.unit.kube.test_app_leads_only_with_the_lease import make_app, settle


@dataclass
class GatedWriter(FakeClaimWriter):
    """Unreservations wait for `gate`; each notes who held the Lease when it landed."""

    lease: FakeLease = field(default_factory=FakeLease)
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    holders_at_write: list[str] = field(default_factory=list)

    async def unreserve(self, claim: ResourceClaim, *, pod_uid: str) -> ClaimWrite:
        await self.gate.wait()
        record = self.lease.record
        self.holders_at_write.append(record.holder if record is not None else "")
        return ClaimWrite(claim=claim)


async def test_close_waits_for_claim_releases_before_releasing_the_lease() -> None:
    lease, clock = FakeLease(), FakeClock()
    app, elector = make_app(lease, "me", clock, FakeLeaseStore(lease))
    await app.acquire()
    await elector.tick()
    await settle()
    assert app.leading
    writer = GatedWriter(lease=lease)
    app.scheduler.services.claims = writer
    state = CycleState(app.scheduler.cache.cluster)
    request_release(state, Unreservation(ResourceClaim.from_dict(claim_raw("c")), "p-uid"))
    assert app.scheduler.releases.start(writer, state) is not None

    closing = asyncio.create_task(app.close())
    await settle()
    assert not closing.done()  # the release is still being written
    assert lease.record is not None and lease.record.holder == "me"

    writer.gate.set()
    await closing
    assert writer.holders_at_write == ["me"]
    assert lease.record is not None and lease.record.holder == ""
    assert app.scheduler.releases.in_flight == 0
