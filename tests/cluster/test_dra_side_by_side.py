"""DynamicResources side by side with kube-scheduler v1.37, on one control plane.

A test driver (tests/cluster/dra_driver.py) publishes fake GPUs as ResourceSlices; every
scenario is built twice, once per scheduler, in worlds of identical shape (own node group,
driver and DeviceClass). kube-controller-manager's resourceclaim controller (running in the
fixture) makes claims from templates and keeps reservedFor. Each scenario asserts the same
placements (node indexes), the same allocations (request, node index, device) and byte for
byte the same FailedScheduling messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica
from tests.cluster.dra_driver import RESOURCE, Gpu, World, make_worlds, report_device_ready
from tests.cluster.helpers import (
    get_pod,
    poll,
    scheduled_condition,
    wait_bound,
)

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module", autouse=True)
def serves_dra(control_plane: LocalControlPlane) -> None:
    groups = control_plane.request("GET", "/apis/resource.k8s.io")
    assert "v1" in [version["version"] for version in groups["versions"]]


@pytest.fixture
def worlds(
    control_plane: LocalControlPlane,
    kube_scheduler: object,
    berth: BerthReplica,
) -> Iterator[Callable[[list[list[Gpu]]], tuple[World, World]]]:
    def build(nodes: list[list[Gpu]]) -> tuple[World, World]:
        return make_worlds(control_plane, berth, nodes)

    yield build


def _both(worlds: tuple[World, World], act: Callable[[World], Any]) -> tuple[Any, Any]:
    return act(worlds[0]), act(worlds[1])


def _placement(world: World, pods: list[str]) -> dict[str, int]:
    bound = wait_bound(world.plane, world.namespace, pods)
    return {pod: world.index_of(node) for pod, node in bound.items()}


def _unschedulable(world: World, pod: str) -> str | None:
    condition = scheduled_condition(get_pod(world.plane, world.namespace, pod))
    if condition and condition.get("status") == "False" and condition.get("message"):
        return str(condition["message"])
    return None


def _same_message(worlds: tuple[World, World], ours: str, theirs: str) -> str:
    """Both pods' FailedScheduling message once they agree (a scheduler may first have
    judged the pod before it saw every device; both retry on the DRA events)."""
    last: list[tuple[str | None, str | None]] = []

    def agreed() -> str | None:
        pair = (_unschedulable(worlds[0], ours), _unschedulable(worlds[1], theirs))
        last[:] = [pair]
        return pair[0] if pair[0] is not None and pair[0] == pair[1] else None

    try:
        return poll(agreed, timeout=45, description="the same FailedScheduling message")
    except TimeoutError:
        pytest.fail(
            f"messages differ:\n berth:          {last[0][0]}\n kube-scheduler: {last[0][1]}"
        )


def test_one_claim_for_one_gpu(worlds: Callable[..., tuple[World, World]]) -> None:
    pair = worlds([[], [Gpu("gpu-0")], []])
    for world in pair:
        world.claim("one", world.gpus())
        world.pod("p", gpu={"resourceClaimName": "one"})
    ours, theirs = _both(pair, lambda w: (_placement(w, ["p"]), w.allocation("p")))
    assert ours == theirs == ({"p": 1}, [("gpu", 1, "gpu-0")])
    assert _both(pair, lambda w: w.reserved_for("p")) == (["p"], ["p"])


def test_two_pods_compete_for_the_last_gpu(worlds: Callable[..., tuple[World, World]]) -> None:
    pair = worlds([[Gpu("gpu-0")], []])
    for world in pair:
        world.claim("a", world.gpus())
        world.claim("b", world.gpus())
        world.pod("first", gpu={"resourceClaimName": "a"})
    assert _both(pair, lambda w: _placement(w, ["first"])) == ({"first": 0}, {"first": 0})
    for world in pair:
        world.pod("second", gpu={"resourceClaimName": "b"})
    message = _same_message(pair, "second", "second")
    assert "cannot allocate all claims" in message


def test_a_claim_template_per_pod(worlds: Callable[..., tuple[World, World]]) -> None:
    pair = worlds([[Gpu("gpu-0")], [Gpu("gpu-0")]])
    for world in pair:
        world.template("gpu", world.gpus())
        for name in ("a", "b"):
            world.pod(name, gpu={"resourceClaimTemplateName": "gpu"})
    ours, theirs = _both(pair, lambda w: _placement(w, ["a", "b"]))
    # Identical nodes tie; each pod takes a node's only GPU, so the two use both nodes.
    assert sorted(ours.values()) == sorted(theirs.values()) == [0, 1]
    for world in pair:
        for name in ("a", "b"):
            assert world.allocation(name) == [("gpu", _placement(world, [name])[name], "gpu-0")]


def test_first_available_falls_back_to_a_smaller_gpu(
    worlds: Callable[..., tuple[World, World]],
) -> None:
    pair = worlds([[Gpu("small-0", model="small")], [Gpu("big-0", model="big")]])

    def prioritized(world: World) -> dict[str, Any]:
        return {
            "name": "gpu",
            "firstAvailable": [
                {
                    "name": "big",
                    "deviceClassName": world.device_class,
                    "selectors": [world.model("big")],
                },
                {
                    "name": "small",
                    "deviceClassName": world.device_class,
                    "selectors": [world.model("small")],
                },
            ],
        }

    for world in pair:
        world.claim("first", prioritized(world))
        world.claim("second", prioritized(world))
        world.pod("first", gpu={"resourceClaimName": "first"})
    # Both nodes fit; DynamicResources' score prefers the one giving the first choice.
    first = _both(pair, lambda w: (_placement(w, ["first"]), w.allocation("first")))
    assert first[0] == first[1] == ({"first": 1}, [("gpu/big", 1, "big-0")])
    for world in pair:
        world.pod("second", gpu={"resourceClaimName": "second"})
    second = _both(pair, lambda w: (_placement(w, ["second"]), w.allocation("second")))
    assert second[0] == second[1] == ({"second": 0}, [("gpu/small", 0, "small-0")])


def test_match_attribute_takes_two_gpus_from_one_pcie_root(
    worlds: Callable[..., tuple[World, World]],
) -> None:
    pair = worlds(
        [
            [Gpu("gpu-0", pcie_root="root-a"), Gpu("gpu-1", pcie_root="root-b")],
            [
                Gpu("gpu-0", pcie_root="root-a"),
                Gpu("gpu-1", pcie_root="root-b"),
                Gpu("gpu-2", pcie_root="root-a"),
            ],
        ]
    )
    for world in pair:
        world.claim(
            "pair",
            world.gpus(count=2),
            constraints=[{"matchAttribute": f"{world.driver}/pcieRoot"}],
        )
        world.pod("p", gpu={"resourceClaimName": "pair"})
    ours, theirs = _both(pair, lambda w: (_placement(w, ["p"]), w.allocation("p")))
    assert ours == theirs == ({"p": 1}, [("gpu", 1, "gpu-0"), ("gpu", 1, "gpu-2")])


def test_a_shared_claim_used_by_two_pods(worlds: Callable[..., tuple[World, World]]) -> None:
    pair = worlds([[], [Gpu("gpu-0")], [Gpu("gpu-0")]])
    for world in pair:
        world.claim("shared", world.gpus())
        world.pod("a", gpu={"resourceClaimName": "shared"})
    first = _both(pair, lambda w: _placement(w, ["a"])["a"])
    assert first[0] in (1, 2) and first[1] in (1, 2)
    for world in pair:
        world.pod("b", gpu={"resourceClaimName": "shared"})
    # The second pod goes where the claim's devices are.
    second = _both(pair, lambda w: _placement(w, ["b"])["b"])
    assert second == first
    assert _both(pair, lambda w: w.reserved_for("a")) == (["a", "b"], ["a", "b"])


def test_an_impossible_claim_gets_kube_schedulers_message(
    worlds: Callable[..., tuple[World, World]],
) -> None:
    pair = worlds([[Gpu("gpu-0"), Gpu("gpu-1")], [Gpu("gpu-0")]])
    for world in pair:
        world.claim("three", world.gpus(count=3))
        world.pod("p", gpu={"resourceClaimName": "three"})
    message = _same_message(pair, "p", "p")
    assert "2 cannot allocate all claims" in message


def test_a_missing_device_class_gets_kube_schedulers_message(
    worlds: Callable[..., tuple[World, World]],
) -> None:
    pair = worlds([[Gpu("gpu-0")]])
    for world in pair:
        world.create(
            f"{RESOURCE}/namespaces/{world.namespace}/resourceclaims",
            {
                "metadata": {"name": "nowhere"},
                "spec": {
                    "devices": {
                        "requests": [
                            {"name": "gpu", "exactly": {"deviceClassName": f"{world.group}-none"}}
                        ]
                    }
                },
            },
        )
    # The class name differs per world: compare with the world's own name put back.
    for world in pair:
        world.pod("p", gpu={"resourceClaimName": "nowhere"})

    def normalised(world: World) -> str | None:
        message = _unschedulable(world, "p")
        return None if message is None else message.replace(world.group, "<group>")

    def agreed() -> str | None:
        ours, theirs = normalised(pair[0]), normalised(pair[1])
        return ours if ours is not None and ours == theirs else None

    message = poll(agreed, timeout=45, description="the same FailedScheduling message")
    assert "request gpu: device class <group>-none does not exist" in message


def test_binding_conditions_hold_the_pod_until_the_driver_reports_the_device_ready(
    worlds: Callable[..., tuple[World, World]],
) -> None:
    pair = worlds([[Gpu("gpu-0", binding_conditions=("attached",))]])
    for world in pair:
        world.claim("one", world.gpus())
        world.pod("p", gpu={"resourceClaimName": "one"})
    # PreBind wrote the allocation and now waits for the device: the pod is not bound yet.
    assert _both(pair, lambda w: w.allocation("p")) == ([("gpu", 0, "gpu-0")],) * 2
    unbound = _both(pair, lambda w: get_pod(w.plane, w.namespace, "p")["spec"].get("nodeName"))
    assert unbound == (None, None)
    for world in pair:
        report_device_ready(world, "p", "attached")
    assert _both(pair, lambda w: _placement(w, ["p"])) == ({"p": 0}, {"p": 0})


def test_a_pod_waiting_for_its_claim_is_scheduled_once_the_claim_exists(
    worlds: Callable[..., tuple[World, World]],
) -> None:
    pair = worlds([[], [Gpu("gpu-0")]])
    for world in pair:
        world.pod("p", gpu={"resourceClaimName": "late"})
    # PreEnqueue holds the pod (once a scheduler has seen it); the claim's creation (a
    # registered event) lets it in, long before the unschedulable pool's 5-minute flush would.
    for world in pair:
        world.claim("late", world.gpus())
    ours, theirs = _both(pair, lambda w: (_placement(w, ["p"]), w.allocation("p")))
    assert ours == theirs == ({"p": 1}, [("gpu", 1, "gpu-0")])
