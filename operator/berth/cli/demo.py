"""`berth demo`: Berth live on a real local control plane, from nothing to a scheduled cluster.

Starts etcd + kube-apiserver + kube-controller-manager (built from the Kubernetes Go
modules, cached) and the stand-in volume provisioner, installs the CRDs and manifests,
runs one Berth replica under its ServiceAccount, creates a few hundred simulated nodes
across three zones and a mixed workload (StatefulSet-like pods with WaitForFirstConsumer
claims among it), shows progress, and ends with a summary: pods bound, pods left pending
with their reasons, per-zone CPU utilisation, and each stateful pod's zone next to its
volume's. Everything is stopped afterwards; with --keep-running, only after Ctrl-C, so
that the live cluster can be asked about (`berth explain`, `berth simulate --from-cluster`).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from collections import Counter
from dataclasses import replace
from typing import Any

from berth.cli.demo_storage import (
    PROVISIONER,
    STATEFUL_PODS,
    STORAGE_CLASS,
    VolumePlacement,
    create_storage,
    read_volume_placements,
    stateful_pods,
    volume_summary,
)
from berth.controlplane import (
    LocalControlPlane,
    NodeTemplate,
    PodTemplate,
    VolumeProvisioner,
    create_nodes,
    create_pods,
)
from berth.controlplane.berth_process import BerthReplica, install
from berth.controlplane.objects import create_namespace, pod_manifest
from berth.engine.model.quantity import to_milli

ZONES = ("zone-a", "zone-b", "zone-c")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo", help="run Berth live on a local control plane", description=__doc__
    )
    parser.add_argument("--nodes", type=int, default=300)
    parser.add_argument("--pods", type=int, default=600, help="approximate size of the workload")
    parser.add_argument(
        "--keep-running",
        action="store_true",
        help="after the summary, keep the cluster and Berth up until Ctrl-C (or SIGTERM) and say "
        "how to ask about it (its kubeconfig, a `berth explain` command for a pending pod)",
    )
    parser.set_defaults(handler=run)


BASE_POD = PodTemplate(scheduler_name="berth", requests={"cpu": "250m", "memory": "512Mi"})


def _workload(total: int) -> list[dict[str, Any]]:
    base = BASE_POD
    manifests: list[dict[str, Any]] = []
    share = max(total // 6, 1)
    spread = replace(
        base,
        labels={"app": "web"},
        topology_spread_constraints=[
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ],
    )
    manifests += [pod_manifest(f"web-{i}", spread) for i in range(share * 2)]
    cache = replace(
        base,
        labels={"app": "cache"},
        requests={"cpu": "1", "memory": "2Gi"},
        affinity={
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": "cache"}},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        },
    )
    manifests += [pod_manifest(f"cache-{i}", cache) for i in range(share)]
    batch = replace(
        base,
        requests={"cpu": "2", "memory": "4Gi"},
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": "node.kubernetes.io/instance-type",
                                    "operator": "In",
                                    "values": ["large"],
                                }
                            ]
                        }
                    ]
                }
            }
        },
    )
    manifests += [pod_manifest(f"batch-{i}", batch) for i in range(share)]
    gpu = replace(
        base,
        node_selector={"accelerator": "gpu"},
        tolerations=[
            {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
        ],
    )
    manifests += [pod_manifest(f"trainer-{i}", gpu) for i in range(share // 2)]
    manifests += [
        pod_manifest(f"too-big-{i}", replace(base, requests={"cpu": "64"})) for i in range(3)
    ]
    manifests += [
        pod_manifest(f"no-gpu-toleration-{i}", replace(base, node_selector={"accelerator": "gpu"}))
        for i in range(3)
    ]
    return manifests


def _pool(
    prefix: str, cpu: str, memory: str, labels: dict[str, str], *, tainted: bool = False
) -> NodeTemplate:
    taints = ({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},) if tainted else ()
    return NodeTemplate(
        name_prefix=prefix,
        zones=ZONES,
        allocatable={"cpu": cpu, "memory": memory, "pods": "110"},
        labels=labels,
        taints=taints,
    )


async def _create_cluster(plane: LocalControlPlane, nodes: int, pods: int) -> tuple[str, int]:
    async with plane.client() as client:
        gpu = max(nodes // 20, 1)
        large = nodes // 3
        pools = (
            (
                _pool("small", "4", "16Gi", {"node.kubernetes.io/instance-type": "small"}),
                nodes - large - gpu,
            ),
            (_pool("large", "16", "64Gi", {"node.kubernetes.io/instance-type": "large"}), large),
            (_pool("gpu", "8", "32Gi", {"accelerator": "gpu"}, tainted=True), gpu),
        )
        names: list[str] = []
        for template, count in pools:
            names += await create_nodes(client, template, count)
        namespace = await create_namespace(client, "demo")
        stateful = stateful_pods(BASE_POD)
        await create_storage(client, namespace=namespace, nodes=names, zones=ZONES, pods=stateful)
        manifests = _workload(pods) + stateful
        await create_pods(client, namespace, manifests)
        return namespace, len(manifests)


async def _progress(plane: LocalControlPlane, namespace: str, total: int) -> list[dict[str, Any]]:
    async with plane.client() as client:
        started = time.monotonic()
        last: tuple[int, int] = (-1, -1)
        stable_since = time.monotonic()
        while True:
            pods, _ = await client.list(f"/api/v1/namespaces/{namespace}/pods")
            claims, _ = await client.list(f"/api/v1/namespaces/{namespace}/persistentvolumeclaims")
            bound = sum(1 for pod in pods if pod["spec"].get("nodeName"))
            claims_done = sum(1 for c in claims if (c.get("status") or {}).get("phase") == "Bound")
            elapsed = time.monotonic() - started
            print(
                f"\r  {bound:5d}/{total} pods and {claims_done}/{len(claims)} claims bound"
                f" after {elapsed:5.1f}s",
                end="",
                flush=True,
            )
            if (bound, claims_done) != last:
                last, stable_since = (bound, claims_done), time.monotonic()
            # Done when every pod is bound, or nothing has moved for a few seconds.
            if bound == total or time.monotonic() - stable_since > 5:
                print()
                return pods
            await asyncio.sleep(0.5)


def _stay_up(plane: LocalControlPlane, pods: list[dict[str, Any]]) -> None:
    """Say how to reach the cluster, then wait for Ctrl-C or SIGTERM (both end in cleanup)."""
    pending = [pod for pod in pods if not pod["spec"].get("nodeName")]
    example = (pending or pods)[0]["metadata"]
    print("The cluster stays up until Ctrl-C. From another shell:")
    print(f"  export KUBECONFIG={plane.admin_kubeconfig}")
    print(f"  berth explain {example['namespace']}/{example['name']}", flush=True)

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        while True:
            signal.pause()
    except KeyboardInterrupt:
        print("Stopping ...", flush=True)
    finally:
        signal.signal(signal.SIGTERM, previous)


async def _volume_placements(
    plane: LocalControlPlane, namespace: str, zone_of: dict[str, str]
) -> list[VolumePlacement]:
    async with plane.client() as client:
        return await read_volume_placements(client, namespace, zone_of=zone_of)


def _summary(plane: LocalControlPlane, namespace: str, pods: list[dict[str, Any]]) -> str:
    nodes = plane.request("GET", "/api/v1/nodes")["items"]
    zone_of = {
        n["metadata"]["name"]: n["metadata"]["labels"].get("topology.kubernetes.io/zone", "")
        for n in nodes
    }
    allocatable: Counter[str] = Counter()
    for node in nodes:
        allocatable[zone_of[node["metadata"]["name"]]] += to_milli(
            node["status"]["allocatable"]["cpu"]
        )
    requested: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    bound = 0
    for pod in pods:
        node = pod["spec"].get("nodeName")
        if node:
            bound += 1
            for container in pod["spec"]["containers"]:
                requested[zone_of.get(node, "")] += to_milli(
                    container["resources"]["requests"].get("cpu", 0)
                )
            continue
        message = next(
            (
                c.get("message", "")
                for c in pod.get("status", {}).get("conditions", [])
                if c.get("type") == "PodScheduled"
            ),
            "(no condition yet)",
        )
        reasons[message] += 1
    lines = [f"Pods bound: {bound}/{len(pods)}"]
    if reasons:
        lines.append("Left pending:")
        lines += [f"  {count:4d} x {message}" for message, count in reasons.most_common()]
    lines.append("CPU requested per zone:")
    for zone in sorted(allocatable):
        share = 100 * requested[zone] / allocatable[zone] if allocatable[zone] else 0.0
        lines.append(
            f"  {zone or '(none)'}: {requested[zone] / 1000:7.1f} of {allocatable[zone] / 1000:7.1f} cores ({share:4.1f}%)"
        )
    lines += volume_summary(asyncio.run(_volume_placements(plane, namespace, zone_of)))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    print(
        "Starting etcd + kube-apiserver + kube-controller-manager"
        " (binaries are built once and cached) ...",
        flush=True,
    )
    with (
        LocalControlPlane(build=True) as plane,
        VolumeProvisioner(plane.admin_kubeconfig, provisioner=PROVISIONER) as provisioner,
    ):
        print(f"  API server ready at {plane.server} after {plane.ready_after_seconds:.1f}s")
        plane.start_kube_controller_manager()
        print(
            "  kube-controller-manager runs the PV controller (binds claims);"
            f" volume provisioner {provisioner.provisioner} stands in for a CSI driver"
        )
        install(plane)
        print(
            "Installed crds/ and manifests/ (ServiceAccount, RBAC, default SchedulerProfile 'berth')"
        )
        replica = BerthReplica(plane, "demo").start()
        try:
            replica.wait_leading()
            print("Berth is running and leading (kopf peering 'berth')")
            namespace, total = asyncio.run(_create_cluster(plane, args.nodes, args.pods))
            print(
                f"Created {args.nodes} nodes in {len(ZONES)} zones (each with a CSINode) and"
                f" {total} pods with schedulerName 'berth', {STATEFUL_PODS} of them StatefulSet-like"
                f" with a WaitForFirstConsumer claim of StorageClass {STORAGE_CLASS}"
            )
            pods = asyncio.run(_progress(plane, namespace, total))
            print(_summary(plane, namespace, pods))
            if args.keep_running:
                _stay_up(plane, pods)
        except Exception:
            print(replica.log_tail(), file=sys.stderr)
            raise
        finally:
            replica.stop()
    return 0
