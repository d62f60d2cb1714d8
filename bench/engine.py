"""bench/engine: per-decision latency of the engine alone (no API server), in microseconds.

    python bench/engine.py [--nodes 5000] [--placed 10000] [--decisions 500]

Each scenario builds a ClusterState of simulated nodes (4 CPU, 32Gi, 110 pods,
three zones, scheduler_perf's template) with `--placed` pods already bound, then
times `schedule_one` + assume for `--decisions` new pods with the default profile.
The DRA scenario gives every node a ResourceSlice of 8 GPUs (scheduler_perf's DRA
device template) and every pod one ResourceClaim for one GPU of a class selected by
real CEL; its decision also runs Reserve (DynamicResources assumes the allocation
there) and settles the claim as PreBind would write it, so the next pod sees it.
The cyclic collector runs with `berth run`'s thresholds (`wiring.GC_THRESHOLDS`).
Prints median and p99 of the decision's CPU time (thread time, so that other
processes on a shared machine do not inflate it) per scenario. A measurement,
not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.dra_allocation import SELECTOR, node_slice
from berth.engine.algorithm import Scheduled, SearchState, schedule_one
from berth.engine.cluster import ClusterState
from berth.engine.dra.claims import ResourceClaim
from berth.engine.dra.classes import DeviceClass
from berth.engine.framework.runtime import Framework, build_framework
from berth.engine.model.pod import Pod
from berth.kube.wiring import GC_THRESHOLDS
from berth.profiles import default_profile_config
from berth.scheduling.simulated_claims import settle_assumed_allocations
from tests.builders import PodBuilder, make_node, make_pod

ZONES = ("zone-a", "zone-b", "zone-c")


GPUS_PER_NODE = 8


def build_cluster(nodes: int, *, gpus: bool = False) -> ClusterState:
    cluster = ClusterState(capacity=nodes)
    for index in range(nodes):
        node = make_node(f"node-{index:05d}").capacity(cpu="4", memory="32Gi", pods=110)
        built = node.zone(ZONES[index % len(ZONES)]).build()
        cluster.upsert_node(built)
        if gpus:
            cluster.dra.upsert(node_slice(built.name, GPUS_PER_NODE))
    if gpus:
        selectors = [{"cel": {"expression": SELECTOR}}]
        cluster.dra.upsert(
            DeviceClass.from_dict({"metadata": {"name": "gpu"}, "spec": {"selectors": selectors}})
        )
    return cluster


def basic_pod(name: str) -> PodBuilder:
    return make_pod(name).req(cpu="100m", memory="500Mi")


def anti_affinity_pod(name: str) -> PodBuilder:
    return (
        basic_pod(name)
        .label("color", "green")
        .anti_affinity("kubernetes.io/hostname", color="green")
    )


def spread_pod(name: str) -> PodBuilder:
    return (
        basic_pod(name)
        .label("app", "spread")
        .spread(
            "topology.kubernetes.io/zone", max_skew=1, selector={"matchLabels": {"app": "spread"}}
        )
    )


def gpu_pod(name: str) -> PodBuilder:
    return basic_pod(name).claim("gpu", f"{name}-gpu")


def gpu_claim(pod: Pod) -> ResourceClaim:
    """The ResourceClaim `gpu_pod` names: one GPU of class `gpu`, not yet allocated."""
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu"}}
    return ResourceClaim.from_dict(
        {
            "metadata": {
                "name": f"{pod.name}-gpu",
                "namespace": pod.namespace,
                "uid": f"{pod.uid}-gpu",
                "resourceVersion": "1",
            },
            "spec": {"devices": {"requests": [request]}},
        }
    )


def reserve(framework: Framework, cluster: ClusterState, pod: Pod, decision: Scheduled) -> None:
    """Reserve as the scheduling cycle runs it, then settle the claims as PreBind writes them."""
    status = framework.run_reserve(decision.state, pod, decision.node_name)
    if not status.is_success:
        raise SystemExit(f"{pod.key}: Reserve failed: {status.message}")
    settle_assumed_allocations(pod, cluster.dra)


def place(cluster: ClusterState, pods: list[Pod], seed: int, *, claims: bool) -> list[float]:
    framework = build_framework(default_profile_config())
    search = SearchState()
    rng = random.Random(seed)
    timings = []
    for pod in pods:
        if claims:
            cluster.dra.upsert(gpu_claim(pod))  # created by the user before the pod is seen
        # CPU time of this thread: on a shared 2-core machine wall time mostly
        # measures who else is running.
        started = time.thread_time()
        decision = schedule_one(framework, cluster, pod, search=search, rng=rng)
        if isinstance(decision, Scheduled):
            cluster.add_pod(pod.assigned_to(decision.node_name))
            if claims:
                reserve(framework, cluster, pod, decision)
        timings.append(time.thread_time() - started)
        if not isinstance(decision, Scheduled):
            raise SystemExit(f"{pod.key} did not schedule: {decision}")
    return timings


def scenario(
    name: str,
    nodes: int,
    placed: int,
    decisions: int,
    existing: Callable[[str], PodBuilder],
    measured: Callable[[str], PodBuilder],
    claims: bool = False,
) -> None:
    cluster = build_cluster(nodes, gpus=claims)
    # Existing pods go where the engine puts them, so the cluster is in a state
    # the scheduler itself would have produced.
    setup = [existing(f"init-{i}").build() for i in range(placed)]
    place(cluster, setup, seed=1, claims=claims)
    pods = [measured(f"measured-{i}").build() for i in range(decisions)]
    timings = place(cluster, pods, seed=2, claims=claims)
    micros = sorted(t * 1e6 for t in timings)
    p99 = micros[min(len(micros) - 1, int(len(micros) * 0.99))]
    print(
        f"{name:<34} nodes={nodes:<5} placed={placed:<6} decisions={decisions:<5} "
        f"median={statistics.median(micros):8.0f} us  p99={p99:8.0f} us"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--placed", type=int, default=10000)
    parser.add_argument("--decisions", type=int, default=500)
    parser.add_argument("--only", default="", help="run the scenarios whose name contains this")
    args = parser.parse_args()
    gc.set_threshold(*GC_THRESHOLDS)  # as the scheduler runs
    nodes, placed, decisions = args.nodes, args.placed, args.decisions
    scenarios: list[tuple[str, int, Callable[[str], PodBuilder], bool]] = [
        ("SchedulingBasic", placed, basic_pod, False),
        # Hostname anti-affinity: every node may hold one green pod, so fewer existing ones fit.
        ("PodAntiAffinity (hostname)", min(placed, nodes // 2), anti_affinity_pod, False),
        ("TopologySpreading (3 zones)", placed, spread_pod, False),
        # A quarter of the GPUs already taken by pods placed the same way.
        ("DRA (1 GPU claim, 8 GPUs/node)", min(placed, nodes * GPUS_PER_NODE // 4), gpu_pod, True),
    ]
    for name, existing, pod, claims in scenarios:
        if args.only in name:
            scenario(name, nodes, existing, decisions, pod, pod, claims=claims)


if __name__ == "__main__":
    main()
