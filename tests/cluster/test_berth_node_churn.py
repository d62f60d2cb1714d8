"""A long-lived Berth places pods like kube-scheduler and like a fresh Berth after heavy node churn.

Autoscaled node pools delete nodes and re-create them under the same names with
other images, sizes, labels and taints. Berth keeps incremental per-node indexes
(image holders, taint groups, label columns); none may keep anything from a node
that is gone. The nodes here list container images with sizes chosen so that
ImageLocality decides the placement; after more than thirty rounds of churn the
same pods go to a long-lived Berth, to kube-scheduler and to a Berth replica
started afresh, and all three must pick the same node.
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from berth.controlplane import LocalControlPlane, NodeTemplate
from berth.controlplane.berth_process import BerthReplica, install
from berth.controlplane.objects import node_manifest, unique_name
from berth.controlplane.processes import ManagedProcess
from tests.cluster.helpers import (
    DEFAULT_SCHEDULER,
    GROUP_LABEL,
    create,
    pod_body,
    wait_berth_sees_all_nodes,
    wait_bound,
)

pytestmark = pytest.mark.cluster

ROUNDS = 32
NODES = 6
MIB = 1024 * 1024
BARRIER_OF = "churn-barrier-of"


@pytest.fixture
def replicas(control_plane: LocalControlPlane) -> Iterator[list[BerthReplica]]:
    """Berth replicas this test starts (and stops, whatever happens)."""
    try:
        install(control_plane)
    except subprocess.CalledProcessError as error:
        pytest.fail(f"installing Berth failed: {error.cmd}\n{error.stderr}")
    started: list[BerthReplica] = []
    try:
        yield started
    finally:
        for replica in started:
            replica.stop()


def _node(group: str, index: int, *, images: dict[str, int], **template: Any) -> dict[str, Any]:
    labels = {GROUP_LABEL: group, **template.pop("labels", {})}
    manifest = node_manifest(NodeTemplate(name_prefix=group, labels=labels, **template), index)
    manifest["status"]["images"] = [
        {"names": [name], "sizeBytes": size} for name, size in images.items()
    ]
    return manifest


def _create_nodes(plane: LocalControlPlane, manifests: list[dict[str, Any]]) -> None:
    for manifest in manifests:
        plane.request("POST", "/api/v1/nodes", manifest)


def _delete_nodes(plane: LocalControlPlane, group: str, *, label: str = GROUP_LABEL) -> None:
    listed = plane.request("GET", f"/api/v1/nodes?labelSelector={label}%3D{group}")
    for item in listed["items"]:
        plane.request("DELETE", f"/api/v1/nodes/{item['metadata']['name']}")


def _churn(plane: LocalControlPlane, group: str, images: list[str], rng: random.Random) -> None:
    """Delete every node of the group, re-create a random subset under the same names with
    other images (one size per image and round: nodes listing an image agree on its size),
    capacity, labels and taints."""
    _delete_nodes(plane, group)
    sizes = {image: rng.choice([5, 300, 900, 4000]) * MIB for image in images}
    manifests = []
    for index in sorted(rng.sample(range(NODES), rng.randint(1, NODES))):
        listed = rng.sample(images, rng.randint(0, len(images)))
        cpu = rng.choice(["2", "4", "8"])
        manifests.append(
            _node(
                group,
                index,
                images={image: sizes[image] for image in listed},
                allocatable={"cpu": cpu, "memory": rng.choice(["8Gi", "16Gi"]), "pods": "110"},
                labels={"tier": rng.choice(["gold", "silver"])},
                taints=[{"key": "churn", "effect": "NoSchedule"}] if rng.random() < 0.3 else [],
            )
        )
    rng.shuffle(manifests)  # re-created in another order than their names
    _create_nodes(plane, manifests)


def _image_pod(name: str, group: str, images: list[str], **spec: Any) -> dict[str, Any]:
    body = pod_body(name, group, **spec)
    first = body["spec"]["containers"][0]
    first["image"] = images[0]
    for index, image in enumerate(images[1:], start=1):
        body["spec"]["containers"].append({"name": f"c{index}", "image": image})
    return body


def _after_every_node_event(
    plane: LocalControlPlane, namespace: str, group: str, scheduler: str, name: str
) -> None:
    """Block until `scheduler` has seen every node event so far: a pod that fits only on a
    node created last is bound once its node-watch delivered that node (events arrive in
    order), so every earlier delete and create has been applied by then."""
    barrier = f"{group}-barrier-{name}"
    labels = {"barrier": barrier, BARRIER_OF: group}
    manifest = node_manifest(NodeTemplate(name_prefix=barrier, labels=labels), 0)
    plane.request("POST", "/api/v1/nodes", manifest)
    body = pod_body(name, None, scheduler=scheduler, nodeSelector={"barrier": barrier})
    create(plane, namespace, body)
    wait_bound(plane, namespace, [name])


def _place(
    plane: LocalControlPlane,
    namespace: str,
    group: str,
    scheduler: str,
    tag: str,
    probes: dict[str, tuple[list[str], dict[str, Any]]],
) -> dict[str, str]:
    """Each probe pod, for `scheduler`, one after the other; probe name -> node."""
    placed = {}
    for probe, (images, spec) in probes.items():
        name = f"{probe}-{tag}"
        create(plane, namespace, _image_pod(name, group, images, scheduler=scheduler, **spec))
        placed[probe] = wait_bound(plane, namespace, [name])[name]
    return placed


def test_placements_after_node_churn_match_kube_scheduler_and_a_fresh_berth(
    control_plane: LocalControlPlane,
    kube_scheduler: ManagedProcess,
    replicas: list[BerthReplica],
    namespace: str,
) -> None:
    plane = control_plane
    long_lived = BerthReplica(plane, unique_name("long")).start()
    replicas.append(long_lived)
    long_lived.wait_leading()
    group = unique_name("churn")
    try:
        _churn_and_compare(plane, long_lived, replicas, namespace, group)
    finally:
        # Leave no (tainted) nodes behind: other tests count every node in their messages.
        plane.request("DELETE", f"/api/v1/namespaces/{namespace}/pods?gracePeriodSeconds=0")
        _delete_nodes(plane, group)
        _delete_nodes(plane, group, label=BARRIER_OF)


def _churn_and_compare(
    plane: LocalControlPlane,
    long_lived: BerthReplica,
    replicas: list[BerthReplica],
    namespace: str,
    group: str,
) -> None:
    big, mid, small = (f"churn.example/{group}/{name}:1" for name in ("big", "mid", "small"))
    rng = random.Random(20261126)

    # Every node lists `big` once, and Berth scores it once: its indexes hold these nodes.
    _create_nodes(plane, [_node(group, i, images={big: 1024 * MIB}) for i in range(NODES)])
    wait_berth_sees_all_nodes(plane, long_lived)
    create(plane, namespace, _image_pod("warm-up", group, [big]))
    wait_bound(plane, namespace, ["warm-up"])
    plane.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/warm-up?gracePeriodSeconds=0")

    for _ in range(ROUNDS):
        _churn(plane, group, [big, mid, small], rng)

    # The last round: sizes scaled by the node count, so that an image's share of its size
    # (size x holders / all nodes) decides without reaching ImageLocality's clamp.
    _delete_nodes(plane, group)
    total = len(plane.request("GET", "/api/v1/nodes")["items"]) + NODES + 3  # + barrier nodes
    sizes = {big: 1500 * MIB * total, mid: 600 * MIB * total, small: 250 * MIB * total}
    final = {
        0: {big: sizes[big]},
        1: {mid: sizes[mid]},
        2: {small: sizes[small]},
        3: {small: sizes[small]},
        4: {},
        5: {mid: sizes[mid]},
    }
    manifests = [
        _node(
            group,
            index,
            images=images,
            labels={"tier": "gold" if index in (3, 4) else "silver"},
            taints=[{"key": "churn", "effect": "NoSchedule"}] if index == 4 else [],
        )
        for index, images in final.items()
    ]
    rng.shuffle(manifests)
    _create_nodes(plane, manifests)

    probes: dict[str, tuple[list[str], dict[str, Any]]] = {
        # The node holding `big` (1500 MiB share) beats the ones holding `mid` (600 each).
        "big-and-mid": ([big, mid], {}),
        # Of the two nodes holding `small`, only one is gold (the other gold node is tainted).
        "gold-small": (
            [small],
            {
                "affinity": {
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 100,
                                "preference": {
                                    "matchExpressions": [
                                        {"key": "tier", "operator": "In", "values": ["gold"]}
                                    ]
                                },
                            }
                        ]
                    }
                }
            },
        ),
    }
    _after_every_node_event(plane, namespace, group, "berth", "barrier-ours")
    _after_every_node_event(plane, namespace, group, DEFAULT_SCHEDULER, "barrier-theirs")
    ours = _place(plane, namespace, group, "berth", "ours", probes)
    theirs = _place(plane, namespace, group, DEFAULT_SCHEDULER, "theirs", probes)
    assert ours == theirs

    long_lived.stop()
    fresh = BerthReplica(plane, unique_name("fresh")).start()
    replicas.append(fresh)
    fresh.wait_leading()
    _after_every_node_event(plane, namespace, group, "berth", "barrier-fresh")
    assert _place(plane, namespace, group, "berth", "fresh", probes) == ours
    # And the placements are the ones the images call for.
    assert ours == {"big-and-mid": f"{group}-00000", "gold-small": f"{group}-00003"}
