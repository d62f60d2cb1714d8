"""Extended resources backed by DRA side by side with kube-scheduler v1.37, on one control plane.

A DeviceClass serving `<world>.example.com/gpu` (each world has its own name, so each
scheduler's pods use its own driver's devices): a pod asking for one through its
container resources gets a GPU through the claim the scheduler creates for it, owned by
the pod and recorded in its status, allocated the same way by both schedulers; a pod
asking for more than any node has gets the same FailedScheduling message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica
from tests.cluster.dra_driver import RESOURCE, Gpu, World, make_worlds
from tests.cluster.helpers import (
    get_pod,
    pod_body,
    poll,
    scheduled_condition,
    wait_bound,
)

pytestmark = pytest.mark.cluster

ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


def _resource(world: World) -> str:
    return f"{world.group}.example.com/gpu"


def _serve(world: World) -> None:
    """A second class for the world's devices, serving its extended resource name."""
    world.create(
        f"{RESOURCE}/deviceclasses",
        {
            "metadata": {"name": f"{world.group}-ext"},
            "spec": {
                "selectors": [{"cel": {"expression": f'device.driver == "{world.driver}"'}}],
                "extendedResourceName": _resource(world),
            },
        },
    )


def _pod(world: World, name: str, resource: str, count: int) -> None:
    body = pod_body(name, world.group, scheduler=world.scheduler)
    resources = body["spec"]["containers"][0]["resources"]
    resources["requests"][resource] = str(count)
    resources["limits"] = {
        resource: str(count)
    }  # extended resources are not overcommitted; "cpu" sorts first
    world.create(f"/api/v1/namespaces/{world.namespace}/pods", body)


@pytest.fixture
def worlds(
    control_plane: LocalControlPlane,
    kube_scheduler: object,
    berth: BerthReplica,
) -> Iterator[Callable[[list[list[Gpu]]], tuple[World, World]]]:
    def build(nodes: list[list[Gpu]]) -> tuple[World, World]:
        return make_worlds(control_plane, berth, nodes, prepare=_serve)

    yield build


def _extended_claim(world: World, pod: str) -> dict[str, Any]:
    """The claim the scheduler made for the pod's extended resources, once allocated."""

    def probe() -> dict[str, Any] | None:
        claims = world.plane.request(
            "GET", f"{RESOURCE}/namespaces/{world.namespace}/resourceclaims"
        )["items"]
        for claim in claims:
            owners = claim["metadata"].get("ownerReferences") or []
            annotations = claim["metadata"].get("annotations") or {}
            ours = annotations.get(ANNOTATION) == "true" and [o["name"] for o in owners] == [pod]
            if ours and (claim.get("status") or {}).get("allocation"):
                return dict(claim)
        return None

    return poll(probe, timeout=30, description=f"the extended resource claim of {pod}")


def _what_it_holds(world: World, pod: str) -> dict[str, Any]:
    claim = _extended_claim(world, pod)
    status = get_pod(world.plane, world.namespace, pod).get("status") or {}
    recorded = status.get("extendedResourceClaimStatus") or {}
    return {
        "generateName": claim["metadata"]["generateName"],
        "owner": [
            (o["kind"], o["name"], o.get("controller"))
            for o in claim["metadata"]["ownerReferences"]
        ],
        "requests": [
            (
                r["name"],
                r["exactly"]["deviceClassName"].replace(world.group, "<g>"),
                r["exactly"]["count"],
            )
            for r in claim["spec"]["devices"]["requests"]
        ],
        "devices": sorted(
            (r["request"], world.index_of(r["pool"]), r["device"])
            for r in claim["status"]["allocation"]["devices"]["results"]
        ),
        "reservedFor": [entry["name"] for entry in claim["status"].get("reservedFor") or ()],
        "finalizers": claim["metadata"].get("finalizers"),
        "recorded": (
            recorded.get("resourceClaimName") == claim["metadata"]["name"],
            [
                {**mapping, "resourceName": mapping["resourceName"].replace(world.group, "<g>")}
                for mapping in recorded.get("requestMappings") or ()
            ],
        ),
    }


def _normalised_message(world: World, pod: str) -> str | None:
    condition = scheduled_condition(get_pod(world.plane, world.namespace, pod))
    if condition and condition.get("status") == "False" and condition.get("message"):
        return str(condition["message"]).replace(world.group, "<g>")
    return None


def test_an_extended_resource_gets_its_gpu_through_the_claim_the_scheduler_makes(
    worlds: Callable[..., tuple[World, World]],
) -> None:
    pair = worlds([[], [Gpu("gpu-0")], []])
    for world in pair:
        _pod(world, "p", _resource(world), 1)
    placed = [wait_bound(world.plane, world.namespace, ["p"])["p"] for world in pair]
    assert [world.index_of(node) for world, node in zip(pair, placed, strict=True)] == [1, 1]
    ours, theirs = (_what_it_holds(world, "p") for world in pair)
    assert ours == theirs
    assert ours["devices"] == [("container-0-request-1", 1, "gpu-0")]
    assert ours["requests"] == [("container-0-request-1", "<g>-ext", 1)]
    assert ours["owner"] == [("Pod", "p", True)]
    assert ours["reservedFor"] == ["p"]
    assert ours["recorded"] == (
        True,
        [
            {
                "containerName": "c",
                "resourceName": "<g>.example.com/gpu",
                "requestName": "container-0-request-1",
            }
        ],
    )


def test_the_implicit_name_of_a_class_gets_its_devices_too(
    worlds: Callable[..., tuple[World, World]],
) -> None:
    pair = worlds([[Gpu("gpu-0")], [Gpu("gpu-0"), Gpu("gpu-1")]])
    for world in pair:
        _pod(world, "p", f"deviceclass.resource.kubernetes.io/{world.device_class}", 2)
    placed = [wait_bound(world.plane, world.namespace, ["p"])["p"] for world in pair]
    assert [world.index_of(node) for world, node in zip(pair, placed, strict=True)] == [1, 1]
    ours, theirs = (_what_it_holds(world, "p") for world in pair)
    assert ours == theirs
    assert ours["devices"] == [
        ("container-0-request-1", 1, "gpu-0"),
        ("container-0-request-1", 1, "gpu-1"),
    ]


def test_more_than_any_node_has_gets_kube_schedulers_message(
    worlds: Callable[..., tuple[World, World]],
) -> None:
    pair = worlds([[Gpu("gpu-0")], [Gpu("gpu-0")]])
    for world in pair:
        _pod(world, "p", _resource(world), 2)
    last: list[tuple[str | None, str | None]] = []

    def agreed() -> str | None:
        pair_messages = (_normalised_message(pair[0], "p"), _normalised_message(pair[1], "p"))
        last[:] = [pair_messages]
        ours = pair_messages[0]
        return ours if ours is not None and ours == pair_messages[1] else None

    try:
        message = poll(agreed, timeout=45, description="the same FailedScheduling message")
    except TimeoutError:
        pytest.fail(
            f"messages differ:\n berth:          {last[0][0]}\n kube-scheduler: {last[0][1]}"
        )
    assert "2 cannot allocate all claims" in message
