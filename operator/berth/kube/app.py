"""Berth's live wiring: the scheduler, its API session, binder, reporter, metrics and leadership.

One `BerthApp` per process. kopf handlers (handlers.py) feed it watch events;
the leadership daemons (one per SchedulerProfile, stopped by kopf peering on
pause) switch its scheduling loop on and off.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from berth.engine.errors import InvalidObjectError
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.kube.api import ApiSession
from berth.kube.observer import PrometheusObserver
from berth.scheduling.loop import Scheduler
from berth.scheduling.ports import Binder, MonotonicClock, Preemptor, Reporter

logger = logging.getLogger(__name__)


T = TypeVar("T")


def _readable(parse: Callable[[dict[str, Any]], T], raw: dict[str, Any]) -> T | None:
    """The parsed object, or None after a warning: one malformed object never stops the rest."""
    try:
        return parse(raw)
    except InvalidObjectError as error:
        logger.warning("Ignoring an object Berth cannot read: %s", error)
        return None


@dataclass(frozen=True, slots=True)
class Settings:
    """Global settings of one Berth process (flags, environment, config file)."""

    metrics_host: str = "0.0.0.0"
    metrics_port: int = 10260
    parallel_binds: int = 64
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    pod_max_in_unschedulable_seconds: float = 300.0
    percentage_of_nodes_to_score: int = 0
    peering_name: str = "berth"
    peering_lifetime_seconds: int = 15
    standalone: bool = False
    priority: int | None = None  # None: derived from the pod IP or identity
    identity: str = ""
    kubeconfig: str = ""
    seed: int | None = None  # tie-break RNG seed; None = random

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(slots=True)
class Leadership:
    """Counts running leadership daemons; the loop runs while at least one does."""

    holders: int = 0
    changes: list[bool] = field(default_factory=list)


class BerthApp:
    def __init__(
        self,
        *,
        settings: Settings,
        session: ApiSession,
        binder: Binder,
        reporter: Reporter,
        metrics: PrometheusObserver | None = None,
        preemptor: Preemptor | None = None,
    ) -> None:
        self.settings = settings
        self.session = session
        self.reporter = reporter
        self.metrics = metrics
        self.scheduler = Scheduler(
            binder=binder,
            reporter=reporter,
            clock=MonotonicClock(),
            rng=random.Random(settings.seed),
            observer=metrics,
            preemptor=preemptor,
            max_binds_in_flight=settings.parallel_binds,
            initial_backoff=settings.pod_initial_backoff_seconds,
            max_backoff=settings.pod_max_backoff_seconds,
            max_in_unschedulable=settings.pod_max_in_unschedulable_seconds,
            percentage_of_nodes_to_score=settings.percentage_of_nodes_to_score,
        )
        self.leadership = Leadership()
        self._loop_task: asyncio.Task[None] | None = None
        self._transition = asyncio.Lock()
        self.synced = False

    # ------------------------------------------------------------------ watch intake (never raises)

    def on_pod_event(self, event_type: str | None, raw: dict[str, Any]) -> None:
        pod = _readable(Pod.from_dict, raw)
        if pod is None:
            return
        if event_type == "DELETED":
            self.scheduler.on_pod_deleted(pod)
        else:
            self.scheduler.on_pod(pod)

    def on_node_event(self, event_type: str | None, raw: dict[str, Any]) -> None:
        if event_type == "DELETED":
            metadata = raw.get("metadata")
            name = metadata.get("name") if isinstance(metadata, Mapping) else None
            if isinstance(name, str) and name:
                self.scheduler.on_node_deleted(name)
            else:
                logger.warning("Ignoring a deleted Node without a readable metadata.name")
            return
        node = _readable(Node.from_dict, raw)
        if node is not None:
            self.scheduler.on_node(node)

    # ------------------------------------------------------------------ leadership

    async def acquire(self) -> None:
        """A leadership daemon started: on the first, converge the cache and start the loop."""
        async with self._transition:
            self.leadership.holders += 1
            if self.leadership.holders > 1:
                return
            await self._reconcile_from_api()
            self.scheduler.activate()
            self._loop_task = asyncio.create_task(
                self.scheduler.run(), name="berth-scheduling-loop"
            )
            self.leadership.changes.append(True)
            if self.metrics is not None:
                self.metrics.leader(True)
            logger.info("Leading: the scheduling loop runs")

    async def release(self) -> None:
        async with self._transition:
            self.leadership.holders = max(0, self.leadership.holders - 1)
            if self.leadership.holders:
                return
            self.scheduler.deactivate()
            if self._loop_task is not None:
                self._loop_task.cancel()
                await asyncio.gather(self._loop_task, return_exceptions=True)
                self._loop_task = None
            self.leadership.changes.append(False)
            if self.metrics is not None:
                self.metrics.leader(False)
            logger.info("Standing by: the scheduling loop is paused")

    @property
    def leading(self) -> bool:
        return self.leadership.holders > 0

    async def _reconcile_from_api(self) -> None:
        """List nodes and non-terminal pods: a resumed watch never reports what vanished meanwhile."""
        self.scheduler.begin_listing()
        nodes_raw, _ = await self.session.list_json("/api/v1/nodes")
        pods_raw, _ = await self.session.list_json(
            "/api/v1/pods", params={"fieldSelector": "status.phase!=Succeeded,status.phase!=Failed"}
        )
        nodes = [node for raw in nodes_raw if (node := _readable(Node.from_dict, raw)) is not None]
        pods = [pod for raw in pods_raw if (pod := _readable(Pod.from_dict, raw)) is not None]
        self.scheduler.reconcile(nodes, pods)
        self.synced = True

    async def close(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            await asyncio.gather(self._loop_task, return_exceptions=True)
        await self.scheduler.drain_binds()
