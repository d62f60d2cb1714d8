"""`berth simulate`: how would Berth place these pods on these nodes? Reads files (or, read-only,
the live cluster: cluster_snapshot.py), prints placements.

Exit status: 0 with an answer; 2 with one line on stderr naming the file, the object and the
field when the input (or the cluster, with --from-cluster) cannot be used; 141 (quietly) when stdout is a pipe its reader closed;
1 when stdout cannot be written otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from berth.cli.cluster_snapshot import add_arguments as add_cluster_arguments
from berth.cli.explain_output import add_top_argument, explanation_json, explanation_table
from berth.cli.extender_answers import http_extender_answers
from berth.cli.input_files import InputError
from berth.cli.offline_input import EXIT_BAD_INPUT, add_input_arguments, read_input, say
from berth.cli.progress import terminal_progress
from berth.cli.report_html import render_report
from berth.cli.simulate_compare import FRAGMENTATION_HELP, compare
from berth.cli.simulate_input import load_profiles
from berth.cli.simulate_output import emit, emit_to_file, to_json, to_table
from berth.engine.explain import Explanation
from berth.scheduling.simulator import SimulationResult, simulate

__all__ = ["InputError", "load_profiles", "register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="place pods on nodes offline with the scheduling engine",
        description=(
            "Schedule PODS onto NODES (or onto the live cluster with --from-cluster, which only "
            "gets and lists) in queue order (priority, then file order) exactly as Berth "
            "would, and print each pod's node or its FailedScheduling message."
        ),
    )
    source = parser.add_mutually_exclusive_group(required=True)
    add_input_arguments(parser, nodes_in=source)
    add_cluster_arguments(parser, source)
    parser.add_argument(
        "--pods",
        required=True,
        type=Path,
        help="YAML of Pods to schedule, and of Deployments, ReplicaSets, StatefulSets, Jobs and "
        "DaemonSets, each scheduled as the pods its controller would create",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed for the tie-break among equal scores"
    )
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="PROFILES.yaml",
        help="also run the same input under these SchedulerProfiles (same seed) and print the "
        "pods placed differently and, per profile set, nodes used, nodes left empty, pods "
        f"pending and fragmentation; {FRAGMENTATION_HELP}",
    )
    parser.add_argument(
        "--output",
        choices=("table", "json", "html"),
        default="table",
        help="html: one self-contained page (utilisation chart, pending pods and their reasons)",
    )
    parser.add_argument(
        "--output-file", type=Path, help="write the output to this file instead of stdout"
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="also explain each decision as `berth explain` does (rejections, scores, preemption)",
    )
    add_top_argument(parser, help_prefix="with --explain, per pod: ")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.snapshot_to is not None and not args.from_cluster:
        say("simulate", "--snapshot-to: saves what --from-cluster read; give --from-cluster too")
        return EXIT_BAD_INPUT
    loaded = read_input(args, command="simulate")
    if loaded is None:
        return EXIT_BAD_INPUT
    inputs = loaded.inputs
    try:
        compared = load_profiles(args.compare, registry=loaded.registry) if args.compare else None
    except InputError as error:
        say("simulate", str(error))
        return EXIT_BAD_INPUT
    with http_extender_answers() as extenders:
        result = simulate(
            nodes=inputs.nodes,
            pods=inputs.pods,
            existing=inputs.existing,
            pdbs=inputs.pdbs,
            profiles=inputs.profiles,
            default=loaded.default_framework(),
            seed=args.seed,
            namespaces=inputs.namespaces,
            workloads=inputs.workloads,
            storage=inputs.storage,
            dra=inputs.dra,
            progress=terminal_progress(sys.stderr, total=len(inputs.pods)),
            explain=args.explain,
            extenders=extenders,
        )
        if compared is not None:
            compared_text = compare(
                args, inputs, first=result, second_profiles=compared, extenders=extenders
            )
    if compared is not None:
        text = compared_text + "\n"
    elif args.output == "json":
        document = to_json(result, inputs.warnings)
        if args.explain:
            for entry, placement in zip(document["pods"], result.placements, strict=True):
                explained = placement.explanation
                entry["explanation"] = (
                    explanation_json(explained, top=args.top) if explained else None
                )
        text = json.dumps(document, indent=2) + "\n"
    elif args.output == "html":
        text = render_report(result, warnings=inputs.warnings, explanations=_explained(result))
    else:
        text = to_table(result)
        if args.explain:
            sections = [
                explanation_table(placement.explanation, top=args.top)
                for placement in result.placements
                if placement.explanation is not None
            ]
            text += "".join(f"\n\n{section}" for section in sections)
        text += "\n"
    if args.output_file is not None:
        return emit_to_file(text, args.output_file, errors=sys.stderr)
    return emit(text, sys.stdout, errors=sys.stderr)


def _explained(result: SimulationResult) -> list[Explanation] | None:
    explanations = [p.explanation for p in result.placements if p.explanation is not None]
    return explanations or None
