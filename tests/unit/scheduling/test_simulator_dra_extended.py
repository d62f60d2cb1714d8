"""`berth simulate` with extended resources backed by DRA: the default profile's real
DynamicResources allocates the devices through the claim kube-scheduler would create, and
the simulation creates that claim (named from the pod) and reports its devices."""

from __future__ import annotations

from berth.engine.dra.classes import DeviceClass
from berth.engine.framework.runtime import build_framework
from berth.profiles import default_profile_config
from berth.scheduling.simulated_claims import extended_claim_name
from berth.scheduling.simulator import simulate
from tests.builders import make_node, make_pod
from tests.unit.engine.dra.dra_builders import DRIVER, device, make_slice


def _class() -> DeviceClass:
    return DeviceClass.from_dict(
        {
            "metadata": {"name": "gpu"},
            "spec": {
                "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
                "extendedResourceName": "example.com/gpu",
            },
        }
    )


def test_a_pod_asking_for_a_served_extended_resource_gets_devices_through_its_claim() -> None:
    nodes = [make_node(name).build() for name in ("n1", "n2")]
    dra = [_class(), make_slice("n2-gpus", [device("gpu-0")], node="n2")]
    pods = [
        make_pod(name).uid(f"{name}-uid").req(cpu="100m", example_com__gpu=1).build()
        for name in ("a", "b")
    ]
    first, second = simulate(
        nodes=nodes, pods=pods, dra=dra, default=build_framework(default_profile_config())
    ).placements
    assert first.node == "n2"
    [claim] = first.claims
    assert claim.pod_claim == ""
    assert claim.claim == extended_claim_name(first.pod)
    assert claim.claim.startswith("a-extended-resources-")
    assert [(d.pool, d.device, d.request) for d in claim.devices] == [
        ("n2", "gpu-0", "container-0-request-1")
    ]
    # The only device is taken: the next pod cannot get one anywhere.
    assert second.node is None
    assert "cannot allocate all claims" in second.message
