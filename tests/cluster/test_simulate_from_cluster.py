"""`berth simulate --from-cluster` predicts what the live Berth then does, reading with get/list only.

The simulation runs under a ServiceAccount whose only rights are get and list on the resources the
help names, so a run that succeeds proves the command is read-only. Before each new pod is created,
the simulation places that pod with several seeds: the nodes it picks are the pod's top-scoring tie
set, and the node the live Berth binds it to must be among them. The cluster holds what changes
placements: nodes of different sizes, pods bound before (one in another namespace, reached only
through a namespaceSelector on that namespace's labels), and a Service whose pods the system
default topology spread keeps apart.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml

from berth.cli.main import main
from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica
from berth.controlplane.objects import unique_name
from tests.cluster.helpers import (
    GROUP_LABEL,
    create,
    create_namespace,
    make_nodes,
    pod_body,
    wait_berth_sees_all_nodes,
    wait_bound,
)

pytestmark = pytest.mark.cluster

SEEDS = range(6)
RBAC = "/apis/rbac.authorization.k8s.io/v1"
READ_ONLY_RULES = [
    {
        "apiGroups": [""],
        "resources": [
            "nodes",
            "pods",
            "namespaces",
            "services",
            "replicationcontrollers",
            "persistentvolumeclaims",
            "persistentvolumes",
        ],
        "verbs": ["get", "list"],
    },
    {
        "apiGroups": ["storage.k8s.io"],
        "resources": [
            "storageclasses",
            "csinodes",
            "csidrivers",
            "csistoragecapacities",
            "volumeattachments",
        ],
        "verbs": ["get", "list"],
    },
    {"apiGroups": ["apps"], "resources": ["replicasets", "statefulsets"], "verbs": ["get", "list"]},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": ["get", "list"]},
    {"apiGroups": ["berth.dev"], "resources": ["schedulerprofiles"], "verbs": ["get", "list"]},
    {
        "apiGroups": ["resource.k8s.io"],
        "resources": [
            "deviceclasses",
            "resourceclaims",
            "resourceclaimtemplates",
            "resourceslices",
            "devicetaintrules",
        ],
        "verbs": ["get", "list"],
    },
]


def _read_only_kubeconfig(plane: LocalControlPlane, namespace: str) -> Path:
    """A ServiceAccount with get/list on what --from-cluster reads, and nothing else."""
    name = unique_name("simulate-reader")
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": READ_ONLY_RULES,
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": namespace}],
    }
    plane.request("POST", f"{RBAC}/clusterroles", role)
    plane.request("POST", f"{RBAC}/clusterrolebindings", binding)
    return plane.serviceaccount_kubeconfig(namespace, "reader")


def _simulated_node(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["simulate", *argv, "--output", "json"])
    assert code == 0, err.getvalue()
    assert "cannot list" not in err.getvalue()  # the rights the help names are enough
    (placement,) = json.loads(out.getvalue())["pods"]
    assert placement["node"], placement["message"]
    return str(placement["node"])


def _simulated_nodes(
    kubeconfig: Path, pod: dict[str, Any], tmp_path: Path, *extra: str
) -> set[str]:
    """The nodes `simulate --from-cluster` picks for `pod` over several tie-break seeds."""
    pods_file = tmp_path / f"{pod['metadata']['name']}.yaml"
    pods_file.write_text(yaml.safe_dump(pod))
    source = ["--from-cluster", "--kubeconfig", str(kubeconfig), "--pods", str(pods_file)]
    return {_simulated_node(*source, *extra, "--seed", str(seed)) for seed in SEEDS}


def test_from_cluster_predicts_live_placements_with_get_and_list_only(
    control_plane: LocalControlPlane, berth: BerthReplica, namespace: str, tmp_path: Path
) -> None:
    group = make_nodes(
        control_plane,
        1,
        kind="small",
        allocatable={"cpu": "2", "memory": "4Gi", "pods": "110"},
        labels={"tier": "small"},
    )
    make_nodes(
        control_plane,
        1,
        group=group,
        kind="medium",
        labels={"tier": "small"},
        allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"},
    )
    make_nodes(
        control_plane,
        1,
        group=group,
        kind="large",
        allocatable={"cpu": "16", "memory": "64Gi", "pods": "110"},
    )
    small, medium, large = (f"{group}-{kind}-00000" for kind in ("small", "medium", "large"))

    # Bound before the simulation: an anchor in a labelled namespace, ballast on the large node.
    team = unique_name("team")
    other = create_namespace(control_plane, "simulate-other")
    _label_namespace(control_plane, other, {"team": team})
    create(
        control_plane,
        other,
        pod_body("anchor", group, cpu="1", labels={"app": "anchor"}, nodeName=small),
    )
    create(control_plane, namespace, pod_body("ballast", group, cpu="6", nodeName=large))
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    }
    control_plane.request("POST", f"/api/v1/namespaces/{namespace}/services", service)
    wait_berth_sees_all_nodes(control_plane, berth)
    kubeconfig = _read_only_kubeconfig(control_plane, namespace)

    follow_anchor = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": "anchor"}},
                    "namespaceSelector": {"matchLabels": {"team": team}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }
    new_pods = [
        pod_body("follow", group, affinity=follow_anchor),
        *(pod_body(f"web-{i}", group, cpu="500m", labels={"app": "web"}) for i in range(3)),
        pod_body("wide", group, cpu="3"),
        pod_body("small-tier", group, nodeSelector={GROUP_LABEL: group, "tier": "small"}),
    ]
    simulated: dict[str, set[str]] = {}
    saved = tmp_path / "snapshot"
    live: dict[str, str] = {}
    for pod in new_pods:
        pod["metadata"]["namespace"] = namespace
        name = pod["metadata"]["name"]
        simulated[name] = _simulated_nodes(kubeconfig, pod, tmp_path, "--snapshot-to", str(saved))
        # The saved snapshot gives the same answer offline (this pod needs no namespace labels
        # or workloads, which it does not hold).
        if name == "wide":
            offline = ["--nodes", str(saved / "nodes.yaml"), "--existing"]
            offline += [str(saved / "existing.yaml"), "--profile", str(saved / "profiles.yaml")]
            offline += ["--pods", str(tmp_path / "wide.yaml")]
            assert {_simulated_node(*offline, "--seed", str(seed)) for seed in SEEDS} == simulated[
                name
            ]
        create(control_plane, namespace, pod)
        live[name] = wait_bound(control_plane, namespace, [name])[name]
        assert live[name] in simulated[name], (name, live[name], simulated[name])

    # Placements that only a faithful snapshot predicts: the anchor's node through the other
    # namespace's labels, and no node too small for the wide pod.
    assert simulated["follow"] == {small}
    assert live["wide"] in (medium, large)
    assert all(len(nodes) == 1 for nodes in simulated.values()), simulated


def _label_namespace(plane: LocalControlPlane, name: str, labels: dict[str, str]) -> None:
    body = plane.request("GET", f"/api/v1/namespaces/{name}")
    body["metadata"]["labels"] = {**(body["metadata"].get("labels") or {}), **labels}
    plane.request("PUT", f"/api/v1/namespaces/{name}", body)
