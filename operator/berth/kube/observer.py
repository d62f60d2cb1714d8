"""The scheduling layer's observer hooks, backed by Berth's Prometheus metrics."""

from __future__ import annotations

from berth.kube.metrics import SchedulerMetrics


class PrometheusObserver:
    """Implements `berth.scheduling.ports.SchedulingObserver` (plus leadership) on `SchedulerMetrics`."""

    def __init__(self, metrics: SchedulerMetrics) -> None:
        self.metrics = metrics
        self._unschedulable_seen: set[tuple[str, str]] = set()

    def attempt(self, *, result: str, profile: str, seconds: float) -> None:
        self.metrics.observe_attempt(result, profile, seconds)

    def algorithm(self, *, seconds: float) -> None:
        self.metrics.observe_algorithm(seconds)

    def scheduled(self, *, attempts: int, seconds_since_first_attempt: float) -> None:
        self.metrics.observe_pod_scheduled(
            attempts=attempts, sli_seconds=seconds_since_first_attempt
        )

    def pending(self, counts: dict[str, int]) -> None:
        self.metrics.set_pending_pods(counts)

    def cache_size(self, *, nodes: int, pods: int, assumed: int) -> None:
        self.metrics.set_cache_size(nodes=nodes, pods=pods, assumed_pods=assumed)

    def permit_wait(self, *, result: str, seconds: float) -> None:
        self.metrics.permit_wait_duration.labels(result=result).observe(seconds)

    def preemption(self, *, victims: int | None) -> None:
        self.metrics.observe_preemption(victims)

    def cycle(
        self,
        *,
        profile: str,
        points: list[tuple[str, str, float]],
        plugins: list[tuple[str, str, str, float]],
    ) -> None:
        for point, status, seconds in points:
            self.metrics.observe_extension_point(point, status, profile, seconds)
        for plugin, point, status, seconds in plugins:
            self.metrics.observe_plugin(plugin, point, status, seconds)

    def incoming(self, queue: str, event: str) -> None:
        self.metrics.count_incoming(queue, event)

    def unschedulable(self, counts: dict[tuple[str, str], int]) -> None:
        by_profile: dict[str, dict[str, int]] = {}
        # Series that dropped out are set to 0 rather than left at their last value.
        for profile, plugin in self._unschedulable_seen - counts.keys():
            by_profile.setdefault(profile, {})[plugin] = 0
        self._unschedulable_seen = set(counts)
        for (profile, plugin), count in counts.items():
            by_profile.setdefault(profile, {})[plugin] = count
        for profile, plugin_counts in by_profile.items():
            self.metrics.set_unschedulable(profile, plugin_counts)

    def leader(self, leading: bool) -> None:
        self.metrics.set_leader(leading)
