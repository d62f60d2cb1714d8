"""Live: the scheduling loop with the default profile refuses a pod with DRA ResourceClaims, reports
FailedScheduling with the stand-in's message and binds nothing."""

from __future__ import annotations

import random

from berth.engine.framework.runtime import build_framework
from berth.profiles import default_profile_config
from berth.scheduling.loop import Scheduler
from tests.builders import make_node, make_pod
from tests.fakes import FakeBinder, FakeClock, FakeReporter


async def test_a_claim_pod_is_refused_and_never_bound() -> None:
    binder, reporter = FakeBinder(), FakeReporter()
    scheduler = Scheduler(binder=binder, reporter=reporter, clock=FakeClock(), rng=random.Random(1))
    scheduler.set_profile(build_framework(default_profile_config()))
    scheduler.activate()
    scheduler.on_node(make_node("a").capacity(cpu="4", memory="8Gi", pods=10).build())
    scheduler.on_pod(make_pod("trainer").resource_claim("gpu").build())
    scheduler.on_pod(make_pod("plain").build())
    for _ in range(2):
        info = scheduler.queue.pop_nowait()
        assert info is not None
        scheduler.schedule_next(info)
    await scheduler.drain_binds()
    assert binder.posted == [("plain", "a")]
    assert [(name, message.split(". preemption")[0]) for name, message, _ in reporter.failures] == [
        (
            "trainer",
            "0/1 nodes are available: pod uses ResourceClaim(s) [gpu]; this scheduler does not "
            "support dynamic resource allocation (DRA) yet",
        )
    ]
