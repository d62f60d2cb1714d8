"""`berth explain NAMESPACE/NAME`: the cluster read from the API server, read-only, for one pod.

A snapshot of what the scheduler's cache holds (nodes, pods that are bound and not finished,
namespaces' labels, PodDisruptionBudgets, the selectors of services and controllers, pending
pods' nominations) is listed with get/list only
and handed to the same explanation as the files. A pod that is bound already is explained as if it
were pending again, with itself taken off its node, so that "why did it go there?" has an answer;
objects the engine cannot read are left out with a warning, as the live scheduler leaves them out.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from berth.cli.input_files import InputError
from berth.engine.cluster import Workload
from berth.engine.errors import InvalidObjectError
from berth.engine.model.node import Node
from berth.engine.model.pdb import PodDisruptionBudget
from berth.engine.model.pod import Pod
from berth.kube.api import ApiError, ApiSession, ApiTransportError
from berth.kube.workloads import workload_from_dict

__all__ = ["LiveCluster", "default_kubeconfig", "parse_target", "read_cluster"]

ACTIVE_PODS = {"fieldSelector": "status.phase!=Succeeded,status.phase!=Failed"}
# Controllers and services whose selectors PodTopologySpread's system defaults spread by.
WORKLOAD_PATHS = {
    "Service": "/api/v1/services",
    "ReplicationController": "/api/v1/replicationcontrollers",
    "ReplicaSet": "/apis/apps/v1/replicasets",
    "StatefulSet": "/apis/apps/v1/statefulsets",
}


@dataclass(frozen=True, slots=True)
class LiveCluster:
    pod: Pod  # as the scheduler would see it pending
    bound_to: str  # the node it is bound to now ("" when pending)
    nodes: list[Node]
    bound: list[Pod]  # every other pod with a node, not finished
    pdbs: list[PodDisruptionBudget]
    namespaces: dict[str, dict[str, str]]
    workloads: list[Workload]
    nominated: dict[str, list[Pod]]  # node -> pending pods nominated to it
    warnings: list[str]


def parse_target(text: str) -> tuple[str, str]:
    """`NAMESPACE/NAME`, `pod/NAME` or `NAME` (namespace "default") -> (namespace, name)."""
    parts = text.split("/")
    if len(parts) == 1 and parts[0]:
        return "default", parts[0]
    if len(parts) == 2 and all(parts):
        return ("default", parts[1]) if parts[0] in ("pod", "pods") else (parts[0], parts[1])
    raise InputError(f"pod: expected NAMESPACE/NAME, got {text!r}")


def default_kubeconfig() -> Path:
    configured = os.environ.get("KUBECONFIG", "").split(os.pathsep)[0]
    return Path(configured) if configured else Path.home() / ".kube" / "config"


def _readable(
    parse: Callable[[Mapping[str, Any]], Any], raw: Mapping[str, Any], warnings: list[str]
) -> Any:
    try:
        return parse(raw)
    except InvalidObjectError as error:
        warnings.append(f"left out: {error}")
        return None


async def read_cluster(kubeconfig: Path, *, namespace: str, name: str) -> LiveCluster:
    """List what the scheduler's cache holds; raises `InputError` when the pod cannot be read."""
    try:
        session = ApiSession.from_kubeconfig(kubeconfig)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, yaml.YAMLError) as error:
        # A kubeconfig that is missing, not YAML, or lacks the entries its context names.
        raise InputError(f"{kubeconfig}: cannot use this kubeconfig: {error}") from None
    try:
        async with session:
            raw_pod = await session.get_json(f"/api/v1/namespaces/{namespace}/pods/{name}")
            nodes_raw, _ = await session.list_json("/api/v1/nodes")
            pods_raw, _ = await session.list_json("/api/v1/pods", params=ACTIVE_PODS)
            pdbs_raw, _ = await session.list_json("/apis/policy/v1/poddisruptionbudgets")
            namespaces_raw, _ = await session.list_json("/api/v1/namespaces")
            workloads_raw = {
                kind: (await session.list_json(path))[0] for kind, path in WORKLOAD_PATHS.items()
            }
    except ApiError as error:
        raise InputError(f"pod {namespace}/{name}: {error}") from None
    except ApiTransportError as error:
        raise InputError(f"{kubeconfig}: cannot reach the API server: {error}") from None
    try:
        pod = Pod.from_dict(raw_pod)
    except InvalidObjectError as error:
        raise InputError(f"pod {namespace}/{name}: {error}") from None
    warnings: list[str] = []
    nodes = [n for raw in nodes_raw if (n := _readable(Node.from_dict, raw, warnings))]
    pods = [p for raw in pods_raw if (p := _readable(Pod.from_dict, raw, warnings))]
    parse_pdb = PodDisruptionBudget.from_dict
    pdbs = [b for raw in pdbs_raw if (b := _readable(parse_pdb, raw, warnings))]
    namespaces = {
        str((raw.get("metadata") or {}).get("name", "")): dict(
            (raw.get("metadata") or {}).get("labels") or {}
        )
        for raw in namespaces_raw
    }
    known = {node.name for node in nodes}
    nominated: defaultdict[str, list[Pod]] = defaultdict(list)
    for other in pods:
        if not other.node_name and other.nominated_node_name and other.uid != pod.uid:
            nominated[other.nominated_node_name].append(other)
    return LiveCluster(
        pod=replace(pod, node_name=""),
        bound_to=pod.node_name,
        nodes=nodes,
        # A pod on a node not (or no longer) listed cannot change a placement.
        bound=[p for p in pods if p.node_name in known and p.uid != pod.uid],
        pdbs=pdbs,
        namespaces=namespaces,
        workloads=[
            workload_from_dict(kind, raw) for kind, raws in workloads_raw.items() for raw in raws
        ],
        nominated=dict(nominated),
        warnings=warnings,
    )
