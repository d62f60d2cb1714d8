"""`berth demo --keep-running`: the demo cluster stays up for questions, then stops on SIGTERM.

The README's walk-through on the demo cluster depends on it: the demo says which kubeconfig and
which pending pod to ask about, `berth explain` answers from the live cluster, and the demo then
cleans up after itself. Its StatefulSet-like pods show volume binding end to end: each
WaitForFirstConsumer claim is provisioned and bound (kube-controller-manager's PV controller, the
stand-in provisioner) in the zone of the node Berth chose for its pod.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from berth.controlplane import KubeClient

pytestmark = pytest.mark.cluster

RUNS_LAST = True
BERTH = str(Path(sys.executable).with_name("berth"))
ZONE_LABEL = "topology.kubernetes.io/zone"


async def _read(kubeconfig: Path, *paths: str) -> list[list[dict[str, Any]]]:
    async with KubeClient.open(kubeconfig) as client:
        return [(await client.list(path))[0] for path in paths]


def _volume_zone(volume: dict[str, Any]) -> str:
    """The zone a volume's required node affinity allows (the provisioner writes exactly one)."""
    (term,) = volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    (expression,) = [e for e in term["matchExpressions"] if e["key"] == ZONE_LABEL]
    (zone,) = expression["values"]
    return str(zone)


def _assert_stateful_pods_sit_with_their_volumes(kubeconfig: Path) -> None:
    pods, claims, volumes, nodes = asyncio.run(
        _read(
            kubeconfig,
            "/api/v1/namespaces/demo/pods",
            "/api/v1/namespaces/demo/persistentvolumeclaims",
            "/api/v1/persistentvolumes",
            "/api/v1/nodes",
        )
    )
    zone_of_node = {n["metadata"]["name"]: n["metadata"]["labels"][ZONE_LABEL] for n in nodes}
    zone_of_volume = {v["metadata"]["name"]: _volume_zone(v) for v in volumes}
    claim_volume = {
        c["metadata"]["name"]: c["spec"].get("volumeName")
        for c in claims
        if c["status"].get("phase") == "Bound"
    }
    stateful = [p for p in pods if p["metadata"].get("labels", {}).get("app") == "db"]
    assert len(stateful) == len(claims) == 6
    assert len(claim_volume) == 6, f"claims not bound: {[c['metadata']['name'] for c in claims]}"
    assert len(set(claim_volume.values())) == 6  # one volume per claim
    zones: Counter[str] = Counter()
    for pod in stateful:
        (volume,) = pod["spec"]["volumes"]
        claim = volume["persistentVolumeClaim"]["claimName"]
        node_zone = zone_of_node[pod["spec"]["nodeName"]]
        assert zone_of_volume[claim_volume[claim]] == node_zone, pod["metadata"]["name"]
        zones[node_zone] += 1
    # maxSkew 1 over three zones: two pods, and so two volumes, per zone.
    assert zones == {"zone-a": 2, "zone-b": 2, "zone-c": 2}


def test_the_demo_cluster_answers_berth_explain_until_it_is_stopped() -> None:
    demo = subprocess.Popen(
        [BERTH, "demo", "--nodes", "12", "--pods", "36", "--keep-running"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert demo.stdout is not None
    kubeconfig = command = ""
    output: list[str] = []
    deadline = time.monotonic() + 240
    try:
        while not command:
            line = demo.stdout.readline()
            assert line, f"the demo ended early (exit {demo.poll()})"
            assert time.monotonic() < deadline, "no hint from the demo within 240 s"
            output.append(line)
            if "export KUBECONFIG=" in line:
                kubeconfig = line.split("=", 1)[1].strip()
            elif line.strip().startswith("berth explain "):
                command = line.strip()
        assert "Claims of class demo-zonal (WaitForFirstConsumer) bound: 6/6\n" in output
        _assert_stateful_pods_sit_with_their_volumes(Path(kubeconfig))
        explained = subprocess.run(
            [BERTH, *command.split()[1:]],
            env={**os.environ, "KUBECONFIG": kubeconfig},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert explained.returncode == 0, explained.stderr
        target = command.split()[-1]
        assert explained.stdout.startswith(f"Pod {target} (profile berth)")
    finally:
        demo.send_signal(signal.SIGTERM)
        remaining, _ = demo.communicate(timeout=120)
    assert demo.returncode == 0, remaining
    assert "Stopping ..." in remaining
    assert not Path(kubeconfig).exists()  # the control plane's run directory is gone
