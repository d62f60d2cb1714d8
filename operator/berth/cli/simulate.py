"""`berth simulate`: how would Berth place these pods on these nodes? Reads files, prints placements."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from berth.engine.errors import InvalidObjectError, PluginPackageError
from berth.engine.framework.runtime import Framework, build_framework
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.model.quantity import format_amount
from berth.engine.registry import Registry
from berth.profiles import default_profile_config, load_profile, plugin_registry
from berth.scheduling.simulator import SimulationResult, simulate

EXIT_BAD_INPUT = 2


class InputError(Exception):
    """Bad input: the message names the file and the object."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="place pods on nodes offline with the scheduling engine",
        description=(
            "Schedule PODS onto NODES in queue order (priority, then file order) exactly as Berth "
            "would, and print each pod's node or its FailedScheduling message."
        ),
    )
    parser.add_argument("--nodes", required=True, type=Path, help="YAML of Node objects")
    parser.add_argument("--pods", required=True, type=Path, help="YAML of Pod objects to schedule")
    parser.add_argument(
        "--existing", type=Path, help="YAML of Pods already bound (spec.nodeName set)"
    )
    parser.add_argument(
        "--profile",
        type=Path,
        help="YAML of SchedulerProfile objects; pods are matched by schedulerName (default: "
        "kube-scheduler's default profile for every pod)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed for the tie-break among equal scores"
    )
    parser.add_argument("--output", choices=("table", "json"), default="table")
    parser.set_defaults(handler=run)


def _documents(path: Path) -> Iterator[tuple[int, Mapping[str, Any]]]:
    try:
        text = path.read_text()
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror}") from None
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError as error:
        raise InputError(f"{path}: not valid YAML: {error}") from None
    position = 0
    for document in documents:
        if document is None:
            continue
        if not isinstance(document, Mapping):
            raise InputError(f"{path}: document {position + 1} is not an object")
        kind = document.get("kind", "")
        if isinstance(kind, str) and kind.endswith("List"):
            items = document.get("items") or []
            if not isinstance(items, list):
                raise InputError(f"{path}: {kind}.items must be a list")
            for item in items:
                if not isinstance(item, Mapping):
                    raise InputError(f"{path}: item {position + 1} is not an object")
                position += 1
                yield position, item
        else:
            position += 1
            yield position, document


def _objects(path: Path, kind: str) -> Iterator[Mapping[str, Any]]:
    for position, document in _documents(path):
        actual = document.get("kind")
        if actual != kind:
            raise InputError(f"{path}: object {position}: expected kind {kind}, got {actual!r}")
        yield document


def load_nodes(path: Path) -> list[Node]:
    try:
        return [Node.from_dict(raw) for raw in _objects(path, "Node")]
    except InvalidObjectError as error:
        raise InputError(f"{path}: {error}") from None


def load_pods(path: Path) -> list[Pod]:
    try:
        return [Pod.from_dict(raw) for raw in _objects(path, "Pod")]
    except InvalidObjectError as error:
        raise InputError(f"{path}: {error}") from None


def load_profiles(path: Path, *, registry: Registry | None = None) -> dict[str, Framework]:
    profiles: dict[str, Framework] = {}
    for document in _objects(path, "SchedulerProfile"):
        try:
            loaded = load_profile(document, registry=registry)
        except InvalidObjectError as error:
            raise InputError(f"{path}: {error}") from None
        if loaded.scheduler_name in profiles:
            raise InputError(
                f"{path}: SchedulerProfile {loaded.name}: spec.schedulerName: "
                f"{loaded.scheduler_name!r} is served by another profile already"
            )
        profiles[loaded.scheduler_name] = loaded.framework
    return profiles


def to_json(result: SimulationResult) -> dict[str, Any]:
    cluster = result.cluster
    nodes = []
    for node in sorted(cluster.nodes(), key=lambda n: n.name):
        slot = cluster.slot_of(node.name)
        assert slot is not None
        requested = {}
        for resource in cluster.resource_names():
            column = cluster.resource_column(resource)
            assert column is not None
            amount = int(cluster.requested[column, slot])
            if resource == "pods":
                amount = int(cluster.pod_count[slot])
            if amount:
                requested[resource] = format_amount(resource, amount)
        allocatable = {
            name: format_amount(name, amount) for name, amount in sorted(node.allocatable.items())
        }
        nodes.append({"name": node.name, "requested": requested, "allocatable": allocatable})
    return {
        "pods": [
            {"namespace": p.pod.namespace, "name": p.pod.name, "node": p.node, "message": p.message}
            for p in result.placements
        ],
        "nodes": nodes,
    }


def to_table(result: SimulationResult) -> str:
    rows = [("POD", "NODE", "MESSAGE")]
    rows += [(p.pod.key, p.node or "<none>", p.message) for p in result.placements]
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    lines = [f"{pod:<{widths[0]}}  {node:<{widths[1]}}  {message}" for pod, node, message in rows]
    scheduled = sum(1 for p in result.placements if p.node is not None)
    lines.append("")
    lines.append(
        f"{scheduled}/{len(result.placements)} pods placed on {result.cluster.node_count} nodes"
    )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    try:
        registry = plugin_registry(
            announce=lambda line: print(f"berth simulate: {line}", file=sys.stderr)
        )
        nodes = load_nodes(args.nodes)
        pods = load_pods(args.pods)
        existing = load_pods(args.existing) if args.existing else []
        for pod in existing:
            if not pod.node_name:
                raise InputError(
                    f"{args.existing}: Pod {pod.key}: spec.nodeName: must be set for an existing pod"
                )
        profiles = load_profiles(args.profile, registry=registry) if args.profile else None
    except (InputError, PluginPackageError) as error:
        print(f"berth simulate: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    default = None if profiles is not None else build_framework(default_profile_config(), registry)
    result = simulate(
        nodes=nodes,
        pods=pods,
        existing=existing,
        profiles=profiles,
        default=default,
        seed=args.seed,
    )
    if args.output == "json":
        print(json.dumps(to_json(result), indent=2))
    else:
        print(to_table(result))
    return 0
