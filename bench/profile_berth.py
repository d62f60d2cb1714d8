"""Profile Berth with py-spy during the measured phase of one benchmark workload.

    python -m bench.profile_berth --workload SchedulingPodAntiAffinity/500Nodes

Runs the same trial as the benchmark (bench/driver.py), attaches
`py-spy record` to the Berth process when the measured pods start being
created and stops it when the last one is bound, then prints the functions
with the largest share of the samples, by own time and inclusive. py-spy
(`pip install py-spy`) is not a project dependency. Leaves the raw
(collapsed-stack) profile and a flame graph next to the results.
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from bench.driver import run_trial
from bench.schedulers import make_scheduler
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workload", default="SchedulingPodAntiAffinity/500Nodes")
    parser.add_argument("--out", type=Path, default=RESULTS / "profiles")
    parser.add_argument("--rate", type=int, default=200)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.workload.replace("/", "_")
    raw = args.out / f"{stem}.raw.txt"
    recorder: list[subprocess.Popen[bytes]] = []

    def on_measured(phase: str, pid: int | None) -> None:
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

    result = run_trial(
        WORKLOADS[args.workload], make_scheduler("berth"), 0, on_measured=on_measured
    )
    report = analyse(raw)
    report["trial"] = [
        ("status", result.status),
        ("average pods/s", (result.throughput or {}).get("average")),
        ("cpu s / 1000 pods", result.cpu_seconds_per_1000_pods),
    ]
    (args.out / f"{stem}.top.json").write_text(json.dumps(report, indent=1))
    (args.out / f"{stem}.trial.json").write_text(json.dumps(result.to_dict(), indent=1))
    print(f"{args.workload}: {result.status}, throughput {result.throughput}")
    print(f"{int(report['samples'][0][1])} samples")
    for kind in ("own", "inclusive"):
        print(f"\n-- top by {kind} time --")
        for name, share in report[kind]:
            print(f"{share * 100:6.1f}%  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
