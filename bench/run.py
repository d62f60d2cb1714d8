"""Berth vs kube-scheduler vs the null binder on scheduler_perf workloads.

    python -m bench.run --suite quick            # make bench-quick
    python -m bench.run --suite full --repeats 3 # make bench

Each trial (workload x scheduler x repetition) runs on a fresh control plane
(bench/driver.py). Repetitions alternate the scheduler order so that slow
drifts of the shared machine hit every scheduler alike. After every trial the
JSON file is rewritten, so an interrupted session keeps what it measured; at
the end the Markdown table and the throughput plot are written too.
"""

from __future__ import annotations

import argparse
import atexit
import json
import logging
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import report
from bench.driver import CREATORS, run_trial
from bench.schedulers import SCHEDULERS, Berth, make_scheduler, snapshot_berth_source
from bench.workloads import DEVIATIONS, SUITES, WORKLOADS

logger = logging.getLogger("bench")

ORDER = ("kube-scheduler", "berth", "null-binder")
RESULTS = Path(__file__).resolve().parent / "results"


def scheduler_order(schedulers: Sequence[str], repetition: int) -> list[str]:
    """The order for one repetition: rotated by one each time."""
    shift = repetition % len(schedulers)
    return list(schedulers[shift:]) + list(schedulers[:shift])


def get_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--suite", choices=sorted(SUITES), default="quick")
    parser.add_argument("--workloads", nargs="*", help="override the suite's workloads")
    parser.add_argument("--schedulers", nargs="*", choices=sorted(SCHEDULERS), default=list(ORDER))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--name", help="file stem of the results (default: the suite name)")
    parser.add_argument(
        "--berth-source",
        choices=("commit", "worktree"),
        default="commit",
        help="run Berth from a snapshot of HEAD (default) or from the working tree",
    )
    parser.add_argument(
        "--resume", action="store_true", help="keep the trials already in the JSON file"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = get_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    workloads = args.workloads or list(SUITES[args.suite])
    unknown = [w for w in workloads if w not in WORKLOADS]
    if unknown:
        print(f"unknown workloads: {unknown}; known: {sorted(WORKLOADS)}", file=sys.stderr)
        return 2
    stem = args.name or args.suite
    args.out.mkdir(parents=True, exist_ok=True)
    json_path = args.out / f"{stem}.json"
    machine = report.machine_description()
    notes = [
        f"Trials: {args.repeats} per workload and scheduler, orders rotated per repetition; "
        f"fresh etcd + kube-apiserver per trial; {CREATORS} parallel creators.",
        "C is the null binder (round-robin binds, 64 in flight, no logic): the control plane's "
        "ceiling for create + bind + watch on this machine.",
        "A sample-less Average (workload shorter than ~2 s) shows as -; short workloads have few "
        "1-s samples, so their Average is coarse.",
        *[
            f"Workload sizes: {WORKLOADS[w].name}: {WORKLOADS[w].nodes} nodes / "
            f"{WORKLOADS[w].init_pods} init / {WORKLOADS[w].measured_pods} measured "
            f"({WORKLOADS[w].upstream})."
            for w in workloads
        ],
        *DEVIATIONS,
    ]
    trials: list[dict[str, Any]] = []
    if args.resume and json_path.exists():
        trials = json.loads(json_path.read_text())["trials"]
        logger.info("resuming with %d trials from %s", len(trials), json_path)
    done = {(t["workload"], t["scheduler"], t["repetition"]) for t in trials}
    if args.berth_source == "commit":
        snapshot = Path(tempfile.mkdtemp(prefix="berth-bench-src-"))
        atexit.register(shutil.rmtree, snapshot, True)
        commit = snapshot_berth_source(snapshot)
        Berth.source = (snapshot / "operator", commit)
        logger.info("Berth runs from a snapshot of %s in %s", commit[:12], snapshot)
    began = time.monotonic()
    for workload_name in workloads:
        workload = WORKLOADS[workload_name]
        for repetition in range(args.repeats):
            for key in scheduler_order(args.schedulers, repetition):
                if (workload.name, key, repetition) in done:
                    continue
                logger.info("trial %s / %s / repetition %d", workload.name, key, repetition)
                result = run_trial(workload, make_scheduler(key), repetition)
                throughput = (result.throughput or {}).get("average")
                logger.info(
                    "-> %s: %s pods/s average, makespan %.1fs, %s",
                    key,
                    f"{throughput:.1f}" if throughput is not None else "-",
                    result.makespan_seconds or 0.0,
                    result.status
                    if result.error is None
                    else f"{result.status}: {result.error[:300]}",
                )
                trials.append(result.to_dict())
                report.write_json(
                    json_path,
                    {
                        "suite": args.suite,
                        "machine": machine,
                        "notes": notes,
                        "trials": trials,
                        "summary": report.summarize(trials),
                        "headline": report.headline(report.summarize(trials)),
                        "elapsed_seconds": time.monotonic() - began,
                    },
                )
    summary = report.summarize(trials)
    report.write_markdown(
        args.out / f"{stem}.md",
        title=f"Berth vs kube-scheduler vs C — suite `{args.suite}`",
        machine=machine,
        summary=summary,
        notes=notes,
    )
    if not report.write_plot(args.out / f"{stem}-throughput.png", trials):
        logger.warning("matplotlib is not installed (pip install -e '.[bench]'): no plot")
    print((args.out / f"{stem}.md").read_text())
    logger.info("done in %.0fs; results in %s", time.monotonic() - began, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
