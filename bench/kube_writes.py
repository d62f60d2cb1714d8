"""bench/kube_writes: Bindings and Scheduled events per second over one shared ApiSession.

    python bench/kube_writes.py [--pods 3000] [--concurrency 1 16 64]

Starts a fresh local control plane, creates `--pods` unscheduled pods per run and
binds them all with ApiBinder under each concurrency (a semaphore, like the loop's
bounded binds), then posts a Scheduled event for each with ApiReporter (no rate
limit). Prints wall time, rate and this process's CPU per request. The apiserver
and etcd share the machine's cores with us. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from berth.controlplane import LocalControlPlane, PodTemplate, create_pods, pod_manifest
from berth.controlplane.objects import create_namespace
from berth.engine.model.pod import Pod
from berth.kube.api import ApiSession
from berth.kube.binder import ApiBinder
from berth.kube.reporting import ApiReporter
from berth.scheduling.ports import BindOutcome, MonotonicClock

TEMPLATE = PodTemplate(scheduler_name="bench-nobody")


async def one_run(plane: LocalControlPlane, pods: int, concurrency: int) -> None:
    async with plane.client() as client:
        namespace = await create_namespace(client)
        manifests = [pod_manifest(f"p-{i:05d}", TEMPLATE) for i in range(pods)]
        await create_pods(client, namespace, manifests)
        raw, _ = await client.list(f"/api/v1/namespaces/{namespace}/pods")
    objects = [Pod.from_dict(item) for item in raw]

    async with ApiSession.from_kubeconfig(plane.admin_kubeconfig) as session:
        binder = ApiBinder(session)
        limit = asyncio.Semaphore(concurrency)

        async def bind(pod: Pod, index: int) -> BindOutcome:
            async with limit:
                return (await binder.bind(pod, f"node-{index % 100}")).outcome

        wall, cpu = time.perf_counter(), time.process_time()
        outcomes = await asyncio.gather(*(bind(p, i) for i, p in enumerate(objects)))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        bound = sum(o is BindOutcome.BOUND for o in outcomes)
        print(
            f"binds      c={concurrency:3d}: {bound}/{pods} bound in {wall:.2f}s = "
            f"{pods / wall:7.0f}/s, client CPU {cpu / pods * 1e6:5.0f} us/bind"
        )

        reporter = ApiReporter(
            session,
            clock=MonotonicClock(),
            instance="bench",
            qps=None,
            max_in_flight=concurrency,
        )
        wall, cpu = time.perf_counter(), time.process_time()
        reporter.start()
        for pod in objects:
            reporter.scheduled(pod, "node-0", profile="bench")
        await reporter.stop(flush_timeout=600)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(
            f"events     c={concurrency:3d}: {reporter.sent_requests} sent in {wall:.2f}s = "
            f"{reporter.sent_requests / wall:7.0f}/s, client CPU "
            f"{cpu / max(1, reporter.sent_requests) * 1e6:5.0f} us/event"
        )


async def main(pods: int, concurrencies: list[int]) -> None:
    with LocalControlPlane(build=True) as plane:
        for concurrency in concurrencies:
            await one_run(plane, pods, concurrency)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    arguments = parser.parse_args()
    asyncio.run(main(arguments.pods, arguments.concurrency))
