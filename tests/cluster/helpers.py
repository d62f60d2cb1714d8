"""Shared pieces of Berth's end-to-end tests: node groups, pod bodies, waiting, reading results.

Every test makes its own nodes labelled `test-group=<fresh value>` and its pods
select that label, so tests never see each other's capacity. Waiting is always
polling or watching with a deadline; nothing sleeps to let time pass.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from berth.controlplane import ApiError, KubeClient, LocalControlPlane, NodeTemplate, create_nodes
from berth.controlplane.berth_process import BerthReplica
from berth.controlplane.objects import list_events, unique_name, wait_for_pods_bound
from berth.engine.model.quantity import to_milli, to_units
from berth.kube.api import ApiTransportError

__all__ = [
    "DEFAULT_SCHEDULER",
    "GROUP_LABEL",
    "SCHEDULER",
    "BindingRecorder",
    "RssSampler",
    "capacity_violations",
    "create",
    "create_namespace",
    "create_priority_class",
    "event_time",
    "events",
    "get_pod",
    "leader_and_standby",
    "list_all",
    "make_nodes",
    "metric_samples",
    "node_kind",
    "patch",
    "pod_body",
    "poll",
    "scheduled_condition",
    "settled_leader",
    "unique_name",
    "wait_berth_sees_all_nodes",
    "wait_bound",
    "wait_unschedulable",
    "with_client",
    "write_report",
]

SCHEDULER = "berth"
DEFAULT_SCHEDULER = "default-scheduler"
GROUP_LABEL = "test-group"
PEERING = "/apis/kopf.dev/v1/clusterkopfpeerings/berth"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"

T = TypeVar("T")


def with_client(
    plane: LocalControlPlane,
    work: Callable[[KubeClient], Awaitable[T]],
    *,
    concurrency: int = 64,
) -> T:
    """Run `work` with an admin client, from synchronous test code."""

    async def run() -> T:
        async with plane.client(concurrency=concurrency) as client:
            return await work(client)

    return asyncio.run(run())


def make_nodes(
    plane: LocalControlPlane,
    count: int,
    *,
    group: str | None = None,
    kind: str = "n",
    **template: Any,
) -> str:
    """Create `count` nodes in node group `group` (a fresh one by default); returns the group.

    Nodes are named `<group>-<kind>-<index>`, so a placement's class is its `kind`
    (see `node_kind`); `template` is passed to NodeTemplate (labels are merged).
    """
    group = group or unique_name("g")
    labels = {GROUP_LABEL: group, **template.pop("labels", {})}
    nodes = NodeTemplate(name_prefix=f"{group}-{kind}", labels=labels, **template)

    async def work(client: KubeClient) -> None:
        await create_nodes(client, nodes, count)

    with_client(plane, work)
    return group


def node_kind(node: str, group: str) -> str:
    """`<group>-<kind>-<index>` -> `<kind>`: what a placement means, whatever the group."""
    return node.removeprefix(f"{group}-").rsplit("-", 1)[0]


def pod_body(
    name: str,
    group: str | None,
    *,
    scheduler: str = SCHEDULER,
    cpu: str = "100m",
    memory: str | None = None,
    ports: list[dict[str, Any]] | None = None,
    labels: Mapping[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A single-container pod selecting node group `group` (None: no selector); `spec` is merged."""
    requests = {"cpu": cpu} if memory is None else {"cpu": cpu, "memory": memory}
    container: dict[str, Any] = {
        "name": "c",
        "image": PAUSE_IMAGE,
        "resources": {"requests": requests},
    }
    if ports:
        container["ports"] = ports
    full_spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [container],
        "terminationGracePeriodSeconds": 0,
    }
    if group is not None:
        full_spec["nodeSelector"] = {GROUP_LABEL: group}
    full_spec.update(spec)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": full_spec,
    }


def create_namespace(plane: LocalControlPlane, prefix: str) -> str:
    """A fresh namespace named after `prefix` (tests do not delete theirs: bound pods would hold it)."""
    name = unique_name(prefix)
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    plane.request("POST", "/api/v1/namespaces", body)
    return name


def create_priority_class(plane: LocalControlPlane, value: int) -> str:
    """A fresh PriorityClass of `value`; returns its name."""
    name = unique_name(f"priority-{value}")
    body = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }
    plane.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", body)
    return name


def create(plane: LocalControlPlane, namespace: str, *objects: dict[str, Any]) -> None:
    """POST pods (or other namespaced core objects, by their `kind`) in order."""
    plurals = {"Pod": "pods", "PersistentVolumeClaim": "persistentvolumeclaims"}
    for body in objects:
        plural = plurals[body["kind"]]
        plane.request("POST", f"/api/v1/namespaces/{namespace}/{plural}", body)


def patch(plane: LocalControlPlane, path: str, body: Any, *, patch_type: str = "merge") -> Any:
    async def work(client: KubeClient) -> Any:
        return await client.patch(path, body, patch_type=patch_type)

    return with_client(plane, work)


def get_pod(plane: LocalControlPlane, namespace: str, name: str) -> dict[str, Any]:
    pod: dict[str, Any] = plane.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
    return pod


def wait_bound(
    plane: LocalControlPlane, namespace: str, names: Iterable[str], timeout: float = 60
) -> dict[str, str]:
    """Pod name -> node name once every named pod is bound (TimeoutError names the rest)."""
    wanted = list(names)

    async def work(client: KubeClient) -> dict[str, str]:
        return await wait_for_pods_bound(client, namespace, wanted, timeout=timeout)

    return with_client(plane, work)


def poll(
    probe: Callable[[], T | None],
    *,
    timeout: float,
    description: str,
    interval: float = 0.2,
) -> T:
    """The first truthy value of `probe()`, polled until `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {description}")
        time.sleep(interval)  # wait-ok: polling the API or a metric, with a deadline


def wait_berth_sees_all_nodes(
    plane: LocalControlPlane, berth: BerthReplica, timeout: float = 30
) -> int:
    """Block until Berth's cache holds every node the API has (its cache-size gauge, ~1 s cadence).

    Node and pod events reach Berth on separate watch streams; a test that compares
    messages ("0/N nodes are available") must not race a node that was just created.
    """
    wanted = len(plane.request("GET", "/api/v1/nodes")["items"])
    sample = 'scheduler_cache_size{type="nodes"}'

    def probe() -> int | None:
        page = berth.http_get("/metrics") or ""
        for line in page.splitlines():
            if line.startswith(sample) and float(line.rsplit(" ", 1)[1]) >= wanted:
                return wanted
        return None

    return poll(probe, timeout=timeout, description=f"Berth's cache holding {wanted} nodes")


def scheduled_condition(pod: Mapping[str, Any]) -> dict[str, Any] | None:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled":
            return dict(condition)
    return None


def wait_unschedulable(
    plane: LocalControlPlane, namespace: str, name: str, timeout: float = 30
) -> str:
    """The message of the pod's PodScheduled=False condition, once a scheduler has written one."""

    def probe() -> str | None:
        condition = scheduled_condition(get_pod(plane, namespace, name))
        if (
            condition
            and condition.get("status") == "False"
            and condition.get("reason") != "SchedulingGated"
            and condition.get("message")
        ):
            return str(condition["message"])
        return None

    return poll(probe, timeout=timeout, description=f"{namespace}/{name} PodScheduled=False")


def events(
    plane: LocalControlPlane,
    namespace: str,
    *,
    name: str | None = None,
    reason: str | None = None,
) -> list[dict[str, Any]]:
    """core/v1 Events in `namespace` (Berth posts events.k8s.io/v1; the API serves both views)."""

    async def work(client: KubeClient) -> list[dict[str, Any]]:
        return await list_events(client, namespace, involved_name=name, reason=reason)

    return with_client(plane, work)


def capacity_violations(
    nodes: Iterable[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]]
) -> dict[str, str]:
    """Node name -> what is over its allocatable (cpu, memory, pod count), for bound pods.

    Counts every non-terminal pod bound to the given nodes, whoever bound it.
    """
    allocatable = {node["metadata"]["name"]: node["status"]["allocatable"] for node in nodes}
    used: dict[str, dict[str, int]] = defaultdict(lambda: {"cpu": 0, "memory": 0, "pods": 0})
    for pod in pods:
        node = pod["spec"].get("nodeName")
        if node not in allocatable or (pod.get("status") or {}).get("phase") in (
            "Succeeded",
            "Failed",
        ):
            continue
        total = used[node]
        total["pods"] += 1
        for container in pod["spec"]["containers"]:
            requests = (container.get("resources") or {}).get("requests") or {}
            total["cpu"] += to_milli(requests.get("cpu", "0"))
            total["memory"] += to_units(requests.get("memory", "0"))
    violations = {}
    for node, total in used.items():
        limits = allocatable[node]
        over = []
        if total["cpu"] > to_milli(limits.get("cpu", "0")):
            over.append(f"cpu {total['cpu']}m > {limits.get('cpu')}")
        if total["memory"] > to_units(limits.get("memory", "0")):
            over.append(f"memory {total['memory']} > {limits.get('memory')}")
        if total["pods"] > to_units(limits.get("pods", "0")):
            over.append(f"pods {total['pods']} > {limits.get('pods')}")
        if over:
            violations[node] = ", ".join(over)
    return violations


def write_report(
    directory: Path, name: str, numbers: Mapping[str, Any], record: Callable[[str, Any], None]
) -> Path:
    """Write measured numbers as JSON under `directory` and record each as a test property."""
    path = directory / f"{name}.json"
    path.write_text(json.dumps(dict(numbers), indent=2, sort_keys=True) + "\n")
    for key, value in numbers.items():
        record(key, value)
    record("report_path", str(path))
    return path


class BindingRecorder:
    """Follows the pods of one namespace and notes when each is first seen bound.

    `run()` lists, then watches from the list's resourceVersion (re-listing when a
    watch ends, and when the API server cannot be reached), for as long as the task
    lives; cancel it when done. Times are `time.monotonic()` at the moment the watch
    delivered the binding. A pod later seen on another node is noted in `moved`.
    """

    def __init__(self, client: KubeClient, namespace: str) -> None:
        self._client = client
        self._path = f"/api/v1/namespaces/{namespace}/pods"
        self.namespace = namespace
        self.bound: dict[str, tuple[str, float]] = {}  # pod name -> (node, first seen bound)
        self.moved: dict[str, list[str]] = {}  # pod name -> every node it was seen on
        self.unreachable = 0  # list or watch attempts that found no API server
        self._changed = asyncio.Event()

    def _record(self, pod: Mapping[str, Any]) -> None:
        node = pod["spec"].get("nodeName")
        name = pod["metadata"]["name"]
        if not node:
            return
        if name not in self.bound:
            self.bound[name] = (node, time.monotonic())
            self._changed.set()
        elif self.bound[name][0] != node:
            self.moved.setdefault(name, [self.bound[name][0]]).append(node)

    async def run(self) -> None:
        while True:
            try:
                await self._list_and_watch()
            except (
                aiohttp.ClientError,
                OSError,
                TimeoutError,
                ApiError,
                ApiTransportError,
            ) as error:
                # The API server is away or still starting (a fault test): try again shortly.
                if isinstance(error, ApiError) and error.status < 500:
                    raise
                self.unreachable += 1
                await asyncio.sleep(0.2)  # wait-ok: reconnect pacing while the server is down

    async def _list_and_watch(self) -> None:
        pods, resource_version = await self._client.list(self._path)
        for pod in pods:
            self._record(pod)
        try:
            async for event in self._client.watch(self._path, resource_version=resource_version):
                if event["type"] in ("ADDED", "MODIFIED"):
                    self._record(event["object"])
        except ApiError as error:
            if error.status != 410:  # 410 Gone: too old a resourceVersion; re-list
                raise

    async def wait_for(self, count: int, *, timeout: float) -> None:
        """Until at least `count` pods are bound; TimeoutError says how many were."""
        deadline = time.monotonic() + timeout
        while len(self.bound) < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(
                    f"{len(self.bound)} of {count} pods in {self.namespace} bound "
                    f"within {timeout:.0f}s"
                )
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                continue

    def times(self) -> list[float]:
        return sorted(seen for _node, seen in self.bound.values())


class RssSampler:
    """Samples a replica's resident memory every `interval` seconds while `run()` lives."""

    def __init__(self, replica: BerthReplica, interval: float = 0.5) -> None:
        self._replica = replica
        self._interval = interval
        self.samples: list[int] = []

    async def run(self) -> None:
        while True:
            self.samples.append(self._replica.process.rss_bytes())
            await asyncio.sleep(self._interval)  # wait-ok: sampling cadence, not a timing wait

    @property
    def peak(self) -> int:
        return max(self.samples, default=0)


def list_all(plane: LocalControlPlane, path: str, **params: str) -> list[dict[str, Any]]:
    async def work(client: KubeClient) -> list[dict[str, Any]]:
        items, _ = await client.list(path, params=params or None)
        return items

    return with_client(plane, work)


def leader_and_standby(
    plane: LocalControlPlane, replicas: Mapping[str, BerthReplica]
) -> tuple[BerthReplica, BerthReplica]:
    """Of two replicas: the settled leader, and the other one."""
    leader = settled_leader(plane, replicas)
    return leader, next(replica for replica in replicas.values() if replica is not leader)


def settled_leader(plane: LocalControlPlane, replicas: Mapping[str, BerthReplica]) -> BerthReplica:
    """The replica with the highest peering priority, once it alone leads (peering and Lease)."""

    def probe() -> BerthReplica | None:
        status: dict[str, Any] = plane.request("GET", PEERING).get("status") or {}
        if not all(name in status for name in replicas):
            return None
        top = max(replicas, key=lambda name: int(status[name].get("priority", 0)))
        leaders = [name for name, replica in replicas.items() if replica.is_leader()]
        return replicas[top] if leaders == [top] else None

    return poll(probe, timeout=90, description="one leader among the replicas")


def event_time(event: Mapping[str, Any]) -> float:
    """When an Event happened, as a Unix timestamp (eventTime, else the legacy timestamps)."""
    stamp = event.get("eventTime") or event.get("lastTimestamp") or event["firstTimestamp"]
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def metric_samples(replica: BerthReplica, name: str) -> dict[str, float]:
    """Samples `name` from a replica's /metrics, keyed by their labels as `k=v,k=v`."""
    page = replica.http_get("/metrics")
    if page is None:
        raise AssertionError(f"berth {replica.name}: /metrics did not answer")
    return {
        ",".join(f"{key}={value}" for key, value in sorted(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(page)
        for sample in family.samples
        if sample.name == name
    }


# -- side by side with kube-scheduler ---------------------------------------------------


def both_unschedulable(
    plane: LocalControlPlane,
    berth: BerthReplica,
    namespace: str,
    group: str | None,
    *,
    name: str = "",
    **spec: Any,
) -> str:
    """Create the pod for Berth and for kube-scheduler; both must fail with one message."""
    ours, theirs = f"{name}ours", f"{name}theirs"
    wait_berth_sees_all_nodes(plane, berth)
    create(
        plane,
        namespace,
        pod_body(ours, group, **spec),
        pod_body(theirs, group, scheduler=DEFAULT_SCHEDULER, **spec),
    )
    expected = wait_unschedulable(plane, namespace, theirs)
    actual = wait_unschedulable(plane, namespace, ours)
    assert actual == expected, f"Berth: {actual!r}\nkube-scheduler: {expected!r}"
    # The FailedScheduling events say the same (kube-scheduler's event note is the message).
    notes = {
        pod: poll(
            lambda pod=pod: [
                event["message"]
                for event in events(plane, namespace, name=pod, reason="FailedScheduling")
            ],
            timeout=30,
            description=f"a FailedScheduling event for {pod}",
        )
        for pod in (ours, theirs)
    }
    assert notes[ours] == notes[theirs] == [expected]
    return actual


def place_in_turn(
    plane: LocalControlPlane,
    berth: BerthReplica,
    namespace: str,
    group: str | None,
    **spec: Any,
) -> tuple[str, str]:
    """Berth's pod first, then kube-scheduler's with the same spec; their nodes.

    Berth must have seen every node first: a preference for the last node created
    is otherwise judged among the nodes its watch has delivered so far.
    """
    wait_berth_sees_all_nodes(plane, berth)
    create(plane, namespace, pod_body("ours", group, **spec))
    ours = wait_bound(plane, namespace, ["ours"])["ours"]
    create(plane, namespace, pod_body("theirs", group, scheduler=DEFAULT_SCHEDULER, **spec))
    theirs = wait_bound(plane, namespace, ["theirs"])["theirs"]
    return ours, theirs
