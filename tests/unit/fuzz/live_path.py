"""The live path under test, with the few fakes it needs kept in this one module.

`LivePath` is a whole `BerthApp` (the kopf handlers' intake, the profile controller and the
scheduling loop task that `acquire()` starts) whose outside world is replaced by recorders:
a binder that always succeeds, a reporter, a preemptor and an API that only answers the
start-up listings. `settle()` runs the loop until nothing moves any more, echoing each binding
back as the watch would; outcomes.py then classifies every pod fed in.

The recorders mirror the shared fake clock / binder the scheduling tests are converging on;
swap them here (and only here) when those land.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from berth.engine.model.pod import Pod
from berth.engine.registry import Registry
from berth.kube.app import BerthApp, Settings
from berth.kube.profile_controller import ProfileController, Verdict
from berth.scheduling.ports import SchedulingReason
from tests.fakes import FakeBinder

# Yields of the event loop without any change after which the loop counts as idle.
QUIET_YIELDS = 4
MAX_ROUNDS = 2000

# The profiles the pod fuzzing runs under: kube-scheduler's defaults, and a bin-packing one.
SCHEDULER_NAMES = ["berth", "berth-binpack"]
PROFILES = [
    {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": "default", "generation": 1},
        "spec": {"schedulerName": "berth"},
    },
    {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": "binpack", "generation": 1},
        "spec": {
            "schedulerName": "berth-binpack",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {"scoringStrategy": {"type": "MostAllocated"}},
                }
            ],
        },
    },
]


def assigned_node(raw: Mapping[str, Any]) -> str:
    """spec.nodeName of a raw pod, "" when absent or when a test broke the pod's shape."""
    spec = raw.get("spec")
    name = spec.get("nodeName") if isinstance(spec, Mapping) else None
    return name if isinstance(name, str) else ""


@dataclass
class RecordingReporter:
    bound: list[tuple[str, str]] = field(default_factory=list)  # (pod uid, node)
    failures: dict[str, list[tuple[str, SchedulingReason]]] = field(default_factory=dict)

    def scheduled(self, pod: Pod, node_name: str, *, profile: str) -> None:
        self.bound.append((pod.uid, node_name))

    def failed(self, pod: Pod, message: str, *, reason: SchedulingReason, profile: str) -> None:
        self.failures.setdefault(pod.uid, []).append((message, reason))

    def forget(self, pod_uid: str) -> None:
        pass


@dataclass
class RecordingPreemptor:
    preemptions: list[tuple[str, str, int]] = field(default_factory=list)

    def preempt(
        self, preemptor: Pod, node_name: str, victims: Sequence[Pod], *, profile: str
    ) -> None:
        self.preemptions.append((preemptor.uid, node_name, len(victims)))

    def nominate(self, pod: Pod, node_name: str) -> None:
        pass


@dataclass
class ListingSession:
    """An API server that answers the listings `BerthApp.acquire()` takes and records the
    status patches of the profile controller."""

    nodes: list[dict[str, Any]] = field(default_factory=list)
    pods: list[dict[str, Any]] = field(default_factory=list)

    async def list_json(self, path: str, **_: Any) -> tuple[list[dict[str, Any]], str]:
        return (self.nodes if path.endswith("/nodes") else self.pods), "1"

    async def list_pages(
        self, path: str, **_: Any
    ) -> AsyncIterator[tuple[list[dict[str, Any]], str]]:
        yield await self.list_json(path)

    patches: list[tuple[str, Any]] = field(default_factory=list)  # (path, body)

    async def patch_json(self, path: str, body: Any, **_: Any) -> Any:
        self.patches.append((path, body))
        return {}


class LogRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def messages(self, level: int) -> list[str]:
        return [r.getMessage() for r in self.records if r.levelno >= level]


@contextmanager
def captured_logs() -> Iterator[LogRecords]:
    handler = LogRecords()
    berth_logger = logging.getLogger("berth")
    berth_logger.addHandler(handler)
    previous = berth_logger.level
    berth_logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        berth_logger.removeHandler(handler)
        berth_logger.setLevel(previous)


@dataclass(frozen=True)
class Round:
    """One `settle()`: what the cluster held when it began, and the bindings made during it."""

    nodes: dict[str, dict[str, Any]]
    residents: tuple[str, ...]  # UIDs of pods fed in already assigned to a node
    bindings: range  # indexes into FakeBinder.bindings


class LivePath:
    def __init__(self, logs: LogRecords) -> None:
        self.logs = logs
        self.api = ListingSession()
        self.binder = FakeBinder()
        self.reporter = RecordingReporter()
        self.preemptor = RecordingPreemptor()
        self.app = BerthApp(
            settings=Settings(seed=7, standalone=True),
            session=self.api,  # type: ignore[arg-type]
            binder=self.binder,
            reporter=self.reporter,
            preemptor=self.preemptor,
        )
        self.profiles = ProfileController(
            self.app.scheduler, session=self.api, registry=Registry.in_tree()
        )
        self.pods: dict[str, dict[str, Any]] = {}  # uid -> the raw pod as last fed in
        self.seen_nodes: set[str] = set()
        self.ever_served: set[str] = set()  # schedulerNames some profile served at some point
        self.nodes: dict[str, dict[str, Any]] = {}  # name -> the last raw node fed in
        self.deleted: set[str] = set()  # UIDs of pods fed in as DELETED
        self.rounds: list[Round] = []
        self._echoed = 0
        self._bound_to: dict[str, str] = {}

    # ------------------------------------------------------------------ intake, as the handlers call it

    def apply_profile(self, document: Mapping[str, Any]) -> Verdict:
        verdict = self.profiles.apply(document)
        self.ever_served.update(self.app.scheduler.profiles.names())
        return verdict

    def delete_profile(self, name: str) -> None:
        self.profiles.delete(name)

    def node_event(self, event_type: str, raw: dict[str, Any], *, name: str = "") -> None:
        """`name` stands in for metadata.name when a test has broken that."""
        name = name or raw["metadata"]["name"]
        if event_type == "DELETED":
            self.nodes.pop(name, None)
        else:
            self.nodes[name] = raw
            self.seen_nodes.add(name)
        self.app.on_node_event(event_type, raw)

    def pod_event(self, event_type: str, raw: dict[str, Any], *, uid: str = "") -> None:
        """`uid` stands in for metadata.uid when a test has broken that."""
        uid = uid or raw["metadata"]["uid"]
        self.pods[uid] = raw
        bound_to = self._bound_to.get(uid)
        if bound_to is not None and not assigned_node(raw):
            # The API server's copy of a pod we bound names its node from then on.
            raw = copy.deepcopy(raw)
            raw["spec"]["nodeName"] = bound_to
        if event_type == "DELETED":
            self.deleted.add(uid)
        self.app.on_pod_event(event_type, raw)

    def listed(self, kind: str, raw: dict[str, Any]) -> None:
        """`raw` exists when the loop starts: `acquire()` finds it in the API's listing."""
        if kind == "node":
            self.nodes[raw["metadata"]["name"]] = raw
            self.seen_nodes.add(raw["metadata"]["name"])
            self.api.nodes.append(raw)
        else:
            self.pods[raw["metadata"]["uid"]] = raw
            self.api.pods.append(raw)

    # ------------------------------------------------------------------ the loop

    async def start(self) -> None:
        await self.app.acquire()

    def loop_running(self) -> bool:
        task = self.app._loop_task  # BerthApp offers no public view of its loop task
        return task is not None and not task.done()

    async def settle(self) -> None:
        """Let the loop work until it is idle, feeding every binding back as a MODIFIED event."""
        residents = tuple(
            uid for uid, raw in self.pods.items() if assigned_node(raw) and uid not in self.deleted
        )
        first = len(self.binder.bindings)
        try:
            await self._run_until_idle()
        finally:
            self.rounds.append(
                Round(dict(self.nodes), residents, range(first, len(self.binder.bindings)))
            )

    async def _run_until_idle(self) -> None:
        quiet = 0
        last: object = None
        for _ in range(MAX_ROUNDS):
            await asyncio.sleep(0)
            await self.app.scheduler.drain_binds()
            self._echo_bindings()
            snapshot = (
                tuple(sorted(self.app.scheduler.queue.pending_counts().items())),
                len(self.binder.bindings),
                sum(len(f) for f in self.reporter.failures.values()),
            )
            quiet = quiet + 1 if snapshot == last else 0
            last = snapshot
            if quiet >= QUIET_YIELDS:
                return
        raise AssertionError(f"the scheduling loop never went idle: {last}")

    def _echo_bindings(self) -> None:
        for uid, node_name in self.binder.bindings[self._echoed :]:
            self._bound_to[uid] = node_name
            bound = copy.deepcopy(self.pods[uid])
            bound["spec"]["nodeName"] = node_name
            bound["metadata"]["resourceVersion"] = (
                f"{bound['metadata'].get('resourceVersion', '')}1"
            )
            self.app.on_pod_event("MODIFIED", bound)
        self._echoed = len(self.binder.bindings)

    async def stop(self) -> None:
        await self.app.release()
        await self.app.close()


T = TypeVar("T")


def run_live(scenario: Callable[[LivePath], Awaitable[T]]) -> T:
    """Run `scenario` on a fresh LivePath in its own event loop, stopping the app afterwards."""

    async def main() -> T:
        with captured_logs() as logs:
            live = LivePath(logs)
            try:
                return await scenario(live)
            finally:
                await live.stop()

    return asyncio.run(main())
