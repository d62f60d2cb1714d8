"""Live: the scheduling loop with the default profile allocates a GPU claim, writes it in PreBind
through the claim port and binds; a pod whose template claim is not created yet waits before the
queue while others are bound."""

from __future__ import annotations

import random

from berth.engine.dra.claims import ResourceClaim
from berth.engine.framework.runtime import build_framework
from berth.profiles import default_profile_config
from berth.scheduling.loop import Scheduler
from tests.builders import make_node, make_pod
from tests.fakes import FakeBinder, FakeClock, FakeReporter
from tests.unit.engine.dra.dra_builders import device, make_slice
from tests.unit.engine.plugins.dra_plugin_support import GPU_CLASS, FakeClaimWriter, claim_raw


def _scheduler() -> tuple[Scheduler, FakeBinder, FakeClaimWriter]:
    binder, reporter = FakeBinder(), FakeReporter()
    scheduler = Scheduler(binder=binder, reporter=reporter, clock=FakeClock(), rng=random.Random(1))
    writer = FakeClaimWriter()
    scheduler.services.claims = writer
    scheduler.set_profile(build_framework(default_profile_config()))
    scheduler.activate()
    for name in ("a", "b"):
        scheduler.on_node(make_node(name).capacity(cpu="4", memory="8Gi", pods=10).build())
    return scheduler, binder, writer


async def test_a_gpu_claim_is_allocated_written_and_the_pod_bound_where_the_gpu_is() -> None:
    scheduler, binder, writer = _scheduler()
    dra = scheduler.services.cluster.dra
    dra.upsert(GPU_CLASS)
    dra.upsert(make_slice("b-gpus", [device("gpu-0")], node="b"))
    dra.upsert(ResourceClaim.from_dict(claim_raw("c")))
    scheduler.on_pod(make_pod("trainer").uid("t").claim("gpu", "c").build())
    info = scheduler.queue.pop_nowait()
    assert info is not None
    scheduler.schedule_next(info)
    await scheduler.drain_binds()
    assert binder.posted == [("trainer", "b")]
    [(key, allocation, consumer)] = writer.reserved
    assert key == "default/c" and consumer.uid == "t"
    assert allocation is not None and [d.device for d in allocation.devices] == ["gpu-0"]


async def test_a_pod_waiting_for_its_generated_claim_is_not_scheduled() -> None:
    scheduler, binder, _ = _scheduler()
    scheduler.on_pod(make_pod("trainer").resource_claim("gpu").build())
    scheduler.on_pod(make_pod("plain").build())
    info = scheduler.queue.pop_nowait()
    assert info is not None and info.pod.name == "plain"
    scheduler.schedule_next(info)
    assert scheduler.queue.pop_nowait() is None
    await scheduler.drain_binds()
    assert [name for name, _ in binder.posted] == ["plain"]


def test_simulate_with_the_default_profile_allocates_real_devices() -> None:
    from berth.engine.dra.claims import ResourceClaimTemplate
    from berth.scheduling.simulator import simulate

    template = ResourceClaimTemplate.from_dict(
        {
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {"spec": claim_raw("unused")["spec"]},
        }
    )
    pods = [
        make_pod(f"train-{index}").uid(f"t{index}").resource_claim("gpu", "one-gpu").build()
        for index in range(3)
    ]
    nodes = [make_node(name).capacity(cpu="4", memory="8Gi", pods=10).build() for name in "ab"]
    result = simulate(
        nodes=nodes,
        pods=pods,
        default=build_framework(default_profile_config()),
        dra=[GPU_CLASS, make_slice("a-gpus", [device("gpu-0")], node="a"), template],
    )
    # One GPU in the cluster: the first pod gets it, the others find no node that can allocate.
    assert [placement.node for placement in result.placements] == ["a", None, None]
    assert [d.device for d in result.placements[0].claims[0].devices] == ["gpu-0"]
    assert "cannot allocate all claims" in result.placements[1].message
