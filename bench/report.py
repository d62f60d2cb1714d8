"""Results of a benchmark session: the JSON file, the Markdown table and the throughput plot.

Per workload and scheduler the median over the valid trials (status ok) is
reported; voided, timed-out and failed trials are counted and never enter a
median. The headline ratios are Berth / kube-scheduler and Berth / C (the
null binder) of the Average SchedulingThroughput, and Berth / kube-scheduler
of the p99 creation->bound latency (lower is better), each with its
geometric mean over the workloads.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.metrics import geometric_mean

__all__ = ["machine_description", "summarize", "write_markdown", "write_plot"]

BERTH, KUBE, NULL = "berth", "kube-scheduler", "null-binder"


def machine_description() -> dict[str, Any]:
    cpu_model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_kib = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_kib = int(line.split()[1])
    except OSError:
        pass
    go = subprocess.run(["go", "version"], capture_output=True, text=True, check=False)
    return {
        "cpus": os.cpu_count(),
        "cpu_model": cpu_model,
        "memory_gib": round(memory_kib / 2**20, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "go": go.stdout.strip() if go.returncode == 0 else "",
        "load_average_at_start": os.getloadavg(),
        "etcd_data": "tmpfs (/dev/shm), --unsafe-no-fsync",
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "shared": "2 cores shared with other engineers' test runs: numbers are noisy",
    }


def _median(trials: Sequence[dict[str, Any]], read: Callable[[dict[str, Any]], Any]) -> Any:
    values = [v for v in (read(t) for t in trials) if v is not None]
    return statistics.median(values) if values else None


def summarize(trials: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """workload -> scheduler -> medians over valid trials and status counts."""
    grouped: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for trial in trials:
        grouped.setdefault(trial["workload"], {}).setdefault(trial["scheduler"], []).append(trial)
    summary: dict[str, dict[str, dict[str, Any]]] = {}
    for workload, by_scheduler in grouped.items():
        summary[workload] = {}
        for scheduler, runs in by_scheduler.items():
            valid = [t for t in runs if t["status"] == "ok" and t["throughput"]]
            statuses: dict[str, int] = {}
            for run in runs:
                statuses[run["status"]] = statuses.get(run["status"], 0) + 1
            summary[workload][scheduler] = {
                "trials": len(runs),
                "statuses": statuses,
                "average": _median(valid, lambda t: t["throughput"]["average"]),
                "averages": [t["throughput"]["average"] for t in valid],
                "perc50": _median(valid, lambda t: t["throughput"]["perc50"]),
                "perc90": _median(valid, lambda t: t["throughput"]["perc90"]),
                "perc99": _median(valid, lambda t: t["throughput"]["perc99"]),
                "makespan": _median(valid, lambda t: t["makespan_seconds"]),
                "latency_p50": _median(valid, lambda t: (t["latency_seconds"] or {}).get("p50")),
                "latency_p99": _median(valid, lambda t: (t["latency_seconds"] or {}).get("p99")),
                "cpu_per_1000": _median(valid, lambda t: t["cpu_seconds_per_1000_pods"]),
                "peak_rss_mib": _median(
                    valid, lambda t: t["peak_rss_bytes"] / 2**20 if t["peak_rss_bytes"] else None
                ),
                **{
                    f"drain_{key}": _median(
                        valid, lambda t, key=key: (t.get("drain") or {}).get(key)
                    )
                    for key in ("first_bind_seconds", "last_bind_seconds", "pods_per_second")
                },
            }
    return summary


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def headline(summary: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    rows = {}
    for workload, by_scheduler in summary.items():
        berth = by_scheduler.get(BERTH, {})
        kube = by_scheduler.get(KUBE, {})
        null = by_scheduler.get(NULL, {})
        # A backlog drain is compared by its drain rate, every other workload by its Average.
        rate = "drain_pods_per_second" if berth.get("drain_pods_per_second") else "average"
        rows[workload] = {
            "berth_vs_kube": _ratio(berth.get(rate), kube.get(rate)),
            "berth_vs_c": _ratio(berth.get(rate), null.get(rate)),
            "kube_vs_c": _ratio(kube.get(rate), null.get(rate)),
            "p99_latency_berth_vs_kube": _ratio(berth.get("latency_p99"), kube.get("latency_p99")),
        }
    means = {
        key: geometric_mean(r[key] for r in rows.values() if r[key] is not None)
        for key in ("berth_vs_kube", "berth_vs_c", "kube_vs_c", "p99_latency_berth_vs_kube")
    }
    return {"rows": rows, "geometric_means": means}


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _cell(entry: dict[str, Any], key: str, digits: int = 1) -> str:
    text = _fmt(entry.get(key), digits)
    bad = {k: v for k, v in (entry.get("statuses") or {}).items() if k != "ok"}
    if bad:
        text += " (" + ", ".join(f"{v} {k}" for k, v in sorted(bad.items())) + ")"
    return text


def write_markdown(
    path: Path,
    *,
    title: str,
    machine: dict[str, Any],
    summary: dict[str, dict[str, dict[str, Any]]],
    notes: Sequence[str],
) -> None:
    heads = headline(summary)
    lines = [f"# {title}", ""]
    lines.append(
        f"Machine: {machine['cpus']} CPUs ({machine['cpu_model']}), {machine['memory_gib']} GiB, "
        f"Linux {machine['kernel']}, Python {machine['python']}; etcd data {machine['etcd_data']}; "
        f"load average at start {', '.join(f'{x:.2f}' for x in machine['load_average_at_start'])}; "
        f"{machine['date']}. {machine['shared']}."
    )
    lines += [
        "",
        "## Headline (median of valid trials; ratios of Average SchedulingThroughput)",
        "",
    ]
    lines.append(
        "| workload | Berth / kube-scheduler | Berth / C | kube-scheduler / C "
        "| p99 latency Berth / kube-scheduler |"
    )
    lines.append("|---|---:|---:|---:|---:|")
    for workload, row in heads["rows"].items():
        lines.append(
            f"| {workload} | {_fmt(row['berth_vs_kube'])} | {_fmt(row['berth_vs_c'])} "
            f"| {_fmt(row['kube_vs_c'])} | {_fmt(row['p99_latency_berth_vs_kube'])} |"
        )
    means = heads["geometric_means"]
    lines.append(
        f"| **geometric mean** | **{_fmt(means['berth_vs_kube'])}** | **{_fmt(means['berth_vs_c'])}** "
        f"| **{_fmt(means['kube_vs_c'])}** | **{_fmt(means['p99_latency_berth_vs_kube'])}** |"
    )
    lines += ["", "## Per scheduler", ""]
    lines.append(
        "| workload | scheduler | trials | Average pods/s | P50 | P90 | P99 | makespan s "
        "| latency p50 s | latency p99 s | CPU s / 1000 pods | peak RSS MiB |"
    )
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for workload, by_scheduler in summary.items():
        for scheduler in (KUBE, BERTH, NULL):
            entry = by_scheduler.get(scheduler)
            if entry is None:
                continue
            lines.append(
                f"| {workload} | {scheduler if scheduler != NULL else 'null binder (C)'} "
                f"| {entry['trials']} | {_cell(entry, 'average')} | {_fmt(entry['perc50'], 1)} "
                f"| {_fmt(entry['perc90'], 1)} | {_fmt(entry['perc99'], 1)} "
                f"| {_fmt(entry['makespan'], 1)} | {_fmt(entry['latency_p50'])} "
                f"| {_fmt(entry['latency_p99'])} | {_fmt(entry['cpu_per_1000'])} "
                f"| {_fmt(entry['peak_rss_mib'], 0)} |"
            )
    drains = [
        (workload, scheduler, entry)
        for workload, by_scheduler in summary.items()
        for scheduler in (KUBE, BERTH, NULL)
        if (entry := by_scheduler.get(scheduler)) and entry.get("drain_pods_per_second")
    ]
    if drains:
        lines += ["", "## Backlog drain (seconds from the scheduler's launch)", ""]
        lines.append(
            "| workload | scheduler | first bind s | last bind s | pods/s | CPU s / 1000 pods "
            "| peak RSS MiB |"
        )
        lines.append("|---|---|---:|---:|---:|---:|---:|")
        for workload, scheduler, entry in drains:
            lines.append(
                f"| {workload} | {scheduler} | {_fmt(entry['drain_first_bind_seconds'])} "
                f"| {_fmt(entry['drain_last_bind_seconds'])} "
                f"| {_fmt(entry['drain_pods_per_second'], 1)} | {_fmt(entry['cpu_per_1000'])} "
                f"| {_fmt(entry['peak_rss_mib'], 0)} |"
            )
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- {note}" for note in notes]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_plot(path: Path, trials: Sequence[dict[str, Any]]) -> bool:
    """Binds per second over the measured phase, one panel per workload; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    workloads = list(dict.fromkeys(t["workload"] for t in trials))
    figure, axes = plt.subplots(len(workloads), 1, figsize=(9, 3.2 * len(workloads)), squeeze=False)
    styles = {
        KUBE: ("tab:blue", "kube-scheduler"),
        BERTH: ("tab:red", "Berth"),
        NULL: ("0.5", "C (null binder)"),
    }
    for axis, workload in zip(axes[:, 0], workloads, strict=True):
        for scheduler, (color, label) in styles.items():
            runs = [
                t
                for t in trials
                if t["workload"] == workload
                and t["scheduler"] == scheduler
                and t["binds_per_second"]
            ]
            for index, run in enumerate(runs):
                series = run["binds_per_second"]
                axis.plot(
                    [i + 0.5 for i in range(len(series))],
                    series,
                    color=color,
                    alpha=1.0 if index == 0 else 0.4,
                    label=label if index == 0 else None,
                    marker="o",
                    markersize=3,
                )
        axis.set_title(workload)
        axis.set_xlabel("seconds since the first measured pod was created")
        axis.set_ylabel("pods bound / s")
        axis.grid(alpha=0.3)
        axis.legend(loc="best", fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return True


def write_json(path: Path, document: dict[str, Any]) -> None:
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    temporary.replace(path)
