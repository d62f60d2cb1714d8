"""Per-decision scratch space shared by the plugins of one scheduling cycle."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from berth.engine.cluster import ClusterState
from berth.engine.framework.status import Status

T = TypeVar("T")


@dataclass(slots=True)
class CycleMetrics:
    """Durations of one cycle, for kube-scheduler's framework and plugin metrics.

    The clock is passed in (the engine has none of its own). Extension points are
    always timed; single plugins only on sampled cycles, as kube-scheduler samples
    10% of them, because timing every plugin call costs more than some plugins.
    """

    clock: Callable[[], float]
    sample_plugins: bool = False
    points: list[tuple[str, str, float]] = field(default_factory=list)  # point, status, seconds
    plugins: list[tuple[str, str, str, float]] = field(default_factory=list)  # + plugin first

    def point_done(self, point: str, status: str, started: float) -> None:
        """An extension point that began at `started` (this clock) ended with `status`."""
        self.points.append((point, status, self.clock() - started))

    def plugin_done(self, plugin: str, point: str, status: str, started: float) -> None:
        self.plugins.append((plugin, point, status, self.clock() - started))


class PointTimer:
    """Times one extension point: started when made, stopped when called with the point's
    status, which it returns (so a `return timer(status)` both records and answers)."""

    __slots__ = ("_metrics", "_point", "_started")

    def __init__(self, metrics: CycleMetrics | None, point: str) -> None:
        self._metrics = metrics
        self._point = point
        self._started = metrics.clock() if metrics is not None else 0.0

    def __call__(self, status: Status) -> Status:
        if self._metrics is not None:
            self._metrics.point_done(self._point, status.code.label, self._started)
        return status


class CycleState:
    """Holds the cluster snapshot of this cycle and what plugins computed in PreFilter/PreScore.

    Each plugin writes under its own name; nothing survives the cycle.
    """

    def __init__(self, cluster: ClusterState, metrics: CycleMetrics | None = None) -> None:
        self.cluster = cluster
        self.metrics = metrics
        self._data: dict[str, object] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()

    def write(self, key: str, value: object) -> None:
        self._data[key] = value

    def read(self, key: str, kind: type[T]) -> T:
        value = self._data.get(key)
        if not isinstance(value, kind):
            raise LookupError(f"cycle state has no {kind.__name__} under {key!r}")
        return value

    @property
    def plugin_timer(self) -> CycleMetrics | None:
        """The metrics to record single plugin calls into, on sampled cycles only."""
        metrics = self.metrics
        return metrics if metrics is not None and metrics.sample_plugins else None

    def get(self, key: str, kind: type[T]) -> T | None:
        value = self._data.get(key)
        return value if isinstance(value, kind) else None
