"""Live: DynamicResources' PostFilter deallocation and Unreserve are written within the cycle,
as kube-scheduler's synchronous calls are: the next pod is popped only after the deallocation
landed, a failed deallocation becomes PostFilter's error (ending the FailedScheduling text),
and a binding cycle that fails ends after its claim was unreserved."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field

from berth.engine.cluster import ClusterState
from berth.engine.dra.claims import ResourceClaim
from berth.engine.framework.claim_port import ClaimWrite, Deletion, request_release
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.runtime import build_framework
from berth.profiles import default_profile_config
from berth.scheduling.claim_releases import ClaimReleases, settled
from berth.scheduling.loop import Scheduler
from berth.scheduling.ports import BindOutcome
from tests.builders import make_node, make_pod
from tests.fakes import FakeBinder, FakeClock, FakeReporter
from tests.unit.engine.dra.dra_builders import device, make_slice
from tests.unit.engine.plugins.dra_plugin_support import GPU_CLASS, FakeClaimWriter, claim_raw

DEALLOCATED = "deallocation of ResourceClaim completed"


@dataclass
class GatedClaimWriter(FakeClaimWriter):
    """Deallocations and unreservations wait for `gate` (the API server taking its time)."""

    gate: asyncio.Event = field(default_factory=asyncio.Event)

    async def unreserve(self, claim: ResourceClaim, *, pod_uid: str) -> ClaimWrite:
        self.unreserved.append((claim.key, pod_uid))
        await self.gate.wait()
        return ClaimWrite(claim=claim)

    async def deallocate(self, claim: ResourceClaim) -> ClaimWrite:
        self.deallocated.append(claim.key)
        await self.gate.wait()
        return ClaimWrite(error=self.error) if self.error else ClaimWrite(claim=claim)


def _allocated_on(node: str) -> dict[str, object]:
    terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
    result = {"request": "req", "driver": "gpu.example.com", "pool": node, "device": "gpu-0"}
    return {
        "allocation": {
            "devices": {"results": [result]},
            "nodeSelector": {"nodeSelectorTerms": terms},
        }
    }


def _scheduler(
    writer: FakeClaimWriter, binder: FakeBinder | None = None
) -> tuple[Scheduler, FakeReporter]:
    """Node a holds the GPU but is cordoned; node b has none. Claim c is allocated on a and
    reserved for nobody: the pod fits nowhere, and PostFilter frees the claim."""
    reporter = FakeReporter()
    scheduler = Scheduler(
        binder=binder or FakeBinder(), reporter=reporter, clock=FakeClock(), rng=random.Random(1)
    )
    scheduler.services.claims = writer
    scheduler.set_profile(build_framework(default_profile_config()))
    scheduler.activate()
    scheduler.on_node(make_node("a").capacity(cpu="4", pods=10).unschedulable().build())
    scheduler.on_node(make_node("b").capacity(cpu="4", pods=10).build())
    dra = scheduler.services.cluster.dra
    dra.upsert(GPU_CLASS)
    dra.upsert(make_slice("a-gpus", [device("gpu-0")], node="a"))
    raw = claim_raw("c")
    raw["status"] = _allocated_on("a")
    dra.upsert(ResourceClaim.from_dict(raw))
    return scheduler, reporter


async def _until(condition: object, what: str) -> None:
    for _ in range(1000):
        if callable(condition) and condition():
            return
        await asyncio.sleep(0)
    raise AssertionError(f"never happened: {what}")


async def test_the_next_pod_waits_until_the_deallocation_is_written() -> None:
    writer = GatedClaimWriter()
    scheduler, reporter = _scheduler(writer)
    scheduler.on_pod(make_pod("trainer").uid("t").priority(10).claim("gpu", "c").build())
    scheduler.on_pod(make_pod("plain").uid("x").build())
    loop = asyncio.create_task(scheduler.run())
    try:
        await _until(lambda: writer.deallocated == ["default/c"], "the deallocation was sent")
        for _ in range(50):
            await asyncio.sleep(0)
        # Upstream's PostFilter has not returned yet: no report, no next pod.
        assert reporter.failures == []
        assert [pod.name for pod in _pending(scheduler)] == ["plain"]
        writer.gate.set()
        await _until(lambda: reporter.failures, "the trainer's failure was reported")
        [(name, message, _)] = reporter.failures
        # DynamicResources' PostFilter runs before DefaultPreemption's, as upstream orders them.
        assert name == "trainer" and f". {DEALLOCATED}, preemption: " in message
        await _until(lambda: not _pending(scheduler), "the plain pod was popped")
    finally:
        loop.cancel()
        await asyncio.gather(loop, return_exceptions=True)


def _pending(scheduler: Scheduler) -> list[object]:
    return [
        info.pod for info in scheduler.queue if scheduler.queue.queue_of(info.pod.uid) == "active"
    ]


async def test_a_failed_deallocation_is_postfilters_error_in_the_message() -> None:
    refusal = 'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "c": modified'
    writer = FakeClaimWriter(error=refusal)
    scheduler, reporter = _scheduler(writer)
    scheduler.on_pod(make_pod("trainer").uid("t").claim("gpu", "c").build())
    info = scheduler.queue.pop_nowait()
    assert info is not None
    scheduler.schedule_next(info)
    assert reporter.failures == []  # reported once the write answered
    await scheduler.settle()
    [(name, message, _)] = reporter.failures
    assert name == "trainer"
    # Upstream's RunPostFilterPlugins stops at the error: no preemption message follows.
    assert message.endswith(f"on the node. {refusal}")
    assert writer.deallocated == ["default/c"]


async def test_a_failed_binding_cycle_ends_after_its_claim_was_unreserved() -> None:
    writer = GatedClaimWriter()
    binder = FakeBinder(outcomes={"trainer": BindOutcome.FAILED})
    scheduler, _ = _scheduler(writer, binder)
    scheduler.on_node(make_node("a").capacity(cpu="4", pods=10).build())  # uncordoned
    scheduler.on_pod(make_pod("trainer").uid("t").claim("gpu", "c").build())
    info = scheduler.queue.pop_nowait()
    assert info is not None
    scheduler.schedule_next(info)
    draining = asyncio.create_task(scheduler.drain_binds())
    await _until(lambda: writer.unreserved == [("default/c", "t")], "the unreserve was sent")
    for _ in range(50):
        await asyncio.sleep(0)
    assert binder.posted == [("trainer", "a")]
    assert not draining.done()  # the binding cycle waits for its write
    writer.gate.set()
    await draining
    assert scheduler.releases.in_flight == 0


async def test_a_deletion_is_sent_and_its_failure_returned_like_a_deallocations() -> None:
    writer = FakeClaimWriter(error="update resourceclaim default/c: denied")
    state = CycleState(ClusterState())
    request_release(state, Deletion(ResourceClaim.from_dict(claim_raw("c"))))
    task = ClaimReleases().start(writer, state)
    assert task is not None
    assert await settled(task) == "update resourceclaim default/c: denied"
    assert writer.deleted == ["default/c"]
