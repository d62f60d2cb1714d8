"""`berth explain`: why would this pod go to that node, or stay pending? Reads files, prints why.

The pod goes through the profile its schedulerName selects, on the cluster the files describe,
with the same checks and inputs as `berth simulate`. Exit status: 0 with an answer (a pod that
fits nowhere is an answer too); 2 with one line on stderr when the input cannot be used.
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
from berth.cli.simulate_input import SimulationInput
from berth.cli.simulate_output import MAX_MESSAGE, emit, printable
from berth.scheduling.simulator import explain

__all__ = ["register", "run"]

EXIT_BAD_INPUT = 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="why a pod would go to a node, or stay pending (offline, from files)",
        description=(
            "Run one pod through the profile its schedulerName selects, on the cluster the files "
            "describe, and show per plugin which nodes it rejected and why (grouped), each "
            "feasible node's raw, normalized and weighted scores (ranked), and what preemption "
            "would do. Every node is judged, also where the scheduler would stop its search "
            "early. Nothing is written anywhere."
        ),
    )
    parser.add_argument("--pod", required=True, type=Path, help="YAML holding one Pod")
    add_cluster_arguments(parser)
    add_top_argument(parser)
    parser.add_argument("--output", choices=("table", "json"), default="table")
    parser.set_defaults(handler=run)


def _say(message: str) -> None:
    emit(f"berth explain: {printable(message, MAX_MESSAGE)}\n", sys.stderr)


def run(args: argparse.Namespace) -> int:
    # The simulate loader reads the pod file as its --pods: same parsing, same cluster checks.
    files = argparse.Namespace(
        nodes=args.nodes, pods=args.pod, existing=args.existing, profile=args.profile
    )

    def one_pod(inputs: SimulationInput) -> None:
        if len(inputs.pods) != 1:
            raise InputError(f"{args.pod}: expected exactly one Pod, found {len(inputs.pods)}")

    loaded = load_cluster_files(files, say=_say, check=one_pod)
    if loaded is None:
        return EXIT_BAD_INPUT
    inputs, default = loaded
    pod = inputs.pods[0]
    answer = explain(
        pod,
        nodes=inputs.nodes,
        existing=inputs.existing,
        pdbs=inputs.pdbs,
        profiles=inputs.profiles,
        default=default,
    )
    if isinstance(answer, str):
        document: dict[str, Any] = {"pod": pod.key, "skipped": answer}
        text = json.dumps(document, indent=2) if args.output == "json" else f"{pod.key}: {answer}"
    elif args.output == "json":
        text = json.dumps(explanation_json(answer, top=args.top), indent=2)
    else:
        text = explanation_table(answer, top=args.top)
    return emit(text + "\n", sys.stdout, errors=sys.stderr)
