"""The input of `berth simulate`: nodes, pods (written out or as workloads), bound pods,
PodDisruptionBudgets, storage and DRA objects and profiles, checked as one cluster.

Each file is read with the bounded loader and each object with the engine's parsers. Then the
objects are checked together, because a cluster cannot hold two nodes or two pods of one name, or
two pods of one UID, and accounting them would silently give a wrong answer. A bound pod on a node
that is not in the node file is something kube-scheduler accepts (its cache keeps it until the
node appears) and that cannot change any placement, so it is reported and left out.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from berth.cli.dra_input import DRA_KIND_NAMES, load_dra, parse_dra_object
from berth.cli.input_files import InputError, objects_of_kind, read_objects
from berth.cli.storage_input import (
    STORAGE_KIND_NAMES,
    load_storage,
    parse_storage_object,
    stateful_set_claims,
)
from berth.cli.workloads import WORKLOAD_KINDS, expand_workload
from berth.engine.cluster import Workload
from berth.engine.cluster.storage import StorageObject
from berth.engine.errors import FieldError, InvalidObjectError
from berth.engine.framework.runtime import Framework
from berth.engine.model.node import Node
from berth.engine.model.parsing import as_map, brief, brief_name
from berth.engine.model.pdb import PodDisruptionBudget
from berth.engine.model.pod import Pod
from berth.engine.model.storage import PersistentVolumeClaim
from berth.engine.registry import Registry
from berth.profiles import load_profile
from berth.scheduling.simulated_claims import DraInputObject

__all__ = ["SimulationInput", "load_input", "load_pods", "refuse_duplicate_pods"]

PDB_KIND = "PodDisruptionBudget"


@dataclass(frozen=True, slots=True)
class SimulationInput:
    nodes: list[Node]
    pods: list[Pod]
    existing: list[Pod]
    pdbs: list[PodDisruptionBudget]
    profiles: dict[str, Framework] | None
    warnings: list[str] = field(default_factory=list)
    # Namespace labels and workload selectors: known only when read from a cluster.
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)
    workloads: list[Workload] = field(default_factory=list)
    # PVs, claims, storage classes and CSI objects (--existing, --objects, StatefulSet claims).
    storage: list[StorageObject] = field(default_factory=list)
    # DeviceClasses, ResourceClaims, ResourceClaimTemplates, ResourceSlices, DeviceTaintRules.
    dra: list[DraInputObject] = field(default_factory=list)


def _pod_as_read(raw: Mapping[str, Any]) -> Pod:
    # Bound pods too keep the object as read: preemption sends victims whole to extenders.
    return replace(Pod.from_dict(raw), source=raw)


def _parse(path: Path, kind: str, raw: Mapping[str, Any]) -> Any:
    parsers: dict[str, Callable[[Mapping[str, Any]], Any]] = {
        "Node": Node.from_dict,
        "Pod": _pod_as_read,
        PDB_KIND: _parse_pdb,
    }
    parse = parsers[kind]
    try:
        return parse(raw)
    except InvalidObjectError as error:
        raise InputError(f"{path}: {error}") from None


def _refuse_repeated_names(path: Path, kind: str, names: Iterable[str], problem: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputError(f"{path}: {kind} {brief_name(name)}: metadata.name: {problem}")
        seen.add(name)


def refuse_duplicate_pods(pods: Sequence[tuple[Path | str, Pod]]) -> None:
    # The pending and the bound pods live in one cluster: names and UIDs are unique across both.
    by_key: dict[str, Path | str] = {}
    by_uid: dict[str, tuple[Path | str, Pod]] = {}
    for path, pod in pods:
        where = f"{path}: Pod {brief_name(pod.namespace)}/{brief_name(pod.name)}"
        if pod.key in by_key:
            raise InputError(
                f"{where}: metadata.name: another pod in {by_key[pod.key]} has this "
                "namespace and name"
            )
        by_key[pod.key] = path
        if pod.uid and pod.uid in by_uid:
            other_path, other = by_uid[pod.uid]
            raise InputError(
                f"{where}: metadata.uid: {brief(pod.uid)} is also the uid of Pod "
                f"{brief_name(other.key)} in {other_path}"
            )
        if pod.uid:
            by_uid[pod.uid] = (path, pod)


def _parse_pdb(raw: Mapping[str, Any]) -> tuple[PodDisruptionBudget, Mapping[str, Any]]:
    pdb = PodDisruptionBudget.from_dict(raw)
    spec = as_map(raw.get("spec"), "spec")
    return pdb, spec


def _budget(value: object, field_path: str, expected: int) -> int:
    """An intOrString budget (3 or "50%") in pods, percentages rounded up like the controller."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        return math.ceil(int(value[:-1]) * expected / 100)
    raise FieldError(field_path, f"expected an integer or a percentage, got {brief(value)}")


def _disruptions_allowed(
    pdb: PodDisruptionBudget, spec: Mapping[str, Any], existing: Sequence[Pod]
) -> int:
    """What the disruption controller would write in status.disruptionsAllowed.

    Every bound, non-terminal pod the budget covers counts as healthy, and their number
    stands for the expected count (the controller reads it from the workloads' scale).
    """
    covered = sum(
        1 for pod in existing if not pod.is_terminal and pdb.covers(pod.namespace, pod.labels)
    )
    if spec.get("maxUnavailable") is not None:
        desired = max(0, covered - _budget(spec["maxUnavailable"], "spec.maxUnavailable", covered))
    elif spec.get("minAvailable") is not None:
        desired = _budget(spec["minAvailable"], "spec.minAvailable", covered)
    else:
        desired = 0
    return max(0, covered - desired)


def _load_pdbs(
    path: Path, raws: Sequence[Mapping[str, Any]], existing: Sequence[Pod]
) -> list[PodDisruptionBudget]:
    pdbs = []
    for raw in raws:
        pdb, spec = _parse(path, PDB_KIND, raw)
        status = raw.get("status")
        if not (isinstance(status, Mapping) and "disruptionsAllowed" in status):
            try:
                allowed = _disruptions_allowed(pdb, spec, existing)
            except FieldError as error:
                raise InputError(f"{path}: {PDB_KIND} {brief_name(pdb.key)}: {error}") from None
            pdb = replace(pdb, disruptions_allowed=allowed)
        pdbs.append(pdb)
    _refuse_repeated_names(
        path,
        PDB_KIND,
        (pdb.key for pdb in pdbs),
        "another PodDisruptionBudget in this namespace has this name",
    )
    return pdbs


def load_profiles(path: Path, *, registry: Registry | None = None) -> dict[str, Framework]:
    """The SchedulerProfiles of a file by schedulerName, built with `registry` (in-tree plugins
    and installed plugin packages); raises `InputError` naming the file, profile and field."""
    profiles: dict[str, Framework] = {}
    for document in objects_of_kind(path, "SchedulerProfile"):
        try:
            loaded = load_profile(document, registry=registry)
        except InvalidObjectError as error:
            raise InputError(f"{path}: {error}") from None
        if loaded.scheduler_name in profiles:
            raise InputError(
                f"{path}: SchedulerProfile {brief_name(loaded.name)}: spec.schedulerName: "
                f"{brief(loaded.scheduler_name)} is served by another profile already"
            )
        profiles[loaded.scheduler_name] = loaded.framework
    return profiles


def _bound_pods(
    path: Path, pods: Sequence[Pod], node_names: set[str], warnings: list[str]
) -> list[Pod]:
    kept = []
    for pod in pods:
        where = f"{path}: Pod {brief_name(pod.namespace)}/{brief_name(pod.name)}"
        if not pod.node_name:
            raise InputError(f"{where}: spec.nodeName: must be set for an existing pod")
        if pod.node_name not in node_names:
            warnings.append(
                f"{where}: spec.nodeName: node {brief(pod.node_name)} is not among the nodes; "
                "the pod is left out"
            )
            continue
        kept.append(pod)
    return kept


def load_pods(path: Path, nodes: Sequence[Node]) -> tuple[list[Pod], list[PersistentVolumeClaim]]:
    """The pods to schedule (the --pods file): Pods as written, workloads as the pods their
    controllers create (DaemonSets on `nodes`); with the claims StatefulSets create for their
    pods. Raises `InputError` naming the object and field."""
    pods: list[Pod] = []
    claims: list[PersistentVolumeClaim] = []
    for raw in read_objects(path, ("Pod", *WORKLOAD_KINDS)):
        if raw.get("kind") == "Pod":
            pods.append(_parse(path, "Pod", raw))
            continue
        try:
            expanded = expand_workload(raw, nodes=nodes)
        except InvalidObjectError as error:
            raise InputError(f"{path}: {error}") from None
        pods.extend(expanded)
        if raw.get("kind") == "StatefulSet":
            claims.extend(stateful_set_claims(path, raw, expanded))
    return pods, claims


def load_input(args: argparse.Namespace, *, registry: Registry | None = None) -> SimulationInput:
    """Read and check every file named on the command line; raises `InputError`."""
    nodes = [_parse(args.nodes, "Node", raw) for raw in objects_of_kind(args.nodes, "Node")]
    _refuse_repeated_names(
        args.nodes, "Node", (node.name for node in nodes), "another node has this name"
    )
    pods, workload_claims = load_pods(args.pods, nodes)
    existing: list[Pod] = []
    pdb_raws: list[Mapping[str, Any]] = []
    object_raws: list[tuple[Path, Mapping[str, Any]]] = []
    object_kinds = (*STORAGE_KIND_NAMES, *DRA_KIND_NAMES)
    if args.existing:
        for raw in read_objects(args.existing, ("Pod", PDB_KIND, *object_kinds)):
            if raw.get("kind") == PDB_KIND:
                pdb_raws.append(raw)
            elif raw.get("kind") == "Pod":
                existing.append(_parse(args.existing, "Pod", raw))
            else:
                object_raws.append((args.existing, raw))
    if getattr(args, "objects", None):
        object_raws += [(args.objects, raw) for raw in read_objects(args.objects, object_kinds)]
    storage = load_storage(
        [
            (path, parse_storage_object(path, raw))
            for path, raw in object_raws
            if raw.get("kind") in STORAGE_KIND_NAMES
        ],
        workload_claims,
    )
    dra = load_dra(
        [
            (path, parse_dra_object(path, raw))
            for path, raw in object_raws
            if raw.get("kind") in DRA_KIND_NAMES
        ]
    )
    refuse_duplicate_pods(
        [(args.pods, pod) for pod in pods] + [(args.existing, pod) for pod in existing]
    )
    warnings: list[str] = []
    existing = _bound_pods(args.existing, existing, {node.name for node in nodes}, warnings)
    pdbs = _load_pdbs(args.existing, pdb_raws, existing) if pdb_raws else []
    profiles = load_profiles(args.profile, registry=registry) if args.profile else None
    return SimulationInput(
        nodes=nodes,
        pods=pods,
        existing=existing,
        pdbs=pdbs,
        profiles=profiles,
        warnings=warnings,
        storage=storage,
        dra=dra,
    )
