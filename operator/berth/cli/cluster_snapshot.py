"""`berth simulate --from-cluster`: the live cluster, read once with get/list, as simulation input.

A dry run is only worth something when it starts from what the scheduler sees. This module lists
what Berth's live cache holds (nodes, bound non-terminal pods, PodDisruptionBudgets, namespace
labels, the Services and controllers PodTopologySpread's system defaults read, the storage
objects the volume plugins read and the DRA objects DynamicResources reads, with the
ResourceClaimTemplates the simulation makes claims from), and the
SchedulerProfiles, and parses each object with the same parsers as the operator. Like the operator,
it skips an object it cannot read with a warning instead of giving up on the cluster. Pending pods
of the cluster are not placed: only the pods of `--pods` are. Nothing is written: every request is
a GET, so a ServiceAccount with get/list on the listed resources is enough.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from berth.cli.dra_input import load_dra
from berth.cli.input_files import InputError
from berth.cli.progress import listing_progress
from berth.cli.simulate_input import (
    SimulationInput,
    load_pods,
    load_profiles,
    refuse_duplicate_pods,
)
from berth.cli.storage_input import load_storage
from berth.engine.cluster import Workload
from berth.engine.cluster.storage import StorageObject
from berth.engine.errors import InvalidObjectError
from berth.engine.framework.runtime import Framework
from berth.engine.model.node import Node
from berth.engine.model.parsing import brief, brief_name
from berth.engine.model.pdb import PodDisruptionBudget
from berth.engine.model.pod import Pod
from berth.engine.registry import Registry
from berth.kube.api import (
    ApiError,
    ApiSession,
    ApiTransportError,
    connection_info_from_kubeconfig,
)
from berth.kube.dra_kinds import DRA_INPUT_KINDS
from berth.kube.storage_kinds import STORAGE_KINDS
from berth.kube.watched_kinds import WatchedKind
from berth.kube.workloads import workload_from_dict
from berth.profiles import load_profile
from berth.scheduling.simulated_claims import DraInputObject

__all__ = [
    "LISTED_RESOURCES",
    "ClusterSnapshot",
    "add_arguments",
    "cluster_profiles",
    "kubeconfig_path",
    "load_cluster_input",
    "read_live",
    "read_snapshot",
    "write_snapshot",
]

NODES = "/api/v1/nodes"
PODS = "/api/v1/pods"
NAMESPACES = "/api/v1/namespaces"
PDBS = "/apis/policy/v1/poddisruptionbudgets"
PROFILES = "/apis/berth.dev/v1alpha1/schedulerprofiles"
WORKLOAD_PATHS = {
    "Service": "/api/v1/services",
    "ReplicationController": "/api/v1/replicationcontrollers",
    "ReplicaSet": "/apis/apps/v1/replicasets",
    "StatefulSet": "/apis/apps/v1/statefulsets",
}

# What the help and the README name as the rights this needs (get/list on each).
LISTED_RESOURCES = (
    "nodes, pods, namespaces, services, replicationcontrollers, apps/replicasets, "
    "apps/statefulsets, policy/poddisruptionbudgets, berth.dev/schedulerprofiles, "
    "persistentvolumeclaims, persistentvolumes, storage.k8s.io/storageclasses, csinodes, "
    "csidrivers, csistoragecapacities, volumeattachments, resource.k8s.io/deviceclasses, "
    "resourceclaims, resourceclaimtemplates, resourceslices, devicetaintrules"
)
CLUSTER = "the cluster"

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    """What Berth's cache would hold, plus the profile documents (None: not listable)."""

    nodes: list[Node]
    bound_pods: list[Pod]
    pdbs: list[PodDisruptionBudget]
    namespaces: dict[str, dict[str, str]]
    workloads: list[Workload]
    profile_documents: list[dict[str, Any]] | None
    warnings: list[str] = field(default_factory=list)
    # node -> pending pods a preemption nominated to it (they are not placed by a simulation).
    nominated: dict[str, list[Pod]] = field(default_factory=dict)
    # PVs, claims, storage classes and CSI objects, as the volume plugins read them.
    storage: list[StorageObject] = field(default_factory=list)
    # DeviceClasses, ResourceClaims, ResourceSlices, DeviceTaintRules, ResourceClaimTemplates.
    dra: list[DraInputObject] = field(default_factory=list)
    # The objects behind nodes, bound_pods and pdbs, as listed, for --snapshot-to.
    raw: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def add_arguments(parser: argparse.ArgumentParser, source: Any) -> None:
    """The --from-cluster flags; `source` is the group --nodes belongs to (one of them is needed)."""
    source.add_argument(
        "--from-cluster",
        action="store_true",
        help="read nodes, bound pods, namespaces, PodDisruptionBudgets, workloads, storage "
        "and DRA objects and SchedulerProfiles from the cluster of the kubeconfig instead of "
        "--nodes/--existing/--objects. "
        f"Read-only: it only gets and lists ({LISTED_RESOURCES}) and writes nothing. Pending "
        "pods of the cluster are not placed. Without --profile, the cluster's SchedulerProfiles "
        "are used (kube-scheduler's default profile when there are none or they cannot be listed)",
    )
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        help="kubeconfig for --from-cluster (default: $KUBECONFIG, else ~/.kube/config)",
    )
    parser.add_argument(
        "--context", help="kubeconfig context for --from-cluster (default: current)"
    )
    parser.add_argument(
        "--snapshot-to",
        type=Path,
        metavar="DIR",
        help="with --from-cluster, also save what was read as DIR/nodes.yaml, DIR/existing.yaml "
        "(bound pods and PodDisruptionBudgets), DIR/objects.yaml (storage and DRA objects) and "
        "DIR/profiles.yaml, for offline runs with --nodes/--existing/--objects/--profile "
        "(namespace labels and workloads are not saved)",
    )


def kubeconfig_path(given: Path | str | None) -> Path:
    """The kubeconfig to read: the one given, else the first existing file of $KUBECONFIG,
    else ~/.kube/config."""
    if given is not None:
        return Path(given)
    # KUBECONFIG may list several files; kubectl merges them, we take the first that exists.
    for entry in os.environ.get("KUBECONFIG", "").split(os.pathsep):
        if entry and Path(entry).is_file():
            return Path(entry)
    return Path.home() / ".kube" / "config"


def _readable(
    parse: Callable[[dict[str, Any]], T], raws: list[dict[str, Any]], warnings: list[str]
) -> list[tuple[T, dict[str, Any]]]:
    """The objects that parse, each with its raw form; one that does not becomes a warning,
    as in the operator."""
    parsed = []
    for raw in raws:
        try:
            parsed.append((parse(raw), raw))
        except InvalidObjectError as error:
            warnings.append(f"{CLUSTER}: skipped an object Berth cannot read: {error}")
    return parsed


async def _list(
    session: ApiSession, path: str, *, params: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    items, _ = await session.list_json(path, params=params)
    return items


async def _list_optional(
    session: ApiSession, path: str, warnings: list[str], *, consequence: str
) -> list[dict[str, Any]] | None:
    """A collection Berth can simulate without: on 403/404, a warning saying what that costs."""
    try:
        return await _list(session, path)
    except ApiError as error:
        if error.status not in (403, 404):
            raise
        warnings.append(
            f"{CLUSTER}: cannot list {path} ({error.reason or error.status}); {consequence}"
        )
        return None


def _namespace_labels(raws: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    labels = {}
    for raw in raws:
        metadata = raw.get("metadata") or {}
        labels[str(metadata.get("name", ""))] = {
            str(key): str(value) for key, value in (metadata.get("labels") or {}).items()
        }
    return labels


def _workloads(kind: str, raws: list[dict[str, Any]], warnings: list[str]) -> list[Workload]:
    found = []
    for raw in raws:
        try:
            found.append(workload_from_dict(kind, raw))
        except (AttributeError, TypeError):  # a selector of the wrong shape
            name = (raw.get("metadata") or {}).get("name")
            warnings.append(
                f"{CLUSTER}: skipped {kind} {brief_name(str(name))}: spec.selector "
                "is not a label selector"
            )
    return found


async def read_snapshot(
    session: ApiSession, *, progress: Callable[[int, int], None] | None = None
) -> ClusterSnapshot:
    """List everything once; ApiError/ApiTransportError when nodes or pods cannot be listed.
    `progress` is told (collections listed, collections in all) as the listing goes."""
    warnings: list[str] = []
    listed = 0
    # nodes, pods, budgets, namespaces, profiles, workloads, storage and DRA kinds
    collections = 5 + len(WORKLOAD_PATHS) + len(STORAGE_KINDS) + len(DRA_INPUT_KINDS)

    def one_more() -> None:
        nonlocal listed
        listed += 1
        if progress is not None:
            progress(listed, collections)

    nodes = _readable(Node.from_dict, await _list(session, NODES), warnings)
    one_more()
    live = {"fieldSelector": "status.phase!=Succeeded,status.phase!=Failed"}
    pods = _readable(Pod.from_dict, await _list(session, PODS, params=live), warnings)
    one_more()
    node_names = {node.name for node, _ in nodes}
    bound = []
    nominated: dict[str, list[Pod]] = {}
    for pod, raw in pods:
        if not pod.node_name:
            # Pending: the live scheduler's business, not placed here; a nomination is kept.
            if pod.nominated_node_name:
                nominated.setdefault(pod.nominated_node_name, []).append(pod)
            continue
        if pod.node_name not in node_names:
            warnings.append(
                f"{CLUSTER}: Pod {brief_name(pod.key)}: spec.nodeName: node "
                f"{brief(pod.node_name)} does not exist; the pod is left out"
            )
            continue
        bound.append((pod, raw))
    no_budgets = "preemption sees no PodDisruptionBudget"
    pdb_raws = await _list_optional(session, PDBS, warnings, consequence=no_budgets) or []
    one_more()
    no_labels = "affinity namespaceSelectors match no namespace"
    namespace_raws = await _list_optional(session, NAMESPACES, warnings, consequence=no_labels)
    one_more()
    workloads = []
    for kind, path in WORKLOAD_PATHS.items():
        no_defaults = f"topology spread system defaults ignore {kind}s"
        raws = await _list_optional(session, path, warnings, consequence=no_defaults)
        one_more()
        workloads.extend(_workloads(kind, raws or [], warnings))
    profiles = await _list_optional(
        session, PROFILES, warnings, consequence="kube-scheduler's default profile is used"
    )
    one_more()
    storage = await _list_kinds(
        session, STORAGE_KINDS, warnings, who_sees="the volume plugins see", listed=one_more
    )
    dra = await _list_kinds(
        session, DRA_INPUT_KINDS, warnings, who_sees="DynamicResources sees", listed=one_more
    )
    pdbs = _readable(PodDisruptionBudget.from_dict, pdb_raws, warnings)
    return ClusterSnapshot(
        nodes=[node for node, _ in nodes],
        bound_pods=[pod for pod, _ in bound],
        pdbs=[pdb for pdb, _ in pdbs],
        namespaces=_namespace_labels(namespace_raws or []),
        workloads=workloads,
        profile_documents=profiles,
        warnings=warnings,
        nominated=nominated,
        storage=[obj for objects in storage.values() for obj, _ in objects],
        dra=[obj for objects in dra.values() for obj, _ in objects],
        raw={
            "Node": [raw for _, raw in nodes],
            "Pod": [raw for _, raw in bound],
            "PodDisruptionBudget": [raw for _, raw in pdbs],
            **{kind: [raw for _, raw in objects] for kind, objects in storage.items()},
            **{kind: [raw for _, raw in objects] for kind, objects in dra.items()},
        },
    )


async def _list_kinds(
    session: ApiSession,
    kinds: tuple[WatchedKind[T], ...],
    warnings: list[str],
    *,
    who_sees: str,
    listed: Callable[[], None],
) -> dict[str, list[tuple[T, dict[str, Any]]]]:
    """Each of `kinds`, readable objects with their raw form; `listed` after each collection."""
    found: dict[str, list[tuple[T, dict[str, Any]]]] = {}
    for watched in kinds:
        raws = await _list_optional(
            session, watched.list_path, warnings, consequence=f"{who_sees} no {watched.kind}"
        )
        listed()
        found[watched.kind] = _readable(watched.parse, raws or [], warnings)
    return found


def read_live(
    kubeconfig: Path, context: str | None, read: Callable[[ApiSession], Awaitable[T]]
) -> T:
    """Run `read` on a session to the cluster of `kubeconfig`; every failure to reach or read
    the cluster is an `InputError` in one line."""
    try:
        info, token_file = connection_info_from_kubeconfig(kubeconfig, context)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, yaml.YAMLError) as error:
        # A missing file, bad YAML, or a document that is not a kubeconfig.
        raise InputError(f"{kubeconfig}: cannot use this kubeconfig: {error}") from None

    async def session_read() -> T:
        async with ApiSession.from_connection_info(info, token_file=token_file) as session:
            return await read(session)

    try:
        return asyncio.run(session_read())
    except OSError as error:  # the CA or client certificate files (ssl.SSLError included)
        raise InputError(f"{kubeconfig}: cannot use its credentials: {error}") from None
    except (ApiError, ApiTransportError) as error:
        raise InputError(f"{CLUSTER}: cannot read it: {error}") from None


# kind -> apiVersion: list items come without them, a file read offline needs both.
SNAPSHOT_API_VERSIONS = {
    "Node": "v1",
    "Pod": "v1",
    "PodDisruptionBudget": "policy/v1",
    "SchedulerProfile": "berth.dev/v1alpha1",
    **{watched.kind: watched.api_version for watched in (*STORAGE_KINDS, *DRA_INPUT_KINDS)},
}
SNAPSHOT_FILES = {
    "nodes.yaml": ("Node",),
    "existing.yaml": ("Pod", "PodDisruptionBudget"),
    "objects.yaml": tuple(watched.kind for watched in (*STORAGE_KINDS, *DRA_INPUT_KINDS)),
    "profiles.yaml": ("SchedulerProfile",),
}


def _as_document(kind: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    metadata = {k: v for k, v in (raw.get("metadata") or {}).items() if k != "managedFields"}
    return {**raw, "apiVersion": SNAPSHOT_API_VERSIONS[kind], "kind": kind, "metadata": metadata}


def write_snapshot(directory: Path, snapshot: ClusterSnapshot) -> None:
    """The snapshot as List files that --nodes, --existing and --profile read back."""
    by_kind = {**snapshot.raw, "SchedulerProfile": snapshot.profile_documents or []}
    directory.mkdir(parents=True, exist_ok=True)
    for name, kinds in SNAPSHOT_FILES.items():
        items = [_as_document(kind, raw) for kind in kinds for raw in by_kind.get(kind, [])]
        document = {"apiVersion": "v1", "kind": "List", "items": items}
        (directory / name).write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")


def cluster_profiles(
    documents: list[dict[str, Any]], registry: Registry | None, warnings: list[str]
) -> dict[str, Framework]:
    """The profiles the operator would serve: valid ones, the first of a schedulerName wins."""
    profiles: dict[str, Framework] = {}
    for document in documents:
        try:
            loaded = load_profile(document, registry=registry)
        except InvalidObjectError as error:
            warnings.append(f"{CLUSTER}: skipped a profile Berth does not serve: {error}")
            continue
        if loaded.scheduler_name in profiles:
            warnings.append(
                f"{CLUSTER}: SchedulerProfile {brief_name(loaded.name)}: spec.schedulerName: "
                f"{brief(loaded.scheduler_name)} is served by another profile already; skipped"
            )
            continue
        profiles[loaded.scheduler_name] = loaded.framework
    return profiles


def load_cluster_input(
    args: argparse.Namespace, *, registry: Registry | None = None
) -> SimulationInput:
    """The snapshot, the --pods file and the profiles (--profile, else the cluster's) as
    simulation input; `InputError` when unusable."""
    if args.existing is not None:
        raise InputError(
            "--existing: cannot be combined with --from-cluster (bound pods and "
            "PodDisruptionBudgets come from the cluster)"
        )
    if getattr(args, "objects", None) is not None:
        raise InputError(
            "--objects: cannot be combined with --from-cluster (storage and DRA objects come "
            "from the cluster)"
        )
    profiles = load_profiles(args.profile, registry=registry) if args.profile else None
    progress = listing_progress(sys.stderr)
    snapshot = read_live(
        kubeconfig_path(args.kubeconfig),
        args.context,
        lambda session: read_snapshot(session, progress=progress),
    )
    if args.snapshot_to is not None:
        try:
            write_snapshot(args.snapshot_to, snapshot)
        except OSError as error:
            raise InputError(f"{args.snapshot_to}: cannot save the snapshot: {error}") from None
    # After the snapshot: DaemonSets need its nodes.
    pods, workload_claims = load_pods(args.pods, snapshot.nodes)
    refuse_duplicate_pods(
        [(args.pods, pod) for pod in pods] + [(CLUSTER, pod) for pod in snapshot.bound_pods]
    )
    warnings = list(snapshot.warnings)
    if profiles is None and snapshot.profile_documents:
        profiles = cluster_profiles(snapshot.profile_documents, registry, warnings) or None
    return SimulationInput(
        nodes=snapshot.nodes,
        pods=pods,
        existing=snapshot.bound_pods,
        pdbs=snapshot.pdbs,
        profiles=profiles,
        warnings=warnings,
        namespaces=snapshot.namespaces,
        workloads=snapshot.workloads,
        storage=load_storage([(CLUSTER, obj) for obj in snapshot.storage], workload_claims),
        dra=load_dra([(CLUSTER, obj) for obj in snapshot.dra]),
    )
