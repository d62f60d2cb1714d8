"""The benchmark's metric maths: upstream's SchedulingThroughput sampling and percentiles."""

from __future__ import annotations

import math

import pytest
from bench.metrics import (
    geometric_mean,
    nearest_rank,
    per_interval_counts,
    summarize_latencies,
    summarize_throughput,
    throughput_samples,
)


@pytest.mark.parametrize(
    ("values", "percent", "expected"),
    [
        ([1.0], 50, 1.0),
        ([1.0, 2.0], 50, 1.0),
        ([1.0, 2.0, 3.0, 4.0], 50, 2.0),
        ([1.0, 2.0, 3.0, 4.0], 90, 4.0),
        ([float(v) for v in range(1, 101)], 99, 99.0),
        ([float(v) for v in range(1, 101)], 100, 100.0),
    ],
    ids=["single", "two-median-is-lower", "four-p50", "four-p90", "hundred-p99", "p100"],
)
def test_nearest_rank_matches_upstream_index(
    values: list[float], percent: float, expected: float
) -> None:
    assert nearest_rank(values, percent) == expected


def test_first_non_empty_sample_is_dropped() -> None:
    # 10 binds in each of 4 seconds; ticks at 1, 2, 3, 4.
    binds = [second + (i + 0.5) / 10 for second in range(4) for i in range(10)]
    samples = throughput_samples(binds, start=0.0, end=4.0)
    assert samples == [10.0, 10.0, 10.0]


def test_ticks_before_any_bind_are_not_samples() -> None:
    binds = [2.5, 3.5, 4.5]
    # tick 1, 2: nothing bound; tick 3 is the dropped baseline; ticks 4, 5 record.
    assert throughput_samples(binds, start=0.0, end=5.0) == [1.0, 1.0]


def test_empty_windows_merge_into_next_and_repeat() -> None:
    # baseline at tick 1 (one bind), nothing in (1,2] and (2,3], 6 binds in (3,4].
    binds = [0.5, 3.1, 3.2, 3.3, 3.4, 3.5, 3.6]
    samples = throughput_samples(binds, start=0.0, end=4.0)
    assert samples == [2.0, 2.0, 2.0]


def test_partial_last_window_is_not_sampled() -> None:
    binds = [0.5, 1.5, 2.2]
    assert throughput_samples(binds, start=0.0, end=2.5) == [1.0]


def test_summary_average_and_percentiles() -> None:
    summary = summarize_throughput([30.0, 10.0, 20.0, 40.0])
    assert summary is not None
    assert summary.average == 25.0
    assert (summary.perc50, summary.perc90, summary.perc99) == (20.0, 40.0, 40.0)
    assert summary.samples == 4
    assert summarize_throughput([]) is None


def test_latency_summary() -> None:
    summary = summarize_latencies([0.3, 0.1, 0.2])
    assert summary is not None
    assert (summary.p50, summary.p99, summary.max, summary.count) == (0.2, 0.3, 0.3, 3)
    assert summarize_latencies([]) is None


def test_per_interval_counts_ignores_events_before_start() -> None:
    assert per_interval_counts([0.5, 10.1, 10.2, 12.9], start=10.0) == [2, 0, 1]


def test_geometric_mean() -> None:
    result = geometric_mean([2.0, 8.0])
    assert result is not None
    assert math.isclose(result, 4.0)
    assert geometric_mean([]) is None
    assert geometric_mean([1.0, 0.0]) is None
