"""A test "DRA driver" for side-by-side tests: fake GPUs published as ResourceSlices.

Each scheduler gets its own copy of a scenario (a "world"): its own node group, its own
driver name and DeviceClass, the same devices on the same node indexes. The pods of a world
select its group and name its scheduler, so the two schedulers never compete for a device,
while both see every node of the cluster (the "0/N nodes" counts agree).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica
from tests.cluster.helpers import (
    DEFAULT_SCHEDULER,
    SCHEDULER,
    create_namespace,
    get_pod,
    make_nodes,
    patch,
    pod_body,
    poll,
    unique_name,
    wait_berth_sees_all_nodes,
)

__all__ = ["RESOURCE", "Gpu", "World", "make_world", "make_worlds", "report_device_ready"]

RESOURCE = "/apis/resource.k8s.io/v1"


@dataclass(frozen=True)
class Gpu:
    name: str
    model: str = "big"
    pcie_root: str = "root-a"
    binding_conditions: tuple[str, ...] = ()  # to be reported true before the pod may bind

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "name": self.name,
            "attributes": {
                "model": {"string": self.model},
                "pcieRoot": {"string": self.pcie_root},
            },
        }
        if self.binding_conditions:
            body["bindingConditions"] = list(self.binding_conditions)
            body["bindingFailureConditions"] = ["failed"]
        return body


@dataclass(frozen=True)
class World:
    plane: LocalControlPlane
    namespace: str
    scheduler: str
    group: str
    driver: str
    device_class: str

    def node(self, index: int) -> str:
        return f"{self.group}-n-{index:05d}"

    def index_of(self, node: str) -> int:
        return int(node.rsplit("-", 1)[1])

    def create(self, path: str, body: dict[str, Any]) -> None:
        self.plane.request("POST", path, body)

    def claim(self, name: str, *requests: dict[str, Any], **devices: Any) -> None:
        self.create(
            f"{RESOURCE}/namespaces/{self.namespace}/resourceclaims",
            {"metadata": {"name": name}, "spec": self.claim_spec(*requests, **devices)},
        )

    def template(self, name: str, *requests: dict[str, Any]) -> None:
        self.create(
            f"{RESOURCE}/namespaces/{self.namespace}/resourceclaimtemplates",
            {"metadata": {"name": name}, "spec": {"spec": self.claim_spec(*requests)}},
        )

    def claim_spec(self, *requests: dict[str, Any], **devices: Any) -> dict[str, Any]:
        return {"devices": {"requests": list(requests), **devices}}

    def gpus(self, request: str = "gpu", count: int = 1, **fields: Any) -> dict[str, Any]:
        """An `exactly` request for `count` devices of this world's class."""
        return {
            "name": request,
            "exactly": {"deviceClassName": self.device_class, "count": count, **fields},
        }

    def model(self, model: str) -> dict[str, Any]:
        return {"cel": {"expression": f'device.attributes["{self.driver}"].model == "{model}"'}}

    def pod(self, name: str, **claims: dict[str, str]) -> None:
        """A pod using claims: entry name -> {"resourceClaimName": ...} or a template."""
        entries = [{"name": entry, **source} for entry, source in claims.items()]
        self.create(
            f"/api/v1/namespaces/{self.namespace}/pods",
            pod_body(name, self.group, scheduler=self.scheduler, resourceClaims=entries),
        )

    def allocation(self, pod: str, entry: str = "gpu") -> list[tuple[str, int, str]]:
        """(request, node index, device) of the claim the pod's entry uses, once allocated."""
        claim = self.claim_name(pod, entry)

        def probe() -> list[tuple[str, int, str]] | None:
            raw = self.plane.request(
                "GET", f"{RESOURCE}/namespaces/{self.namespace}/resourceclaims/{claim}"
            )
            allocation = (raw.get("status") or {}).get("allocation")
            if not allocation:
                return None
            return sorted(
                (result["request"], self.index_of(result["pool"]), result["device"])
                for result in allocation["devices"]["results"]
            )

        return poll(probe, timeout=30, description=f"claim {claim} allocated")

    def reserved_for(self, pod: str, entry: str = "gpu") -> list[str]:
        claim = self.claim_name(pod, entry)
        raw = self.plane.request(
            "GET", f"{RESOURCE}/namespaces/{self.namespace}/resourceclaims/{claim}"
        )
        return sorted(item["name"] for item in (raw.get("status") or {}).get("reservedFor") or ())

    def claim_name(self, pod: str, entry: str) -> str:
        spec_entry = next(
            item
            for item in get_pod(self.plane, self.namespace, pod)["spec"]["resourceClaims"]
            if item["name"] == entry
        )
        if "resourceClaimName" in spec_entry:
            return str(spec_entry["resourceClaimName"])

        def generated() -> str | None:
            statuses = (get_pod(self.plane, self.namespace, pod).get("status") or {}).get(
                "resourceClaimStatuses"
            ) or []
            return next(
                (item.get("resourceClaimName") for item in statuses if item["name"] == entry),
                None,
            )

        return poll(generated, timeout=30, description=f"the claim generated for {pod}")


def make_world(plane: LocalControlPlane, scheduler: str, nodes: list[list[Gpu]]) -> World:
    """Nodes `<group>-n-<i>` with the GPUs listed for node i, one slice per node with GPUs,
    and a namespace of its own for the claims and pods."""
    group = unique_name("dra")
    world = World(
        plane=plane,
        namespace=create_namespace(plane, group),
        scheduler=scheduler,
        group=group,
        driver=f"{group}.gpu.test",
        device_class=f"{group}-gpu",
    )
    make_nodes(plane, len(nodes), group=group, kind="n")
    world.create(
        f"{RESOURCE}/deviceclasses",
        {
            "metadata": {"name": world.device_class},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{world.driver}"'}}]},
        },
    )
    for index, gpus in enumerate(nodes):
        if not gpus:
            continue
        node = world.node(index)
        world.create(
            f"{RESOURCE}/resourceslices",
            {
                "metadata": {"name": f"{node}-gpus"},
                "spec": {
                    "driver": world.driver,
                    "nodeName": node,
                    "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                    "devices": [gpu.body() for gpu in gpus],
                },
            },
        )
    return world


def make_worlds(
    plane: LocalControlPlane,
    berth: BerthReplica,
    nodes: list[list[Gpu]],
    *,
    prepare: Callable[[World], None] = lambda world: None,  # more objects for each world
) -> tuple[World, World]:
    """Berth's world and kube-scheduler's, once Berth sees every node."""
    pair = (make_world(plane, SCHEDULER, nodes), make_world(plane, DEFAULT_SCHEDULER, nodes))
    for world in pair:
        prepare(world)
    wait_berth_sees_all_nodes(plane, berth)
    return pair


def report_device_ready(world: World, pod: str, condition: str, entry: str = "gpu") -> None:
    """As a driver does once a device is prepared: a true condition in the claim's status."""
    claim = world.claim_name(pod, entry)
    path = f"{RESOURCE}/namespaces/{world.namespace}/resourceclaims/{claim}"
    results = world.plane.request("GET", path)["status"]["allocation"]["devices"]["results"]
    devices = [
        {
            "driver": result["driver"],
            "pool": result["pool"],
            "device": result["device"],
            "conditions": [
                {
                    "type": condition,
                    "status": "True",
                    "reason": "Prepared",
                    "message": "attached by the test driver",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        }
        for result in results
    ]
    patch(world.plane, f"{path}/status", {"status": {"devices": devices}})
