"""Pure metric maths of the side-by-side benchmark: no I/O, no clocks, no processes.

Every scheduler under test is judged by the same functions over the same kind of
input (timestamps the driver took from its own watch), so the numbers are
comparable by construction. SchedulingThroughput follows scheduler_perf's
throughputCollector (test/integration/scheduler_perf/util.go): a 1-s ticker, the
first non-empty sample discarded, empty windows merged into the next non-empty
one and recorded once per window covered, then sorted with nearest-rank
percentiles.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "SAMPLE_INTERVAL_SECONDS",
    "LatencySummary",
    "ThroughputSummary",
    "geometric_mean",
    "nearest_rank",
    "per_interval_counts",
    "summarize_latencies",
    "summarize_throughput",
    "throughput_samples",
]

SAMPLE_INTERVAL_SECONDS = 1.0


@dataclass(frozen=True)
class ThroughputSummary:
    """SchedulingThroughput in pods/s, as scheduler_perf reports it."""

    average: float
    perc50: float
    perc90: float
    perc95: float
    perc99: float
    samples: int


@dataclass(frozen=True)
class LatencySummary:
    """Creation -> bound latency of the measured pods, in seconds."""

    p50: float
    p90: float
    p99: float
    max: float
    count: int


def nearest_rank(sorted_values: Sequence[float], percent: float) -> float:
    """Upstream's percentile: element ceil(n * p / 100) - 1 of the sorted values."""
    if not sorted_values:
        raise ValueError("no values")
    index = max(0, math.ceil(len(sorted_values) * percent / 100) - 1)
    return sorted_values[index]


def throughput_samples(
    bind_times: Iterable[float],
    *,
    start: float,
    end: float,
    interval: float = SAMPLE_INTERVAL_SECONDS,
) -> list[float]:
    """The per-window rates upstream's collector would record for these bind times.

    The ticker starts at `start` (when the measured pods start being created)
    and fires every `interval` until `end` (when the last measured pod was
    seen bound; upstream stops the collector then, so the last partial window
    is not sampled). At a tick, nothing happens while no pod is bound yet; the
    first tick with bound pods only sets the baseline (dropped sample); a tick
    with no new binds is skipped and its window merged into the next non-empty
    one, whose rate is then recorded once for every window it covered.
    """
    times = sorted(bind_times)
    samples: list[float] = []
    cursor = 0  # binds at or before the current tick
    started = False
    last_count = 0
    last_tick = start
    skipped = 0
    tick_index = 1
    while True:
        tick = start + tick_index * interval
        if tick > end + 1e-9:
            return samples
        tick_index += 1
        while cursor < len(times) and times[cursor] <= tick:
            cursor += 1
        if cursor == 0:
            continue
        if not started:
            started = True
            last_count, last_tick = cursor, tick
            continue
        new = cursor - last_count
        if new == 0:
            skipped += 1
            continue
        rate = new / (tick - last_tick)
        samples.extend([rate] * (skipped + 1))
        last_count, last_tick, skipped = cursor, tick, 0


def summarize_throughput(samples: Sequence[float]) -> ThroughputSummary | None:
    """Average and nearest-rank percentiles of the samples; None when there are none
    (upstream logs a warning then: the workload finished in under about a second)."""
    if not samples:
        return None
    ordered = sorted(samples)
    return ThroughputSummary(
        average=sum(ordered) / len(ordered),
        perc50=nearest_rank(ordered, 50),
        perc90=nearest_rank(ordered, 90),
        perc95=nearest_rank(ordered, 95),
        perc99=nearest_rank(ordered, 99),
        samples=len(ordered),
    )


def summarize_latencies(latencies: Iterable[float]) -> LatencySummary | None:
    ordered = sorted(latencies)
    if not ordered:
        return None
    return LatencySummary(
        p50=nearest_rank(ordered, 50),
        p90=nearest_rank(ordered, 90),
        p99=nearest_rank(ordered, 99),
        max=ordered[-1],
        count=len(ordered),
    )


def per_interval_counts(
    times: Iterable[float], *, start: float, interval: float = SAMPLE_INTERVAL_SECONDS
) -> list[int]:
    """How many events fell into each `interval` after `start` (for plots; the last
    bucket may be partial). Events before `start` are ignored."""
    counts: list[int] = []
    for moment in times:
        if moment < start:
            continue
        bucket = int((moment - start) // interval)
        if bucket >= len(counts):
            counts.extend([0] * (bucket + 1 - len(counts)))
        counts[bucket] += 1
    return counts


def geometric_mean(values: Iterable[float]) -> float | None:
    """Geometric mean of positive values; None if there are none (or any is not positive)."""
    logs = []
    for value in values:
        if not value > 0:
            return None
        logs.append(math.log(value))
    if not logs:
        return None
    return math.exp(sum(logs) / len(logs))
