"""The offline simulator binds claims as the live scheduler assumes them: a volume an earlier
simulated pod took is taken for the next, and a claim provisioned for one node keeps the
next pod that shares it on that node."""

from __future__ import annotations

from berth.engine.framework.runtime import build_framework
from berth.engine.model.node import Node
from berth.profiles import default_profile_config
from berth.scheduling.simulator import Simulation
from tests.builders import make_pod
from tests.storage_builders import make_class, make_pv, make_pvc
from tests.unit.engine.plugins.volume_binding_support import DRIVER, HOSTNAME, zoned_node

NODES = [Node.from_dict(zoned_node(name, zone)) for name, zone in (("a1", "a"), ("b1", "b"))]


def _simulation(*objects: object) -> Simulation:
    simulation = Simulation(nodes=NODES, default=build_framework(default_profile_config()))
    for item in objects:
        simulation.cluster.storage.upsert(item.build())  # type: ignore[attr-defined]
    return simulation


def test_local_volumes_are_taken_one_claim_each() -> None:
    simulation = _simulation(
        make_class("local").wait_for_first_consumer(),
        make_pv("only-b1").storage_class("local").node_affinity(HOSTNAME, "b1"),
        make_pvc("first").storage_class("local"),
        make_pvc("second").storage_class("local"),
    )
    first = simulation.place(make_pod("web-0").pvc("first").build())
    second = simulation.place(make_pod("web-1").pvc("second").build())
    assert first.node == "b1"
    assert second.node is None
    assert second.message == (
        "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_a_claim_provisioned_for_a_node_keeps_its_sharers_there() -> None:
    simulation = _simulation(
        make_class("zonal", DRIVER).wait_for_first_consumer(),
        make_pvc("shared").storage_class("zonal").access_modes("ReadWriteMany"),
    )
    first = simulation.place(make_pod("web-0").pvc("shared").build())
    assert first.node is not None
    followers = [simulation.place(make_pod(f"web-{i}").pvc("shared").build()) for i in (1, 2, 3)]
    assert [placement.node for placement in followers] == [first.node] * 3
