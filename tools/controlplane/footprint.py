"""Measure the local control plane's cost: start time and memory, idle and loaded.

Benchmarks share two cores and 24 GiB with etcd and kube-apiserver, so their
footprint at benchmark scale is part of every result's context. This prints
one JSON document; run it with the repository's Python environment:

    PYTHONPATH=operator python tools/controlplane/footprint.py --nodes 5000 --pods 10000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from berth.controlplane import LocalControlPlane, NodeTemplate, PodTemplate, create_nodes
from berth.controlplane.objects import create_namespace, create_pods, pod_manifest


def _mib(sizes: dict[str, int]) -> dict[str, float]:
    return {name: round(size / 2**20, 1) for name, size in sizes.items()}


def _du_mib(path: Path) -> float:
    result = subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True, check=True)
    return round(int(result.stdout.split()[0]) / 2**20, 1)


async def _load(plane: LocalControlPlane, nodes: int, pods: int) -> dict[str, float]:
    timings: dict[str, float] = {}
    async with plane.client() as client:
        began = time.monotonic()
        node_names = await create_nodes(client, NodeTemplate(), nodes)
        timings["create_nodes_seconds"] = round(time.monotonic() - began, 1)
        namespace = await create_namespace(client, "footprint")
        # Created already bound (spec.nodeName), the state a finished
        # benchmark leaves behind, without a scheduler in the measurement.
        manifests = [
            pod_manifest(f"pod-{i:05d}", PodTemplate(), node_name=node_names[i % nodes])
            for i in range(pods)
        ]
        began = time.monotonic()
        await create_pods(client, namespace, manifests)
        timings["create_pods_seconds"] = round(time.monotonic() - began, 1)
    return timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=10000)
    args = parser.parse_args()
    report: dict[str, Any] = {}
    with LocalControlPlane() as plane:
        report["ready_after_seconds"] = round(plane.ready_after_seconds or 0.0, 2)
        # Let start-up work (bootstrap RBAC, priority classes) settle so that
        # "idle" means idle; this is a measurement, not a test.
        time.sleep(10)
        report["idle_rss_mib"] = _mib(plane.rss_bytes())
        report["idle_etcd_data_mib"] = _du_mib(plane.run_dir / "etcd")
        report.update(asyncio.run(_load(plane, args.nodes, args.pods)))
        time.sleep(10)
        report[f"loaded_{args.nodes}_nodes_{args.pods}_pods_rss_mib"] = _mib(plane.rss_bytes())
        report["loaded_etcd_data_mib"] = _du_mib(plane.run_dir / "etcd")
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
