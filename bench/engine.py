"""bench/engine: per-decision latency of the engine alone (no API server), in microseconds.

    python bench/engine.py [--nodes 5000] [--placed 10000] [--decisions 500]

Each scenario builds a ClusterState of simulated nodes (4 CPU, 32Gi, 110 pods,
three zones, scheduler_perf's template) with `--placed` pods already bound, then
times `schedule_one` + assume for `--decisions` new pods with the default profile.
Prints median and p99 of the decision's CPU time (thread time, so that other
processes on a shared machine do not inflate it) per scenario. A measurement,
not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from berth.engine.algorithm import Scheduled, SearchState, schedule_one
from berth.engine.cluster import ClusterState
from berth.engine.framework.runtime import build_framework
from berth.engine.model.pod import Pod
from berth.profiles import default_profile_config
from tests.builders import PodBuilder, make_node, make_pod

ZONES = ("zone-a", "zone-b", "zone-c")


def build_cluster(nodes: int) -> ClusterState:
    cluster = ClusterState(capacity=nodes)
    for index in range(nodes):
        node = make_node(f"node-{index:05d}").capacity(cpu="4", memory="32Gi", pods=110)
        cluster.upsert_node(node.zone(ZONES[index % len(ZONES)]).build())
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


def place(cluster: ClusterState, pods: list[Pod], seed: int) -> list[float]:
    framework = build_framework(default_profile_config())
    search = SearchState()
    rng = random.Random(seed)
    timings = []
    for pod in pods:
        # CPU time of this thread: on a shared 2-core machine wall time mostly
        # measures who else is running.
        started = time.thread_time()
        decision = schedule_one(framework, cluster, pod, search=search, rng=rng)
        if isinstance(decision, Scheduled):
            cluster.add_pod(pod.assigned_to(decision.node_name))
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
) -> None:
    cluster = build_cluster(nodes)
    # Existing pods go where the engine puts them, so the cluster is in a state
    # the scheduler itself would have produced.
    setup = [existing(f"init-{i}").build() for i in range(placed)]
    place(cluster, setup, seed=1)
    timings = place(cluster, [measured(f"measured-{i}").build() for i in range(decisions)], seed=2)
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
    args = parser.parse_args()
    scenario("SchedulingBasic", args.nodes, args.placed, args.decisions, basic_pod, basic_pod)
    # Hostname anti-affinity: every node may hold one green pod, so fewer existing ones fit.
    scenario(
        "PodAntiAffinity (hostname)",
        args.nodes,
        min(args.placed, args.nodes // 2),
        args.decisions,
        anti_affinity_pod,
        anti_affinity_pod,
    )
    scenario(
        "TopologySpreading (3 zones)",
        args.nodes,
        args.placed,
        args.decisions,
        spread_pod,
        spread_pod,
    )


if __name__ == "__main__":
    main()
