"""Simulated cluster contents: Nodes without kubelets, Pods without containers.

Tests and benchmarks need thousands of Nodes that look to a scheduler
exactly like real ones (capacity, allocatable, hostname and zone labels,
a Ready condition) and Pods created fast and in parallel. Nothing here runs
a kubelet: Nodes stay as created, and bound Pods stay Pending.

All helpers are coroutines over one KubeClient so that callers can bound
concurrency in one place and overlap creation with watching.
"""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from berth.controlplane.client import ApiError, JsonObject, KubeClient

__all__ = [
    "NodeTemplate",
    "PodTemplate",
    "bind_pod",
    "bind_pods",
    "create_namespace",
    "create_nodes",
    "create_pods",
    "list_events",
    "node_manifest",
    "pod_manifest",
    "read_placements",
    "unique_name",
    "wait_for_event",
    "wait_for_pods_bound",
]


def unique_name(prefix: str) -> str:
    """A fresh DNS-1123 name: tests never meet each other's objects, or a namespace being deleted."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class NodeTemplate:
    """What every simulated Node of a batch looks like; nodes differ only by index.

    `zones` are assigned round-robin so that topology spreading has something
    to spread over. `capacity` defaults to `allocatable`.
    """

    name_prefix: str = "node"
    allocatable: Mapping[str, str] = field(
        default_factory=lambda: {"cpu": "4", "memory": "16Gi", "pods": "110"}
    )
    capacity: Mapping[str, str] | None = None
    zones: Sequence[str] = ("zone-a", "zone-b", "zone-c")
    region: str | None = "region-1"
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: Sequence[Mapping[str, str]] = ()
    unschedulable: bool = False
    ready: bool = True

    def name(self, index: int) -> str:
        return f"{self.name_prefix}-{index:05d}"


def node_manifest(template: NodeTemplate, index: int) -> JsonObject:
    """The Node object for `index`, status included (the apiserver keeps status on Node create)."""
    name = template.name(index)
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
    }
    if template.zones:
        labels["topology.kubernetes.io/zone"] = template.zones[index % len(template.zones)]
    if template.region is not None:
        labels["topology.kubernetes.io/region"] = template.region
    labels.update(template.labels)
    spec: JsonObject = {}
    if template.taints:
        spec["taints"] = [dict(taint) for taint in template.taints]
    if template.unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {
            "capacity": dict(template.capacity or template.allocatable),
            "allocatable": dict(template.allocatable),
            "conditions": [_ready_condition(template.ready)],
            "phase": "Running",
        },
    }


def _ready_condition(ready: bool) -> JsonObject:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {
        "type": "Ready",
        "status": "True" if ready else "False",
        "reason": "KubeletReady" if ready else "KubeletNotReady",
        "message": "simulated by berth.controlplane",
        "lastHeartbeatTime": now,
        "lastTransitionTime": now,
    }


async def create_nodes(
    client: KubeClient, template: NodeTemplate, count: int, *, start: int = 0
) -> list[str]:
    """Create `count` Nodes (indices start..start+count-1) concurrently; their names, in order."""
    manifests = [node_manifest(template, index) for index in range(start, start + count)]
    await _gather_bounded(client.create("/api/v1/nodes", manifest) for manifest in manifests)
    return [manifest["metadata"]["name"] for manifest in manifests]


@dataclass(frozen=True)
class PodTemplate:
    """A single-container pause Pod; callers vary it with dataclasses.replace()."""

    requests: Mapping[str, str] = field(default_factory=lambda: {"cpu": "100m", "memory": "128Mi"})
    limits: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    scheduler_name: str = "default-scheduler"
    priority_class_name: str | None = None
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: Sequence[Mapping[str, Any]] = ()
    affinity: Mapping[str, Any] | None = None
    topology_spread_constraints: Sequence[Mapping[str, Any]] = ()
    image: str = "registry.k8s.io/pause:3.10"


def pod_manifest(
    name: str,
    template: PodTemplate = PodTemplate(),  # frozen, so safe as a default
    *,
    node_name: str | None = None,
) -> JsonObject:
    """A Pod object; with `node_name` it is created already bound (no scheduler involved)."""
    resources: JsonObject = {"requests": dict(template.requests)}
    if template.limits:
        resources["limits"] = dict(template.limits)
    spec: JsonObject = {
        "schedulerName": template.scheduler_name,
        "containers": [{"name": "main", "image": template.image, "resources": resources}],
        # Nothing will ever run or stop these pods; no grace period to wait for.
        "terminationGracePeriodSeconds": 0,
    }
    optional: Mapping[str, Any] = {
        "priorityClassName": template.priority_class_name,
        "nodeSelector": dict(template.node_selector) or None,
        "tolerations": [dict(t) for t in template.tolerations] or None,
        "affinity": dict(template.affinity) if template.affinity else None,
        "topologySpreadConstraints": [dict(c) for c in template.topology_spread_constraints]
        or None,
        "nodeName": node_name,
    }
    spec.update({key: value for key, value in optional.items() if value is not None})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": dict(template.labels)},
        "spec": spec,
    }


async def create_namespace(client: KubeClient, name: str | None = None) -> str:
    """Create a namespace (a fresh unique one by default) and return its name."""
    name = name or unique_name("berth-test")
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    await client.create("/api/v1/namespaces", body)
    return name


async def create_pods(
    client: KubeClient, namespace: str, manifests: Iterable[JsonObject]
) -> list[str]:
    """Create Pods concurrently in `namespace`; their names, in the given order."""
    manifest_list = list(manifests)
    path = f"/api/v1/namespaces/{namespace}/pods"
    await _gather_bounded(client.create(path, manifest) for manifest in manifest_list)
    return [manifest["metadata"]["name"] for manifest in manifest_list]


async def bind_pod(client: KubeClient, namespace: str, pod: str, node: str) -> None:
    """Bind like a scheduler does: POST a Binding to the pod's binding subresource."""
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod, "namespace": namespace},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    await client.create(f"/api/v1/namespaces/{namespace}/pods/{pod}/binding", binding)


async def bind_pods(client: KubeClient, namespace: str, placements: Mapping[str, str]) -> None:
    """Bind many pods concurrently; `placements` maps pod name to node name."""
    await _gather_bounded(
        bind_pod(client, namespace, pod, node) for pod, node in placements.items()
    )


async def read_placements(
    client: KubeClient, namespace: str, *, label_selector: str | None = None
) -> dict[str, str | None]:
    """Pod name -> node name (None while unbound) for every pod in `namespace`."""
    params = {"labelSelector": label_selector} if label_selector else None
    pods, _ = await client.list(f"/api/v1/namespaces/{namespace}/pods", params=params)
    return {pod["metadata"]["name"]: pod["spec"].get("nodeName") for pod in pods}


async def wait_for_pods_bound(
    client: KubeClient, namespace: str, names: Collection[str], *, timeout: float
) -> dict[str, str]:
    """Wait until every named pod has a node; pod name -> node name.

    Lists once and then watches from that list's resourceVersion, so no
    binding can slip between the two; re-lists if the watch ends early.
    Raises TimeoutError naming the pods still unbound.
    """
    wanted = set(names)
    placements: dict[str, str] = {}
    path = f"/api/v1/namespaces/{namespace}/pods"

    def record(pod: JsonObject) -> None:
        node = pod["spec"].get("nodeName")
        name = pod["metadata"]["name"]
        if node and name in wanted:
            placements[name] = node

    async def follow() -> None:
        while True:
            pods, resource_version = await client.list(path)
            for pod in pods:
                record(pod)
            if len(placements) == len(wanted):
                return
            try:
                async for event in client.watch(path, resource_version=resource_version):
                    if event["type"] in ("ADDED", "MODIFIED"):
                        record(event["object"])
                        if len(placements) == len(wanted):
                            return
            except ApiError as error:
                if error.status != 410:  # 410 Gone: too old a resourceVersion; re-list
                    raise

    try:
        await asyncio.wait_for(follow(), timeout)
    except TimeoutError:
        missing = sorted(wanted - placements.keys())
        shown = ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise TimeoutError(
            f"{len(missing)} of {len(wanted)} pods in {namespace} not bound within "
            f"{timeout:.0f}s: {shown}"
        ) from None
    return placements


async def list_events(
    client: KubeClient,
    namespace: str,
    *,
    involved_name: str | None = None,
    reason: str | None = None,
) -> list[JsonObject]:
    """core/v1 Events in `namespace`, optionally for one object and one reason."""
    selectors = []
    if involved_name is not None:
        selectors.append(f"involvedObject.name={involved_name}")
    if reason is not None:
        selectors.append(f"reason={reason}")
    params = {"fieldSelector": ",".join(selectors)} if selectors else None
    events, _ = await client.list(f"/api/v1/namespaces/{namespace}/events", params=params)
    return events


async def wait_for_event(
    client: KubeClient,
    namespace: str,
    *,
    involved_name: str,
    reason: str,
    timeout: float,
) -> JsonObject:
    """The first Event with `reason` about object `involved_name`, waiting up to `timeout`."""
    path = f"/api/v1/namespaces/{namespace}/events"
    params = {"fieldSelector": f"involvedObject.name={involved_name},reason={reason}"}

    async def follow() -> JsonObject:
        while True:
            events, resource_version = await client.list(path, params=params)
            if events:
                return events[0]
            try:
                async for event in client.watch(
                    path, resource_version=resource_version, params=params
                ):
                    if event["type"] == "ADDED":
                        found: JsonObject = event["object"]
                        return found
            except ApiError as error:
                if error.status != 410:
                    raise

    try:
        return await asyncio.wait_for(follow(), timeout)
    except TimeoutError:
        raise TimeoutError(
            f"no {reason} event for {namespace}/{involved_name} within {timeout:.0f}s"
        ) from None


async def _gather_bounded(calls: Iterable[Any]) -> None:
    """Await coroutines concurrently; the client's connection limit bounds requests in flight.

    Coroutines are scheduled in chunks so that 10,000 of them do not all sit
    in memory as tasks at once.
    """
    iterator = iter(calls)
    while chunk := list(itertools.islice(iterator, 2048)):
        await asyncio.gather(*chunk)
