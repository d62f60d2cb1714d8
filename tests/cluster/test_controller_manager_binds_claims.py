"""kube-controller-manager in the local control plane binds claims, and namespaces go away.

Proves the storage scaffolding (storage.py, the `volume_provisioner`
fixture) with kube-scheduler alone, so later side-by-side volume tests can
trust it: a WaitForFirstConsumer claim is provisioned where kube-scheduler put
its pod and bound by the PV controller; a pre-bound claim of an Immediate
class is bound by the PV controller before any pod uses it.
"""

from __future__ import annotations

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.processes import ManagedProcess
from berth.controlplane.provisioner import VolumeProvisioner
from tests.cluster.helpers import (
    DEFAULT_SCHEDULER,
    create,
    make_nodes,
    pod_body,
    poll,
    unique_name,
    wait_bound,
)
from tests.cluster.storage import (
    PROVISIONER,
    ZONE_LABEL,
    claim_body,
    class_body,
    create_storage,
    csi_node_body,
    get_claim,
    get_volume,
    local_volume_body,
    pod_volume,
    wait_claims_bound,
)

pytestmark = pytest.mark.cluster

# make_nodes gives node i the zone ("zone-a", "zone-b", "zone-c")[i % 3].
ZONES = ("zone-a", "zone-b", "zone-c")


def node_names(group: str, count: int) -> list[str]:
    return [f"{group}-n-{index:05d}" for index in range(count)]


def test_wait_for_first_consumer_claim_is_provisioned_in_an_allowed_zone_and_bound(
    control_plane: LocalControlPlane,
    kube_scheduler: ManagedProcess,
    volume_provisioner: VolumeProvisioner,
    namespace: str,
) -> None:
    group = make_nodes(control_plane, 3)
    nodes = node_names(group, 3)
    create_storage(control_plane, *(csi_node_body(node) for node in nodes))
    (storage_class,) = create_storage(
        control_plane, class_body(allowed_topologies={ZONE_LABEL: ["zone-b"]})
    )
    claim = claim_body(class_name=storage_class, size="2Gi")
    create_storage(control_plane, claim, namespace=namespace)
    claim_name = claim["metadata"]["name"]
    pod = pod_body("consumer", group, scheduler=DEFAULT_SCHEDULER, volumes=[pod_volume(claim_name)])
    create(control_plane, namespace, pod)

    # kube-scheduler binds the pod only after its PreBind saw the claim bound.
    placed = wait_bound(control_plane, namespace, ["consumer"])["consumer"]
    assert placed == nodes[ZONES.index("zone-b")]
    volume_name = wait_claims_bound(control_plane, namespace, [claim_name])[claim_name]
    bound_claim = get_claim(control_plane, namespace, claim_name)
    volume = get_volume(control_plane, volume_name)

    assert bound_claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == placed
    assert volume_name == f"pvc-{bound_claim['metadata']['uid']}"
    assert volume["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == PROVISIONER
    spec = volume["spec"]
    assert spec["claimRef"]["namespace"] == namespace
    assert spec["claimRef"]["name"] == claim_name
    assert spec["claimRef"]["uid"] == bound_claim["metadata"]["uid"]
    assert spec["capacity"] == {"storage": "2Gi"}
    assert spec["accessModes"] == ["ReadWriteOnce"]
    assert spec["persistentVolumeReclaimPolicy"] == "Delete"
    assert spec["storageClassName"] == storage_class
    assert spec["csi"]["driver"] == PROVISIONER
    assert spec["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": ZONE_LABEL, "operator": "In", "values": ["zone-b"]}]}
    ]
    assert volume["status"]["phase"] == "Bound"
    assert volume_provisioner.failures == {}


def test_pre_bound_immediate_claim_is_bound_and_its_pod_follows_the_volume(
    control_plane: LocalControlPlane, kube_scheduler: ManagedProcess, namespace: str
) -> None:
    group = make_nodes(control_plane, 3)
    nodes = node_names(group, 3)
    (storage_class,) = create_storage(
        control_plane,
        class_body(provisioner="kubernetes.io/no-provisioner", binding_mode="Immediate"),
    )
    (volume_name,) = create_storage(
        control_plane, local_volume_body(nodes[2], class_name=storage_class)
    )
    claim = claim_body(class_name=storage_class, volume_name=volume_name)
    create_storage(control_plane, claim, namespace=namespace)
    claim_name = claim["metadata"]["name"]

    # No pod uses the claim yet: only the PV controller can have bound it.
    assert wait_claims_bound(control_plane, namespace, [claim_name]) == {claim_name: volume_name}
    claim_ref = get_volume(control_plane, volume_name)["spec"]["claimRef"]
    assert (claim_ref["namespace"], claim_ref["name"]) == (namespace, claim_name)

    pod = pod_body("user", group, scheduler=DEFAULT_SCHEDULER, volumes=[pod_volume(claim_name)])
    create(control_plane, namespace, pod)
    assert wait_bound(control_plane, namespace, ["user"]) == {"user": nodes[2]}


def test_a_deleted_namespace_finishes_deleting(control_plane: LocalControlPlane) -> None:
    name = unique_name("doomed")
    control_plane.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    pending = pod_body("never-scheduled", None, scheduler=unique_name("nobody"))
    create(control_plane, name, pending)
    control_plane.request(
        "POST", f"/api/v1/namespaces/{name}/configmaps", {"metadata": {"name": "settings"}}
    )
    control_plane.request("DELETE", f"/api/v1/namespaces/{name}")

    def gone() -> bool:
        answer = control_plane.request("GET", f"/api/v1/namespaces/{name}", ok_statuses=(404,))
        return answer.get("code") == 404

    poll(gone, timeout=60, description=f"namespace {name} deleted")
