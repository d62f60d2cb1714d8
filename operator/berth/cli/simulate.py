"""`berth simulate`: how would Berth place these pods on these nodes? Reads files, prints placements.

Exit status: 0 with an answer; 2 with one line on stderr naming the file, the object and the
field when the input cannot be used; 141 (quietly) when stdout is a pipe its reader closed;
1 when stdout cannot be written otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from berth.cli.cluster_files import add_cluster_arguments, load_cluster_files
from berth.cli.explain_output import add_top_argument, explanation_json, explanation_table
from berth.cli.input_files import InputError
from berth.cli.simulate_input import load_profiles
from berth.cli.simulate_output import MAX_MESSAGE, emit, printable, to_json, to_table
from berth.scheduling.simulator import simulate

__all__ = ["InputError", "load_profiles", "register", "run"]

EXIT_BAD_INPUT = 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="place pods on nodes offline with the scheduling engine",
        description=(
            "Schedule PODS onto NODES in queue order (priority, then file order) exactly as Berth "
            "would, and print each pod's node or its FailedScheduling message."
        ),
    )
    parser.add_argument("--pods", required=True, type=Path, help="YAML of Pod objects to schedule")
    add_cluster_arguments(parser)
    parser.add_argument(
        "--seed", type=int, default=0, help="seed for the tie-break among equal scores"
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="also explain each decision as `berth explain` does (rejections, scores, preemption)",
    )
    add_top_argument(parser, help_prefix="with --explain, per pod: ")
    parser.add_argument("--output", choices=("table", "json"), default="table")
    parser.set_defaults(handler=run)


def _say(message: str) -> None:
    emit(f"berth simulate: {printable(message, MAX_MESSAGE)}\n", sys.stderr)


def run(args: argparse.Namespace) -> int:
    loaded = load_cluster_files(args, say=_say)
    if loaded is None:
        return EXIT_BAD_INPUT
    inputs, default = loaded
    result = simulate(
        nodes=inputs.nodes,
        pods=inputs.pods,
        existing=inputs.existing,
        pdbs=inputs.pdbs,
        profiles=inputs.profiles,
        default=default,
        seed=args.seed,
        explain=args.explain,
    )
    if args.output == "json":
        document = to_json(result, inputs.warnings)
        if args.explain:
            for entry, placement in zip(document["pods"], result.placements, strict=True):
                explained = placement.explanation
                entry["explanation"] = (
                    explanation_json(explained, top=args.top) if explained else None
                )
        text = json.dumps(document, indent=2)
    else:
        text = to_table(result)
        if args.explain:
            sections = [
                explanation_table(placement.explanation, top=args.top)
                for placement in result.placements
                if placement.explanation is not None
            ]
            text += "".join(f"\n\n{section}" for section in sections)
    return emit(text + "\n", sys.stdout, errors=sys.stderr)
