"""The local control plane is a real Kubernetes API: it stores, authorises and schedules.

These smoke tests pin what the rest of Berth's cluster tests and benchmarks
rely on: the pinned versions, Node/Pod round trips, RBAC being enforced,
ServiceAccount identities, kubectl, and the reference kube-scheduler binding
and reporting failures in its own words.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections import Counter

import pytest

from berth.controlplane import (
    ApiError,
    LocalControlPlane,
    NodeTemplate,
    PodTemplate,
    create_nodes,
    create_pods,
    node_manifest,
    pod_manifest,
    wait_for_event,
    wait_for_pods_bound,
)
from berth.controlplane.objects import bind_pods, read_placements, unique_name
from berth.controlplane.processes import ManagedProcess

pytestmark = pytest.mark.cluster

# Generous: a loaded 2-core CI machine; these are deadlines, not expectations.
DEADLINE = 60.0


def test_apiserver_is_ready_and_reports_the_pinned_version(
    control_plane: LocalControlPlane,
) -> None:
    assert control_plane.request("GET", "/readyz") == "ok"
    assert control_plane.request("GET", "/version")["gitVersion"] == "v1.37.2"


def test_node_and_pod_round_trip_with_status(
    control_plane: LocalControlPlane, namespace: str
) -> None:
    template = NodeTemplate(
        name_prefix=unique_name("roundtrip"),
        allocatable={"cpu": "8", "memory": "32Gi", "pods": "110"},
    )

    async def scenario() -> tuple[dict[str, object], dict[str, object]]:
        async with control_plane.client() as client:
            await client.create("/api/v1/nodes", node_manifest(template, 0))
            node = await client.get(f"/api/v1/nodes/{template.name(0)}")
            manifest = pod_manifest("pod-a", PodTemplate(scheduler_name="nobody"))
            await client.create(f"/api/v1/namespaces/{namespace}/pods", manifest)
            pod = await client.get(f"/api/v1/namespaces/{namespace}/pods/pod-a")
            return node, pod

    node, pod = asyncio.run(scenario())
    status = node["status"]
    assert isinstance(status, dict)
    assert status["allocatable"] == {"cpu": "8", "memory": "32Gi", "pods": "110"}
    assert [(c["type"], c["status"]) for c in status["conditions"]] == [("Ready", "True")]
    node_spec = node["spec"]
    assert isinstance(node_spec, dict)
    assert "taints" not in node_spec, "TaintNodesByCondition must be disabled"
    pod_status = pod["status"]
    assert isinstance(pod_status, dict)
    assert pod_status["phase"] == "Pending"


def test_kubectl_from_the_cache_talks_to_the_cluster(
    control_plane: LocalControlPlane,
) -> None:
    template = NodeTemplate(name_prefix=unique_name("kubectl"))
    control_plane.request("POST", "/api/v1/nodes", node_manifest(template, 0))

    listed = control_plane.kubectl("get", "nodes", "-o", "name").stdout.split()
    versions = json.loads(control_plane.kubectl("version", "-o", "json").stdout)

    assert f"node/{template.name(0)}" in listed
    assert versions["clientVersion"]["gitVersion"] == "v1.37.2"
    assert versions["serverVersion"]["gitVersion"] == "v1.37.2"


def test_bulk_helpers_create_bind_and_read_placements(
    control_plane: LocalControlPlane, namespace: str
) -> None:
    nodes = NodeTemplate(name_prefix=unique_name("bulk"))
    # A scheduler name nobody serves, so only our Bindings place these pods.
    pods = PodTemplate(scheduler_name="berth-test-nobody")

    async def scenario() -> tuple[dict[str, str], dict[str, str]]:
        async with control_plane.client() as client:
            node_names = await create_nodes(client, nodes, 20)
            manifests = [pod_manifest(f"pod-{i:03d}", pods) for i in range(40)]
            pod_names = await create_pods(client, namespace, manifests)
            wanted = {pod: node_names[i % 20] for i, pod in enumerate(pod_names)}
            waiting = asyncio.create_task(
                wait_for_pods_bound(client, namespace, pod_names, timeout=DEADLINE)
            )
            await bind_pods(client, namespace, wanted)
            bound = await waiting
            return wanted, bound

    wanted, bound = asyncio.run(scenario())
    placements = asyncio.run(_read(control_plane, namespace))
    assert bound == wanted
    assert placements == wanted


async def _read(control_plane: LocalControlPlane, namespace: str) -> dict[str, str | None]:
    async with control_plane.client() as client:
        return await read_placements(client, namespace)


def test_reference_scheduler_binds_a_fitting_pod_and_explains_those_that_fit_nowhere(
    control_plane: LocalControlPlane, kube_scheduler: ManagedProcess, namespace: str
) -> None:
    template = NodeTemplate(
        name_prefix=unique_name("sched"),
        allocatable={"cpu": "2", "memory": "4Gi", "pods": "110"},
        labels={"berth.test/pool": namespace},
    )
    pinned = PodTemplate(
        requests={"cpu": "1", "memory": "1Gi"},
        node_selector={"berth.test/pool": namespace},
    )
    # Fits the empty node, not beside `fits`, which has the same priority.
    crowded_out = dataclasses.replace(pinned, requests={"cpu": "1500m", "memory": "1Gi"})
    # Fits no node even if it were empty.
    too_big = dataclasses.replace(pinned, requests={"cpu": "3", "memory": "1Gi"})

    async def scenario() -> tuple[str, dict[str, str], dict[str, str], int]:
        async with control_plane.client() as client:
            (node,) = await create_nodes(client, template, 1)
            await create_pods(client, namespace, [pod_manifest("fits", pinned)])
            bound = await wait_for_pods_bound(client, namespace, ["fits"], timeout=DEADLINE)
            # The scheduler saw our node, hence every node created before it:
            # the count below is the one its failure messages will use.
            all_nodes, _ = await client.list("/api/v1/nodes")
            manifests = [pod_manifest("crowded-out", crowded_out), pod_manifest("too-big", too_big)]
            await create_pods(client, namespace, manifests)
            messages = {}
            for name in ("crowded-out", "too-big"):
                event = await wait_for_event(
                    client,
                    namespace,
                    involved_name=name,
                    reason="FailedScheduling",
                    timeout=DEADLINE,
                )
                assert event["type"] == "Warning"
                messages[name] = event["message"]
            return node, bound, messages, all_nodes

    node, bound, messages, all_nodes = asyncio.run(scenario())
    total = len(all_nodes)
    # Other tests share this control plane; their nodes fail on the first filter that
    # rejects them (NodeUnschedulable, then TaintToleration, then NodeAffinity).
    others = Counter(
        _first_failure(other) for other in all_nodes if other["metadata"]["name"] != node
    )
    elsewhere = ", ".join(sorted(f"{count} {reason}" for reason, count in others.items()))
    assert bound == {"fits": node}
    # kube-scheduler's own words, as observed from v1.37.2.
    assert messages == {
        "crowded-out": (
            f"0/{total} nodes are available: 1 Insufficient cpu, {elsewhere}. "
            f"preemption: 0/{total} nodes are available: 1 No preemption victims found for "
            f"incoming pod, {total - 1} Preemption is not helpful for scheduling."
        ),
        "too-big": (
            f"0/{total} nodes are available: 1 Insufficient cpu, {elsewhere}. "
            f"preemption: 0/{total} nodes are available: "
            f"{total} Preemption is not helpful for scheduling."
        ),
    }


def _first_failure(node: dict[str, object]) -> str:
    spec = node.get("spec") or {}
    assert isinstance(spec, dict)
    if spec.get("unschedulable"):
        return "node(s) were unschedulable"
    if any(t.get("effect") in ("NoSchedule", "NoExecute") for t in spec.get("taints") or []):
        return "node(s) had untolerated taint(s)"
    return "node(s) didn't match Pod's node affinity/selector"


def test_rbac_refuses_a_user_without_permissions(
    control_plane: LocalControlPlane, namespace: str
) -> None:
    kubeconfig = control_plane.user_kubeconfig("berth-test-nobody")

    async def scenario() -> ApiError:
        async with control_plane.client(kubeconfig) as client:
            with pytest.raises(ApiError) as refused:
                await client.create(
                    f"/api/v1/namespaces/{namespace}/pods", pod_manifest("forbidden")
                )
            return refused.value

    error = asyncio.run(scenario())
    assert error.status == 403
    assert error.reason == "Forbidden"
    assert 'User "berth-test-nobody" cannot create resource "pods"' in str(error)
    can_i = control_plane.kubectl(
        "auth", "can-i", "create", "pods", "-n", namespace, kubeconfig=kubeconfig, check=False
    )
    assert can_i.stdout.strip() == "no"


def test_serviceaccount_kubeconfig_has_exactly_the_rights_granted(
    control_plane: LocalControlPlane, namespace: str
) -> None:
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "pod-reader"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "pod-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": namespace}],
    }
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}"
    control_plane.request("POST", f"{rbac}/roles", role)
    control_plane.request("POST", f"{rbac}/rolebindings", binding)
    kubeconfig = control_plane.serviceaccount_kubeconfig(namespace, "reader")

    async def scenario() -> tuple[dict[str, object], int, ApiError]:
        async with control_plane.client(kubeconfig) as client:
            review = await client.create(
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
            )
            pods, _ = await client.list(f"/api/v1/namespaces/{namespace}/pods")
            with pytest.raises(ApiError) as refused:
                await client.list("/api/v1/nodes")
            return review, len(pods), refused.value

    review, pod_count, refused = asyncio.run(scenario())
    status = review["status"]
    assert isinstance(status, dict)
    assert status["userInfo"]["username"] == f"system:serviceaccount:{namespace}:reader"
    assert pod_count == 0
    assert refused.status == 403
