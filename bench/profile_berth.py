"""Profile Berth with py-spy during the measured phase of one benchmark workload.

    python -m bench.profile_berth --workload SchedulingBasic/5000Nodes_5000Pods

Runs the same trial as the benchmark (bench/driver.py), attaches
`py-spy record` to the Berth process when the measured pods start being
created and stops it when the last one is bound, then prints the functions
with the largest share of the samples (own time and inclusive) and the stages
of a pod's path (bench/profile_stages.py) in milliseconds of CPU per pod. The
in-process probe (bench/probe/) adds the cyclic garbage collector's seconds,
which py-spy cannot see. py-spy (`pip install py-spy`) is not a project
dependency. Leaves the raw (collapsed-stack) profile, the top lists and the
trial next to the results; `--stem` names them (several runs side by side).
"""

from __future__ import annotations

import argparse
import atexit
import collections
import json
import logging
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.driver import run_trial
from bench.profile_stages import STAGES, Rule, stage_shares
from bench.schedulers import Berth, snapshot_berth_source
from bench.startup_stages import STARTUP_STAGES
from bench.workloads import WORKLOADS

RESULTS = Path(__file__).resolve().parent / "results"


def _frame_name(frame: str) -> str:
    # py-spy raw frames look like "function (path/to/module.py:123)"; drop the line number.
    name, _, location = frame.partition(" (")
    path = location.rsplit(":", 1)[0]
    for marker in ("/berth/", "site-packages/", "/lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{name} ({path})"


def analyse(raw: Path, top: int = 25) -> dict[str, list[tuple[str, float]]]:
    """Share of samples per function: own (leaf) time and inclusive time."""
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        frames = [_frame_name(f) for f in stack.split(";") if f and not f.startswith("process ")]
        frames = [f for f in frames if not f.startswith("thread ")]
        if not frames:
            continue
        total += count
        own[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
    return {
        "own": [(name, n / total) for name, n in own.most_common(top)],
        "inclusive": [(name, n / total) for name, n in inclusive.most_common(top)],
        "samples": [("total", float(total))],
    }


def _read_probe(path: Path) -> dict[str, Any]:
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return {}


# --stages: a pod's path in a running scheduler, or the start-up to the first decision.
STAGE_SETS: dict[str, tuple[tuple[tuple[str, Rule], ...], bool]] = {
    "pod": (STAGES, True),
    "startup": (STARTUP_STAGES, False),
}


def stage_table(
    raw: Path, *, cpu_seconds: float, pods: int, gc_seconds: float, stages: str = "pod"
) -> list[tuple[str, float, float]]:
    """(stage, share of active samples, ms of CPU per pod), the collector's time included."""
    rules, by_task = STAGE_SETS[stages]
    shares, _ = stage_shares(raw, rules, by_task=by_task)
    per_pod = cpu_seconds / pods * 1000
    rows = [(stage, share, share * per_pod) for stage, share in shares.items()]
    rows.append(
        ("of which the cyclic garbage collector (probe, CPU)", 0.0, gc_seconds / pods * 1000)
    )
    rows.append(("total (CPU of the process / measured pods)", 1.0, per_pod))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workload", default="SchedulingBasic/5000Nodes_5000Pods")
    parser.add_argument("--out", type=Path, default=RESULTS / "profiles")
    parser.add_argument("--stem", help="file stem of the outputs (default: from the workload)")
    parser.add_argument("--rate", type=int, default=100)
    parser.add_argument(
        "--stages",
        choices=sorted(STAGE_SETS),
        default="pod",
        help="stage table: a pod's path (default) or start-up (FirstDecision/500Nodes_1Pod)",
    )
    parser.add_argument(
        "--berth-source",
        default="HEAD",
        help="a git revision to profile a snapshot of (default HEAD), a directory holding "
        "operator/berth, or `worktree`",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.stem or args.workload.replace("/", "_")
    raw = args.out / f"{stem}.raw.txt"
    scratch = Path(tempfile.mkdtemp(prefix="berth-profile-"))
    atexit.register(shutil.rmtree, scratch, True)
    if Path(args.berth_source, "operator", "berth").is_dir():  # an unpacked source tree
        Berth.source = (Path(args.berth_source, "operator"), args.berth_source)
    elif args.berth_source != "worktree":
        commit = snapshot_berth_source(scratch / "src", args.berth_source)
        Berth.source = (scratch / "src" / "operator", commit)
    Berth.probe = scratch / "probe.json"
    recorder: list[subprocess.Popen[bytes]] = []
    probe: dict[str, dict[str, Any]] = {}

    launched: list[float] = []  # wall clock, to line the profile up with Berth's log

    def on_measured(phase: str, pid: int | None) -> None:
        probe[phase] = _read_probe(Berth.probe) if Berth.probe is not None else {}
        launched.append(time.time())
        if phase == "start" and pid is not None:
            recorder.append(
                subprocess.Popen(
                    [
                        *(py_spy, "record", "--pid", str(pid), "--rate", str(args.rate)),
                        *("--format", "raw", "--output", str(raw), "--nonblocking"),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        elif phase == "end" and recorder:
            recorder[0].send_signal(signal.SIGINT)
            recorder[0].wait(timeout=60)

    scheduler = Berth()

    def keep_log() -> None:
        # The control plane's run directory (and the log in it) goes with the trial.
        log = scheduler.log_path
        if log is not None and log.exists():
            shutil.copyfile(log, args.out / f"{stem}.berth.log")

    def on_phase(phase: str, pid: int | None) -> None:
        on_measured(phase, pid)
        if phase == "end":
            keep_log()

    result = run_trial(WORKLOADS[args.workload], scheduler, 0, on_measured=on_phase)
    per_generation = [
        (end - start, count_end - count_start)
        for end, start, count_end, count_start in zip(
            probe.get("end", {}).get("gc_seconds", [0.0] * 3),
            probe.get("start", {}).get("gc_seconds", [0.0] * 3),
            probe.get("end", {}).get("gc_collections", [0] * 3),
            probe.get("start", {}).get("gc_collections", [0] * 3),
            strict=True,
        )
    ]
    gc_seconds = sum(seconds for seconds, _ in per_generation)
    report: dict[str, Any] = dict(analyse(raw))
    report["trial"] = [
        ("status", result.status),
        ("average pods/s", (result.throughput or {}).get("average")),
        ("cpu s / 1000 pods", result.cpu_seconds_per_1000_pods),
        ("gc s / 1000 pods", gc_seconds / max(result.measured_pods, 1) * 1000),
        ("gc (seconds, collections) per generation", per_generation),
        ("peak RSS MiB", (result.peak_rss_bytes or 0) / 2**20),
        ("measured phase began (unix time)", launched[0] if launched else None),
        (
            "first bind (s after the measured phase began)",
            (result.drain or {}).get("first_bind_seconds"),
        ),
    ]
    if result.cpu_seconds is not None and result.measured_pods:
        report["stages_ms_per_pod"] = stage_table(
            raw,
            cpu_seconds=result.cpu_seconds,
            pods=result.measured_pods,
            gc_seconds=gc_seconds,
            stages=args.stages,
        )
    (args.out / f"{stem}.top.json").write_text(json.dumps(report, indent=1))
    (args.out / f"{stem}.trial.json").write_text(json.dumps(result.to_dict(), indent=1))
    print(f"{args.workload}: {result.status}, throughput {result.throughput}")
    print(f"{int(report['samples'][0][1])} samples; {report['trial']}")
    for kind in ("own", "inclusive"):
        print(f"\n-- top by {kind} time --")
        for name, share in report[kind]:
            print(f"{share * 100:6.1f}%  {name}")
    print("\n-- stages: share of samples, ms of CPU per pod --")
    for stage, share, ms in report.get("stages_ms_per_pod", []):
        print(f"{share * 100:6.1f}%  {ms:6.3f} ms  {stage}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
