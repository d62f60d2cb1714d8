"""A StatefulSet-style burst of pods with WaitForFirstConsumer claims, Berth vs kube-scheduler.

    python -m bench.volume_burst                      # 300 pods on 30 nodes, both schedulers
    python -m bench.volume_burst --pods 50 --nodes 9 --schedulers berth

Each scheduler gets a fresh control plane with kube-controller-manager (the PV
controller) and the test volume provisioner. Pod `web-<i>` uses claim `data-web-<i>`
of a WaitForFirstConsumer class the provisioner serves, as a StatefulSet's
`volumeClaimTemplates` make them; all claims exist before the pods. The clock starts
when the first pod is created. Reported per scheduler: the makespan until every pod
is bound, until every claim is bound, and the checks that every pod and every claim
was bound exactly once (no volume bound to two claims, each claim's volume reachable
from its pod's zone, one volume per claim).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.schedulers import make_scheduler
from berth.controlplane import KubeClient, LocalControlPlane, NodeTemplate, create_nodes
from berth.controlplane.objects import wait_for_pods_bound
from berth.controlplane.provisioner import VolumeProvisioner
from tests.cluster.storage import (
    PROVISIONER,
    ZONE_LABEL,
    claim_body,
    class_body,
    csi_node_body,
    pod_volume,
)

logger = logging.getLogger("bench.volume_burst")

NAMESPACE = "burst"
RESULTS = Path(__file__).resolve().parent / "results"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"


def get_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pods", type=int, default=300)
    parser.add_argument("--nodes", type=int, default=30)
    parser.add_argument(
        "--schedulers",
        nargs="*",
        default=["berth", "kube-scheduler"],
        choices=["berth", "kube-scheduler"],
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "volume_burst.json")
    return parser


def _pod(name: str, scheduler: str, claim: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {
            "schedulerName": scheduler,
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {"name": "c", "image": PAUSE_IMAGE, "resources": {"requests": {"cpu": "100m"}}}
            ],
            "volumes": [pod_volume(claim, name="data")],
        },
    }


async def _wait_claims_bound(client: KubeClient, count: int, timeout: float) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    while True:
        claims, _ = await client.list(f"/api/v1/namespaces/{NAMESPACE}/persistentvolumeclaims")
        bound = {
            claim["metadata"]["name"]: claim["spec"].get("volumeName", "")
            for claim in claims
            if (claim.get("status") or {}).get("phase") == "Bound"
        }
        if len(bound) == count:
            return bound
        if time.monotonic() > deadline:
            raise TimeoutError(f"{count - len(bound)} of {count} claims still unbound")
        await asyncio.sleep(0.5)


async def _check(
    client: KubeClient, placements: dict[str, str], volumes: dict[str, str]
) -> list[str]:
    """What went wrong, if anything: double bindings, volumes out of their pod's reach."""
    problems = []
    by_volume: dict[str, list[str]] = {}
    for claim, volume in volumes.items():
        by_volume.setdefault(volume, []).append(claim)
    problems += [f"volume {v} bound to {c}" for v, c in by_volume.items() if len(c) > 1]
    listed, _ = await client.list("/api/v1/persistentvolumes")
    pvs = {pv["metadata"]["name"]: pv for pv in listed}
    listed_nodes, _ = await client.list("/api/v1/nodes")
    nodes = {n["metadata"]["name"]: n for n in listed_nodes}
    for pod, node in placements.items():
        claim = f"data-{pod}"
        volume = pvs.get(volumes.get(claim, ""))
        if volume is None:
            problems.append(f"claim {claim} has no volume")
            continue
        ref = volume["spec"].get("claimRef") or {}
        if ref.get("name") != claim:
            problems.append(f"volume {volume['metadata']['name']} claims {ref.get('name')}")
        zone = nodes[node]["metadata"]["labels"].get(ZONE_LABEL)
        terms = volume["spec"].get("nodeAffinity", {}).get("required", {}).get("nodeSelectorTerms")
        allowed = {
            value
            for term in terms or []
            for expression in term.get("matchExpressions", [])
            if expression["key"] == ZONE_LABEL
            for value in expression.get("values", [])
        }
        if allowed and zone not in allowed:
            problems.append(f"pod {pod} in {zone} uses volume of {sorted(allowed)}")
    return problems


async def _burst(plane: LocalControlPlane, scheduler_name: str, pods: int) -> dict[str, Any]:
    async with plane.client(concurrency=64) as client:
        claims = [claim_body(class_name="burst", name=f"data-web-{i}") for i in range(pods)]
        await asyncio.gather(
            *(
                client.create(f"/api/v1/namespaces/{NAMESPACE}/persistentvolumeclaims", c)
                for c in claims
            )
        )
        began = time.monotonic()
        await asyncio.gather(
            *(
                client.create(
                    f"/api/v1/namespaces/{NAMESPACE}/pods",
                    _pod(f"web-{i}", scheduler_name, f"data-web-{i}"),
                )
                for i in range(pods)
            )
        )
        placements = await wait_for_pods_bound(
            client, NAMESPACE, [f"web-{i}" for i in range(pods)], timeout=max(120.0, pods)
        )
        pods_done = time.monotonic() - began
        volumes = await _wait_claims_bound(client, pods, timeout=max(120.0, pods))
        claims_done = time.monotonic() - began
        problems = await _check(client, placements, volumes)
    per_node: dict[str, int] = {}
    for node in placements.values():
        per_node[node] = per_node.get(node, 0) + 1
    return {
        "pods_bound_seconds": round(pods_done, 2),
        "claims_bound_seconds": round(claims_done, 2),
        "pods": len(placements),
        "claims": len(volumes),
        "distinct_volumes": len(set(volumes.values())),
        "pods_per_node_max": max(per_node.values()),
        "problems": problems,
    }


def run_one(key: str, *, pods: int, nodes: int) -> dict[str, Any]:
    scheduler = make_scheduler(key)
    plane = LocalControlPlane()
    try:
        plane.start()
        plane.start_kube_controller_manager()
        plane.request(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        )
        template = NodeTemplate(name_prefix="burst")

        async def make_nodes() -> list[str]:
            async with plane.client() as client:
                names = await create_nodes(client, template, nodes)
                for name in names:
                    await client.create("/apis/storage.k8s.io/v1/csinodes", csi_node_body(name))
                return names

        asyncio.run(make_nodes())
        plane.request("POST", "/apis/storage.k8s.io/v1/storageclasses", class_body(name="burst"))
        with VolumeProvisioner(plane.admin_kubeconfig, provisioner=PROVISIONER):
            scheduler.start(plane)
            try:
                result = asyncio.run(_burst(plane, scheduler.scheduler_name, pods))
            finally:
                problems = scheduler.log_problems()
                scheduler.stop()
        result["scheduler_log_problems"] = problems[:20]
        return result
    finally:
        plane.stop()


def main(argv: Sequence[str] | None = None) -> int:
    args = get_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    results = {"pods": args.pods, "nodes": args.nodes, "runs": {}}
    for key in args.schedulers:
        logger.info("burst of %d pods on %d nodes with %s", args.pods, args.nodes, key)
        results["runs"][key] = run_one(key, pods=args.pods, nodes=args.nodes)
        logger.info("%s: %s", key, results["runs"][key])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"{'scheduler':16} {'pods bound (s)':>15} {'claims bound (s)':>17} {'problems':>9}")
    for key, run in results["runs"].items():
        print(
            f"{key:16} {run['pods_bound_seconds']:>15} {run['claims_bound_seconds']:>17} "
            f"{len(run['problems']):>9}"
        )
    return 0 if all(not run["problems"] for run in results["runs"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
