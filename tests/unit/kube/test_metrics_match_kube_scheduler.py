"""Metric names, types, labels and buckets are kube-scheduler's (pkg/scheduler/metrics)."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from berth.kube.metrics import SchedulerMetrics, attempts_label, exponential_buckets


def _families(metrics: SchedulerMetrics) -> dict[str, tuple[str, set[str]]]:
    """name -> (type, label names) from the text exposition."""
    found: dict[str, tuple[str, set[str]]] = {}
    for family in text_string_to_metric_families(metrics.render().decode()):
        labels: set[str] = set()
        for sample in family.samples:
            labels |= set(sample.labels) - {"le"}
        found[family.name] = (family.type, labels)
    return found


def _populated() -> SchedulerMetrics:
    metrics = SchedulerMetrics()
    metrics.observe_attempt("scheduled", "berth", 0.004)
    metrics.observe_algorithm(0.002)
    metrics.observe_pod_scheduled(attempts=2, sli_seconds=0.5)
    metrics.observe_extension_point("Filter", "Success", "berth", 0.0002)
    metrics.observe_plugin("NodeResourcesFit", "Filter", "Success", 0.00002)
    metrics.count_incoming("active", "PodAdd")
    metrics.observe_preemption(victims=2)
    metrics.set_cache_size(nodes=3, pods=10, assumed_pods=1)
    metrics.set_unschedulable("berth", {"NodeResourcesFit": 4})
    metrics.observe_binding("bound", 0.01)
    metrics.set_leader(True)
    return metrics


@pytest.mark.parametrize(
    ("name", "kind", "labels"),
    [
        ("scheduler_schedule_attempts", "counter", {"result", "profile"}),
        ("scheduler_scheduling_attempt_duration_seconds", "histogram", {"result", "profile"}),
        ("scheduler_scheduling_algorithm_duration_seconds", "histogram", set()),
        ("scheduler_pending_pods", "gauge", {"queue"}),
        ("scheduler_pod_scheduling_sli_duration_seconds", "histogram", {"attempts"}),
        ("scheduler_pod_scheduling_attempts", "histogram", set()),
        (
            "scheduler_framework_extension_point_duration_seconds",
            "histogram",
            {"extension_point", "status", "profile"},
        ),
        (
            "scheduler_plugin_execution_duration_seconds",
            "histogram",
            {"plugin", "extension_point", "status"},
        ),
        ("scheduler_queue_incoming_pods", "counter", {"queue", "event"}),
        ("scheduler_preemption_attempts", "counter", set()),
        ("scheduler_preemption_victims", "histogram", set()),
        ("scheduler_cache_size", "gauge", {"type"}),
        ("scheduler_unschedulable_pods", "gauge", {"plugin", "profile"}),
        ("berth_binding_duration_seconds", "histogram", {"result"}),
        ("berth_bindings_in_flight", "gauge", set()),
        ("berth_leader", "gauge", set()),
    ],
)
def test_every_metric_has_kube_schedulers_name_type_and_labels(
    name: str, kind: str, labels: set[str]
) -> None:
    assert _families(_populated())[name] == (kind, labels)


def test_counters_are_exposed_with_the_total_suffix() -> None:
    text = _populated().render().decode()
    assert 'scheduler_schedule_attempts_total{profile="berth",result="scheduled"} 1.0' in text
    assert "scheduler_preemption_attempts_total 1.0" in text
    assert 'scheduler_queue_incoming_pods_total{event="PodAdd",queue="active"} 1.0' in text


@pytest.mark.parametrize(
    ("metric", "labels", "start", "factor", "count"),
    [
        (
            "scheduler_scheduling_attempt_duration_seconds",
            {"result": "scheduled", "profile": "berth"},
            0.001,
            2,
            15,
        ),
        ("scheduler_scheduling_algorithm_duration_seconds", {}, 0.001, 2, 15),
        ("scheduler_pod_scheduling_sli_duration_seconds", {"attempts": "2"}, 0.01, 2, 20),
        ("scheduler_pod_scheduling_attempts", {}, 1, 2, 5),
        (
            "scheduler_framework_extension_point_duration_seconds",
            {"extension_point": "Filter", "status": "Success", "profile": "berth"},
            0.0001,
            2,
            12,
        ),
        (
            "scheduler_plugin_execution_duration_seconds",
            {"plugin": "NodeResourcesFit", "extension_point": "Filter", "status": "Success"},
            0.00001,
            1.5,
            20,
        ),
        ("scheduler_preemption_victims", {}, 1, 2, 7),
    ],
)
def test_histogram_buckets_are_upstreams(
    metric: str, labels: dict[str, str], start: float, factor: float, count: int
) -> None:
    families = text_string_to_metric_families(_populated().render().decode())
    family = next(f for f in families if f.name == metric)
    bounds = [
        float(s.labels["le"])
        for s in family.samples
        if s.name.endswith("_bucket") and {k: v for k, v in s.labels.items() if k != "le"} == labels
    ]
    assert bounds == [*exponential_buckets(start, factor, count), float("inf")]


def test_exponential_buckets_multiply_step_by_step_like_go() -> None:
    assert exponential_buckets(0.001, 2, 4) == (0.001, 0.002, 0.004, 0.008)
    assert exponential_buckets(0.00001, 1.5, 3) == (0.00001, 0.00001 * 1.5, 0.00001 * 1.5 * 1.5)


@pytest.mark.parametrize(("attempts", "label"), [(1, "1"), (14, "14"), (15, "15+"), (99, "15+")])
def test_attempts_label_is_capped_at_15(attempts: int, label: str) -> None:
    assert attempts_label(attempts) == label


def test_pending_queues_exist_from_the_start_and_registries_are_separate() -> None:
    first, second = SchedulerMetrics(), SchedulerMetrics()
    first.set_pending_pods({"active": 5, "unschedulable": 2})

    sample = first.registry.get_sample_value
    assert sample("scheduler_pending_pods", {"queue": "active"}) == 5
    assert sample("scheduler_pending_pods", {"queue": "gated"}) == 0
    assert second.registry.get_sample_value("scheduler_pending_pods", {"queue": "active"}) == 0


def test_no_label_can_carry_a_pod_or_node_name() -> None:
    for _, labels in _families(_populated()).values():
        assert not labels & {"pod", "node", "namespace", "name"}
