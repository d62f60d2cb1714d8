"""`berth explain`: why would this pod go to that node, or stay pending? Prints why, writes nothing.

The pod goes through the profile its schedulerName selects, either on the cluster that files
describe (`--pod FILE --nodes ...`, with the same checks and inputs as `berth simulate`) or on the
live cluster (`NAMESPACE/NAME`, read through the kubeconfig with get and list only). Exit status:
0 with an answer (a pod that fits nowhere is an answer too); 2 with one line on stderr when the
input cannot be used or the cluster cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from berth.cli.explain_output import add_top_argument, explanation_json, explanation_table
from berth.cli.input_files import InputError
from berth.cli.offline_input import EXIT_BAD_INPUT, add_input_arguments, read_input, say
from berth.cli.simulate_input import SimulationInput, load_profiles
from berth.cli.simulate_output import emit
from berth.engine.errors import PluginPackageError
from berth.engine.explain import Explanation
from berth.engine.framework.runtime import build_framework
from berth.engine.model.pod import Pod
from berth.profiles import default_profile_config, plugin_registry
from berth.scheduling.simulator import explain

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="why a pod would go to a node, or stay pending (from files or the live cluster)",
        description=(
            "Run one pod through the profile its schedulerName selects and show per plugin which "
            "nodes it rejected and why (grouped), each feasible node's raw, normalized and "
            "weighted scores (ranked), and what preemption would do. Every node is judged, also "
            "where the scheduler would stop its search early. The pod is NAMESPACE/NAME on the "
            "cluster of --kubeconfig (read-only: it needs get and list on pods, nodes, namespaces, "
            "poddisruptionbudgets, services, replicationcontrollers, replicasets and statefulsets; "
            "a bound pod is explained as if pending again), or --pod "
            "FILE on the cluster --nodes and --existing describe. Nothing is written anywhere."
        ),
    )
    parser.add_argument(
        "target", nargs="?", metavar="NAMESPACE/NAME", help="a pod of the live cluster"
    )
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        help="with NAMESPACE/NAME: the kubeconfig (default: $KUBECONFIG, then ~/.kube/config)",
    )
    parser.add_argument("--pod", type=Path, help="YAML holding one Pod (instead of NAMESPACE/NAME)")
    add_input_arguments(parser, nodes_required=False)
    add_top_argument(parser)
    parser.add_argument("--output", choices=("table", "json"), default="table")
    parser.set_defaults(handler=run)


def _say(message: str) -> None:
    say("explain", message)


def _usage_problem(args: argparse.Namespace) -> str:
    if (args.target is None) == (args.pod is None):
        return "give either NAMESPACE/NAME (a pod of the live cluster) or --pod FILE"
    if args.pod is not None and args.nodes is None:
        return "--pod needs --nodes (the cluster's Node objects)"
    if args.target is not None and (args.nodes or args.existing):
        return "--nodes and --existing describe a cluster in files; NAMESPACE/NAME reads it live"
    if args.pod is not None and args.kubeconfig is not None:
        return "--kubeconfig reads the live cluster; it goes with NAMESPACE/NAME, not --pod"
    return ""


def run(args: argparse.Namespace) -> int:
    problem = _usage_problem(args)
    if problem:
        _say(problem)
        return EXIT_BAD_INPUT
    found = _explain_live(args) if args.target is not None else _explain_files(args)
    if found is None:
        return EXIT_BAD_INPUT
    pod, answer = found
    if isinstance(answer, str):
        document: dict[str, Any] = {"pod": pod.key, "skipped": answer}
        text = json.dumps(document, indent=2) if args.output == "json" else f"{pod.key}: {answer}"
    elif args.output == "json":
        text = json.dumps(explanation_json(answer, top=args.top), indent=2)
    else:
        text = explanation_table(answer, top=args.top)
    return emit(text + "\n", sys.stdout, errors=sys.stderr)


def _explain_files(args: argparse.Namespace) -> tuple[Pod, Explanation | str] | None:
    # The simulate loader reads the pod file as its --pods: same parsing, same cluster checks.
    files = argparse.Namespace(
        nodes=args.nodes,
        pods=args.pod,
        existing=args.existing,
        objects=args.objects,
        profile=args.profile,
    )

    def one_pod(inputs: SimulationInput) -> None:
        if len(inputs.pods) != 1:
            raise InputError(f"{args.pod}: expected exactly one Pod, found {len(inputs.pods)}")

    loaded = read_input(files, command="explain", check=one_pod)
    if loaded is None:
        return None
    inputs = loaded.inputs
    default = loaded.default_framework()
    pod = inputs.pods[0]
    answer = explain(
        pod,
        nodes=inputs.nodes,
        existing=inputs.existing,
        pdbs=inputs.pdbs,
        profiles=inputs.profiles,
        default=default,
        storage=inputs.storage,
        dra=inputs.dra,
    )
    return pod, answer


def _explain_live(args: argparse.Namespace) -> tuple[Pod, Explanation | str] | None:
    # Imported here: the API client (aiohttp, kopf) is not needed to read files.
    from berth.cli.cluster_snapshot import cluster_profiles, kubeconfig_path
    from berth.cli.explain_live import parse_target, read_cluster

    try:
        namespace, name = parse_target(args.target)
        registry = plugin_registry()
        profiles = load_profiles(args.profile, registry=registry) if args.profile else None
        live = read_cluster(kubeconfig_path(args.kubeconfig), namespace=namespace, name=name)
    except (InputError, PluginPackageError) as error:
        _say(str(error))
        return None
    snapshot = live.snapshot
    warnings = list(snapshot.warnings)
    notes: list[str] = []
    if profiles is None and snapshot.profile_documents:
        # Without --profile, the profile the cluster's Berth serves for this pod, if any (read as
        # --from-cluster reads them); a pod of another scheduler gets kube-scheduler's default.
        served = cluster_profiles(snapshot.profile_documents, registry, warnings)
        if live.pod.scheduler_name in served:
            profiles = served
        else:
            notes.append(
                f"no SchedulerProfile of the cluster serves schedulerName "
                f"{live.pod.scheduler_name!r}: explained with kube-scheduler's default profile"
            )
    for warning in warnings:
        _say(f"warning: {warning}")
    default = None if profiles is not None else build_framework(default_profile_config(), registry)
    answer = explain(
        live.pod,
        nodes=snapshot.nodes,
        existing=snapshot.bound_pods,
        pdbs=snapshot.pdbs,
        profiles=profiles,
        default=default,
        namespaces=snapshot.namespaces,
        workloads=snapshot.workloads,
        nominated=live.nominated,
        storage=snapshot.storage,
        dra=snapshot.dra,
    )
    if live.bound_to:
        notes.append(
            f"bound to {live.bound_to}; explained as if pending again, without itself there"
        )
    if notes and isinstance(answer, Explanation):
        answer = replace(answer, notes=(*answer.notes, *notes))
    return live.pod, answer
