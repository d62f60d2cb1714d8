"""Prometheus metrics under kube-scheduler's names, labels and buckets.

Dashboards and alerts written for kube-scheduler (`scheduler_*`, see
pkg/scheduler/metrics/metrics.go) work on Berth unchanged. Berth's own
metrics are prefixed `berth_`. Everything lives on a dedicated
CollectorRegistry so tests and several instances in one process never
collide, and no label ever carries a pod or node name (bounded cardinality).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

__all__ = [
    "CONTENT_TYPE_LATEST",
    "LEASE_FENCED_WRITES",
    "PENDING_QUEUES",
    "SCHEDULE_RESULTS",
    "SchedulerMetrics",
    "attempts_label",
    "exponential_buckets",
]

SCHEDULE_RESULTS = ("scheduled", "unschedulable", "error")
PENDING_QUEUES = ("active", "backoff", "unschedulable", "gated")
LEASE_FENCED_WRITES = ("binding", "nomination", "disruption-condition", "eviction")


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """client_golang's ExponentialBuckets, multiplied step by step so the floats match Go's."""
    buckets = []
    for _ in range(count):
        buckets.append(start)
        start *= factor
    return tuple(buckets)


def attempts_label(attempts: int) -> str:
    """kube-scheduler caps the `attempts` label at "15+" to bound cardinality."""
    return "15+" if attempts >= 15 else str(attempts)


class SchedulerMetrics:
    """All of Berth's metrics with small record methods; `render()` gives the text format."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry(auto_describe=True)
        r = self.registry
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
            "could not be scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            registry=r,
        )
        self.scheduling_attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.scheduling_algorithm_duration = Histogram(
            "scheduler_scheduling_algorithm_duration_seconds",
            "Scheduling algorithm latency in seconds",
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.pending_pods = Gauge(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type. 'active' means number of pods in "
            "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number "
            "of pods in unschedulablePods that the scheduler attempted to schedule and failed; "
            "'gated' is the number of unschedulable pods that the scheduler never attempted to "
            "schedule because they are gated.",
            ["queue"],
            registry=r,
        )
        self.pod_scheduling_sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling "
            "queue and might involve multiple scheduling attempts.",
            ["attempts"],
            buckets=exponential_buckets(0.01, 2, 20),
            registry=r,
        )
        self.pod_scheduling_attempts = Histogram(
            "scheduler_pod_scheduling_attempts",
            "Number of attempts to successfully schedule a pod.",
            buckets=exponential_buckets(1, 2, 5),
            registry=r,
        )
        self.framework_extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"],
            buckets=exponential_buckets(0.0001, 2, 12),
            registry=r,
        )
        self.permit_wait_duration = Histogram(
            "scheduler_permit_wait_duration_seconds",
            "Duration of waiting on permit.",
            ["result"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.plugin_execution_duration = Histogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"],
            buckets=exponential_buckets(0.00001, 1.5, 20),
            registry=r,
        )
        self.queue_incoming_pods = Counter(
            "scheduler_queue_incoming_pods",
            "Number of pods added to scheduling queues by event and queue type.",
            ["queue", "event"],
            registry=r,
        )
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts",
            "Total preemption attempts in the cluster till now",
            registry=r,
        )
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims",
            "Number of selected preemption victims",
            buckets=exponential_buckets(1, 2, 7),
            registry=r,
        )
        self.cache_size = Gauge(
            "scheduler_cache_size",
            "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
            ["type"],
            registry=r,
        )
        self.unschedulable_pods = Gauge(
            "scheduler_unschedulable_pods",
            "The number of unschedulable pods broken down by plugin name. A pod will increment "
            "the gauge for all plugins that caused it to not schedule and so this metric have "
            "meaning only when broken down by plugin.",
            ["plugin", "profile"],
            registry=r,
        )
        self.binding_duration = Histogram(
            "berth_binding_duration_seconds",
            "Latency of one Binding POST to the API server, by outcome "
            "(bound, conflict, gone, failed).",
            ["result"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.bindings_in_flight = Gauge(
            "berth_bindings_in_flight",
            "Binding requests sent and not yet answered.",
            registry=r,
        )
        self.leader = Gauge(
            "berth_leader",
            "1 while this replica schedules: kopf peering has it active and it holds the Lease.",
            registry=r,
        )
        self.lease_refused_writes = Counter(
            "berth_lease_refused_writes_total",
            "Writes not sent because this replica did not hold the Lease at that moment, by "
            "write (binding, nomination, disruption-condition, eviction).",
            ["write"],
            registry=r,
        )
        # Labelled children by (metric, label values): prometheus_client's labels() builds
        # and locks on every call, and the scheduling loop records several per pod.
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}
        for write in LEASE_FENCED_WRITES:
            self.lease_refused_writes.labels(write=write)
        for queue in PENDING_QUEUES:  # present from the start, as in kube-scheduler
            self.pending_pods.labels(queue=queue).set(0)

    # -- record methods (names follow what the scheduling layer does) -----------------------

    def observe_attempt(self, result: str, profile: str, seconds: float) -> None:
        """One scheduling attempt ended: result is scheduled, unschedulable or error."""
        self._child(self.schedule_attempts, result, profile).inc()
        self._child(self.scheduling_attempt_duration, result, profile).observe(seconds)

    def observe_algorithm(self, seconds: float) -> None:
        self.scheduling_algorithm_duration.observe(seconds)

    def observe_pod_scheduled(self, *, attempts: int, sli_seconds: float) -> None:
        """A pod bound: its attempt count and the time since it first entered activeQ."""
        self.pod_scheduling_attempts.observe(attempts)
        sli = self._child(self.pod_scheduling_sli_duration, attempts_label(attempts))
        sli.observe(sli_seconds)

    def observe_extension_point(
        self, extension_point: str, status: str, profile: str, seconds: float
    ) -> None:
        self._child(
            self.framework_extension_point_duration, extension_point, status, profile
        ).observe(seconds)

    def observe_plugin(
        self, plugin: str, extension_point: str, status: str, seconds: float
    ) -> None:
        self._child(self.plugin_execution_duration, plugin, extension_point, status).observe(
            seconds
        )

    def set_pending_pods(self, counts: Mapping[str, int]) -> None:
        """Queue name (active, backoff, unschedulable, gated) -> number of pods."""
        for queue, count in counts.items():
            self._child(self.pending_pods, queue).set(count)

    def count_incoming(self, queue: str, event: str, count: int = 1) -> None:
        self._child(self.queue_incoming_pods, queue, event).inc(count)

    def observe_preemption(self, victims: int | None) -> None:
        """One preemption attempt; `victims` is None when no candidate node was found."""
        self.preemption_attempts.inc()
        if victims is not None:
            self.preemption_victims.observe(victims)

    def set_cache_size(self, *, nodes: int, pods: int, assumed_pods: int) -> None:
        self._child(self.cache_size, "nodes").set(nodes)
        self._child(self.cache_size, "pods").set(pods)
        self._child(self.cache_size, "assumed_pods").set(assumed_pods)

    def set_unschedulable(self, profile: str, counts: Mapping[str, int]) -> None:
        """Plugin name -> number of pods it currently rejects, for one profile."""
        for plugin, count in counts.items():
            self.unschedulable_pods.labels(plugin=plugin, profile=profile).set(count)

    def binding_started(self) -> None:
        self.bindings_in_flight.inc()

    def binding_finished(self) -> None:
        self.bindings_in_flight.dec()

    def observe_binding(self, result: str, seconds: float) -> None:
        self._child(self.binding_duration, result).observe(seconds)

    def set_leader(self, leading: bool) -> None:
        self.leader.set(1 if leading else 0)

    def count_lease_refused(self, write: str) -> None:
        self.lease_refused_writes.labels(write=write).inc()

    def _child(self, metric: Counter | Gauge | Histogram, *values: str) -> Any:
        """`metric.labels(*values)` (values in the metric's label order), remembered."""
        key = (id(metric), values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child

    def render(self) -> bytes:
        """The Prometheus text exposition of every metric in this registry."""
        return generate_latest(self.registry)
