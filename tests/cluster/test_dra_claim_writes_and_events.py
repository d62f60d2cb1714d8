"""DynamicResources' own API writes and events, side by side with kube-scheduler v1.37.

The worlds of tests/cluster/dra_driver.py again (one per scheduler, identical shape):

* while PreBind waits for a device's binding conditions, both schedulers post a Normal
  `BindingConditionsPending` Event about the pod, reported by the pod's schedulerName;
* a claim allocated on a node the pod cannot use, and reserved for nobody, is freed by
  PostFilter, and the next attempt puts the pod where the devices are free;
* when the API server refuses that deallocation (here: a ValidatingAdmissionPolicy), the
  refusal is PostFilter's error and ends the FailedScheduling message, byte for byte as
  kube-scheduler's: the write happened within the cycle, not after it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from berth.controlplane import LocalControlPlane
from berth.kube.api import ApiError
from tests.cluster.dra_driver import RESOURCE, Gpu, World, report_device_ready
from tests.cluster.helpers import (
    events,
    get_pod,
    patch,
    pod_body,
    poll,
    scheduled_condition,
    unique_name,
    wait_bound,
)

pytestmark = pytest.mark.cluster

ADMISSION = "/apis/admissionregistration.k8s.io/v1"


def _claim_path(world: World, name: str) -> str:
    return f"{RESOURCE}/namespaces/{world.namespace}/resourceclaims/{name}"


def test_pending_binding_conditions_post_the_same_event_as_kube_scheduler(
    worlds: Callable[..., tuple[World, World]],
) -> None:
    pair = worlds([[Gpu("gpu-0", binding_conditions=("attached",))]])
    for world in pair:
        world.claim("one", world.gpus())
        world.pod("p", gpu={"resourceClaimName": "one"})

    def pending_event(world: World) -> dict[str, Any] | None:
        found = events(world.plane, world.namespace, name="p", reason="BindingConditionsPending")
        return found[0] if found else None

    seen = []
    for world in pair:
        event = poll(
            lambda world=world: pending_event(world),  # type: ignore[misc]
            timeout=45,
            description=f"{world.scheduler}'s BindingConditionsPending event",
        )
        seen.append(
            (
                event["type"],
                event["action"],
                event["message"].replace(world.group, "<group>"),
                event["reportingComponent"] == world.scheduler,
                event["involvedObject"]["uid"]
                == get_pod(world.plane, world.namespace, "p")["metadata"]["uid"],
            )
        )
    ours, theirs = seen
    assert (
        ours
        == theirs
        == (
            "Normal",
            "Scheduling",
            "waiting for binding conditions for device on node <group>-n-00000",
            True,
            True,
        )
    )
    for world in pair:  # let both pods bind, as the driver would
        report_device_ready(world, "p", "attached")
    for world in pair:
        wait_bound(world.plane, world.namespace, ["p"])


def _allocated_elsewhere(world: World) -> None:
    """Claim `one` allocated on node 0's GPU, reserved for nobody (as after a consumer that
    left without the claim being freed), and pod `p` that can only run on node 1."""
    world.claim("one", world.gpus())
    node = world.node(0)
    result = {"request": "gpu", "driver": world.driver, "pool": node, "device": "gpu-0"}
    selector = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    allocation = {
        "devices": {"results": [result]},
        "nodeSelector": {"nodeSelectorTerms": [selector]},
    }
    patch(
        world.plane, _claim_path(world, "one") + "/status", {"status": {"allocation": allocation}}
    )
    only_node_1 = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": [world.node(1)]}
                        ]
                    }
                ]
            }
        }
    }
    body = pod_body(
        "p",
        world.group,
        scheduler=world.scheduler,
        resourceClaims=[{"name": "gpu", "resourceClaimName": "one"}],
        affinity=only_node_1,
    )
    world.create(f"/api/v1/namespaces/{world.namespace}/pods", body)


def test_post_filter_frees_an_unused_claim_and_the_next_attempt_uses_it(
    worlds: Callable[..., tuple[World, World]],
) -> None:
    pair = worlds([[Gpu("gpu-0")], [Gpu("gpu-0")]])
    for world in pair:
        _allocated_elsewhere(world)
    placed = [
        (
            {
                pod: world.index_of(node)
                for pod, node in wait_bound(world.plane, world.namespace, ["p"]).items()
            },
            world.allocation("p"),
        )
        for world in pair
    ]
    assert placed[0] == placed[1] == ({"p": 1}, [("gpu", 1, "gpu-0")])


def _keep_allocations(plane: LocalControlPlane, namespaces: list[str]) -> Callable[[], None]:
    """A ValidatingAdmissionPolicy refusing, in `namespaces`, any status write that removes a
    claim's allocation; returns its removal."""
    name = unique_name("keep-claims")
    plane.request(
        "POST",
        f"{ADMISSION}/validatingadmissionpolicies",
        {
            "metadata": {"name": name},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "resourceRules": [
                        {
                            "apiGroups": ["resource.k8s.io"],
                            "apiVersions": ["*"],
                            "operations": ["UPDATE"],
                            "resources": ["resourceclaims/status"],
                        }
                    ]
                },
                "validations": [
                    {
                        "expression": "has(object.status) && has(object.status.allocation)",
                        "message": "claims in this namespace stay allocated",
                    }
                ],
            },
        },
    )
    plane.request(
        "POST",
        f"{ADMISSION}/validatingadmissionpolicybindings",
        {
            "metadata": {"name": name},
            "spec": {
                "policyName": name,
                "validationActions": ["Deny"],
                "matchResources": {
                    "namespaceSelector": {
                        "matchExpressions": [
                            {
                                "key": "kubernetes.io/metadata.name",
                                "operator": "In",
                                "values": namespaces,
                            }
                        ]
                    }
                },
            },
        },
    )

    def remove() -> None:
        plane.request("DELETE", f"{ADMISSION}/validatingadmissionpolicybindings/{name}")
        plane.request("DELETE", f"{ADMISSION}/validatingadmissionpolicies/{name}")

    return remove


def _refused(world: World, claim: str) -> bool | None:
    """Whether a dry-run deallocation of `claim` is refused (the policy is in force)."""
    body = {"status": {"allocation": None}}
    try:
        patch(world.plane, _claim_path(world, claim) + "/status?dryRun=All", body)
    except ApiError as refusal:
        return True if "stay allocated" in refusal.message else None
    return None


def _unschedulable(world: World) -> str | None:
    condition = scheduled_condition(get_pod(world.plane, world.namespace, "p"))
    if condition and condition.get("status") == "False" and condition.get("message"):
        return str(condition["message"])
    return None


def test_a_refused_deallocation_ends_the_message_as_kube_schedulers_does(
    worlds: Callable[..., tuple[World, World]],
) -> None:
    pair = worlds([[Gpu("gpu-0")], [Gpu("gpu-0")]])
    for world in pair:
        world.claim("probe", world.gpus())
        result = {
            "request": "gpu",
            "driver": world.driver,
            "pool": world.node(0),
            "device": "gpu-0",
        }
        patch(
            world.plane,
            _claim_path(world, "probe") + "/status",
            {"status": {"allocation": {"devices": {"results": [result]}}}},
        )
    remove = _keep_allocations(pair[0].plane, [world.namespace for world in pair])
    try:
        for world in pair:
            poll(lambda world=world: _refused(world, "probe"), timeout=30, description="the policy")  # type: ignore[misc]
            _allocated_elsewhere(world)

        def agreed() -> str | None:
            ours, theirs = _unschedulable(pair[0]), _unschedulable(pair[1])
            return ours if ours is not None and ours == theirs else None

        try:
            message = poll(agreed, timeout=45, description="the same FailedScheduling message")
        except TimeoutError:
            pytest.fail(
                f"messages differ:\n berth:          {_unschedulable(pair[0])}\n"
                f" kube-scheduler: {_unschedulable(pair[1])}"
            )
        assert message.endswith("denied request: claims in this namespace stay allocated")
        assert "deallocation of ResourceClaim completed" not in message
        # Nothing was freed: the devices stay where they were.
        for world in pair:
            assert world.allocation("p") == [("gpu", 0, "gpu-0")]
    finally:
        remove()
