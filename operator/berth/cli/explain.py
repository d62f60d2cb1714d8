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

from berth.cli.explain_output import add_top_argument, explanation_json, explanation_table
from berth.cli.input_files import InputError
from berth.cli.simulate_input import load_input
from berth.cli.simulate_output import MAX_MESSAGE, emit, printable
from berth.engine.errors import PluginPackageError
from berth.engine.framework.runtime import build_framework
from berth.profiles import default_profile_config, plugin_registry
from berth.scheduling.simulator import explain

__all__ = ["add_cluster_arguments", "register", "run"]

EXIT_BAD_INPUT = 2


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """The files that describe the cluster, as `berth simulate` reads them."""
    parser.add_argument("--nodes", required=True, type=Path, help="YAML of Node objects")
    parser.add_argument(
        "--existing",
        type=Path,
        help="YAML of Pods already bound (spec.nodeName set) and PodDisruptionBudgets",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        help="YAML of SchedulerProfile objects; pods are matched by schedulerName (default: "
        "kube-scheduler's default profile for every pod)",
    )


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
    try:
        registry = plugin_registry()
        inputs = load_input(files, registry=registry)
        if len(inputs.pods) != 1:
            raise InputError(f"{args.pod}: expected exactly one Pod, found {len(inputs.pods)}")
    except (InputError, PluginPackageError) as error:
        _say(str(error))
        return EXIT_BAD_INPUT
    for warning in inputs.warnings:
        _say(f"warning: {warning}")
    default = (
        None if inputs.profiles is not None else build_framework(default_profile_config(), registry)
    )
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
