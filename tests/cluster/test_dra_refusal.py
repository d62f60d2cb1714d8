"""DynamicResources stand-in, live: a pod with `spec.resourceClaims` is refused with a FailedScheduling
event and a PodScheduled=False condition that say Berth does not support DRA yet; it is never bound."""

from __future__ import annotations

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica
from tests.cluster.helpers import (
    SCHEDULER,
    create,
    events,
    get_pod,
    make_nodes,
    pod_body,
    scheduled_condition,
    wait_berth_sees_all_nodes,
    wait_bound,
    wait_unschedulable,
)

pytestmark = pytest.mark.cluster


def test_pod_with_a_resource_claim_is_refused_clearly(
    control_plane: LocalControlPlane, berth: BerthReplica, namespace: str
) -> None:
    group = make_nodes(control_plane, 1)
    wait_berth_sees_all_nodes(control_plane, berth)
    claims = [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}]
    create(
        control_plane,
        namespace,
        pod_body("trainer", group, resourceClaims=claims),
        pod_body("plain", group),
    )
    message = wait_unschedulable(control_plane, namespace, "trainer")
    # The node count covers every test's nodes; the reason is what matters.
    assert (
        "pod uses ResourceClaim(s) [gpu]; this scheduler does not support dynamic resource "
        "allocation (DRA) yet" in message
    )
    condition = scheduled_condition(get_pod(control_plane, namespace, "trainer"))
    assert condition is not None and condition["reason"] == "Unschedulable"
    failures = events(control_plane, namespace, name="trainer", reason="FailedScheduling")
    assert {event.get("reportingComponent") for event in failures} == {SCHEDULER}
    assert wait_bound(control_plane, namespace, ["plain"])["plain"].startswith(group)
    assert not (get_pod(control_plane, namespace, "trainer").get("spec") or {}).get("nodeName")
