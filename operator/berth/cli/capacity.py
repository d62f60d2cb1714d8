"""`berth capacity`: how many more replicas of a pod fit on these nodes, and what stops the next one.

The nodes, bound pods, budgets and profiles are read and checked exactly as `berth simulate`
reads them; the pod is the one Pod of `--pod`. Exit status as `berth simulate`: 0 with an
answer, 2 with one line on stderr naming the file, the object and the field when the input
cannot be used, 141 or 1 when stdout cannot take the answer.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from berth.cli.input_files import InputError
from berth.cli.offline_input import (
    EXIT_BAD_INPUT,
    add_input_arguments,
    read_input,
    say,
    whole_number,
)
from berth.cli.simulate_input import SimulationInput
from berth.cli.simulate_output import emit, printable
from berth.engine.model.parsing import brief, brief_name
from berth.engine.model.pod import Pod
from berth.scheduling.capacity import CapacityResult, count_replicas
from berth.scheduling.simulator import Simulation

__all__ = ["register", "run"]

DEFAULT_MAX = 10_000


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "capacity",
        help="count how many more replicas of a pod fit on nodes, offline",
        description=(
            "Place copies of the pod in --pod (named NAME-1, NAME-2, ...) one at a time onto "
            "NODES, exactly as `berth simulate` would place them, until a copy does not fit or "
            "--max copies fit. Prints how many fit, how many landed on each node, and the "
            "FailedScheduling message of the first copy that did not fit."
        ),
    )
    add_input_arguments(parser)
    parser.add_argument(
        "--pod",
        required=True,
        type=Path,
        help="YAML holding the one Pod to replicate, or one Deployment, ReplicaSet, StatefulSet "
        "or Job (one of its pods is replicated)",
    )
    parser.add_argument(
        "--max",
        type=whole_number(0),
        default=DEFAULT_MAX,
        help=f"stop counting after this many copies fit (default {DEFAULT_MAX})",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed for the tie-break among equal scores"
    )
    parser.add_argument("--output", choices=("table", "json"), default="table")
    parser.set_defaults(handler=run)


def _the_pod(path: Path, inputs: SimulationInput) -> Pod:
    """The pattern to replicate: the one Pod of the file, or one pod of its one workload (a
    workload's pods share its template, so any of them will do)."""
    pods = inputs.pods
    controllers = {pod.controller() for pod in pods}
    one_workload = len(controllers) == 1 and None not in controllers
    if not pods or (len(pods) > 1 and not one_workload):
        raise InputError(
            f"{path}: expected one Pod or one Deployment, ReplicaSet, StatefulSet or Job "
            f"creating pods, found {len(pods)} pod(s)"
        )
    pod = pods[0]
    owner = pod.controller()
    if owner is not None and owner.kind == "DaemonSet":
        raise InputError(
            f"{path}: DaemonSet {brief_name(owner.name)}: runs one pod on each eligible node, "
            "so it has no replicas to count"
        )
    if pod.node_name:
        # Copies would all be "already assigned" without a scheduler deciding anything.
        raise InputError(
            f"{path}: Pod {brief_name(pod.namespace)}/{brief_name(pod.name)}: spec.nodeName: "
            f"must be empty (the pod is bound to {brief(pod.node_name)}; no scheduler places it)"
        )
    return pod


def run(args: argparse.Namespace) -> int:
    loaded = read_input(argparse.Namespace(**vars(args), pods=args.pod), command="capacity")
    if loaded is None:
        return EXIT_BAD_INPUT
    try:
        template = _the_pod(args.pod, loaded.inputs)
    except InputError as error:
        say("capacity", str(error))
        return EXIT_BAD_INPUT
    inputs = loaded.inputs
    simulation = Simulation(
        nodes=inputs.nodes,
        existing=inputs.existing,
        pdbs=inputs.pdbs,
        profiles=inputs.profiles,
        default=loaded.default_framework(),
        seed=args.seed,
        storage=inputs.storage,
        dra=inputs.dra,
    )
    result = count_replicas(simulation, template, limit=args.max)
    if args.output == "json":
        text = json.dumps(to_json(template, result, inputs.warnings), indent=2)
    else:
        text = to_table(template, result)
    return emit(text + "\n", sys.stdout, errors=sys.stderr)


def _stop(result: CapacityResult) -> dict[str, Any]:
    placement = result.stopped_by
    if placement is None:
        return {"reason": "LimitReached", "pod": None, "message": f"--max {result.limit} reached"}
    stop: dict[str, Any] = {
        "reason": "Unschedulable",
        "pod": placement.pod.name,
        "message": placement.message,
    }
    if placement.nominated_node:
        stop["nominatedNode"] = placement.nominated_node
        stop["victims"] = [victim.key for victim in placement.victims]
    return stop


def to_json(template: Pod, result: CapacityResult, warnings: list[str]) -> dict[str, Any]:
    return {
        "pod": {"namespace": template.namespace, "name": template.name},
        "fit": result.fit,
        "max": result.limit,
        "perNode": [{"node": node, "replicas": count} for node, count in _by_node(result)],
        "stop": _stop(result),
        "warnings": warnings,
    }


def _by_node(result: CapacityResult) -> list[tuple[str, int]]:
    return sorted(result.per_node.items())


def to_table(template: Pod, result: CapacityResult) -> str:
    rows = [("NODE", "REPLICAS"), *((printable(n), str(c)) for n, c in _by_node(result))]
    width = max(len(node) for node, _ in rows)
    lines = [f"{node:<{width}}  {count}" for node, count in rows]
    stop = _stop(result)
    lines.append("")
    lines.append(f"{result.fit} more replica(s) of {printable(template.key)} fit")
    if stop["pod"] is None:
        lines.append(f"stopped: LimitReached ({stop['message']}); more may fit")
    else:
        lines.append(
            f"stopped: Unschedulable: {printable(stop['pod'])}: {printable(stop['message'])}"
        )
        if "nominatedNode" in stop:
            victims = " ".join(stop["victims"])
            lines.append(
                f"  preemption would make room on {printable(stop['nominatedNode'])}, "
                f"evicting: {printable(victims)}"
            )
    return "\n".join(lines)
