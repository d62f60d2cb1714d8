"""Workloads in `berth simulate --pods`: the pods their controllers would create, so that users can
simulate the manifests they actually have.

Each kind follows its controller in kube-controller-manager v1.37 (pkg/controller):

- ReplicaSet: `spec.replicas` pods (default 1) from the template, `generateName: <rs>-`.
- Deployment: the ReplicaSet `<deploy>-<pod-template-hash>` it would create, and that set's pods,
  labelled `pod-template-hash`. A paused Deployment creates no ReplicaSet, hence no pods.
- StatefulSet: pods `<sts>-<ordinal>` for ordinals `spec.ordinals.start` onwards, labelled
  `statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index` and
  `controller-revision-hash: <sts>-<hash>`, with hostname, subdomain (`spec.serviceName`) and one
  PersistentVolumeClaim volume `<template>-<sts>-<ordinal>` per `volumeClaimTemplates` entry.
  They are listed in ordinal order (what OrderedReady waits for; Parallel creates them at once).
- Job: as many pods as run at once, `min(parallelism, completions)` (none when suspended), labelled
  `job-name`, `controller-uid` and their `batch.kubernetes.io/` forms unless `manualSelector`;
  an Indexed Job's pods carry `batch.kubernetes.io/job-completion-index` (label and annotation)
  with indexes 0.., hostname `<job>-<index>` and `generateName: <job>-<index>-`.
- DaemonSet: one pod per node the controller's `NodeShouldRunDaemonPod` accepts (the template's
  `nodeName`, `nodeSelector` and required node affinity, and NoSchedule/NoExecute taints against
  the template's tolerations plus the defaults every daemon pod gets), pinned to its node by a
  required node affinity `matchFields: metadata.name In [node]`, labelled
  `controller-revision-hash` and `pod-template-generation`.

Every pod has a controller owner reference to its ReplicaSet, StatefulSet, Job or DaemonSet (the
owner kube-scheduler's default spreading looks up). Random names, UIDs and hashes are replaced by
deterministic ones (`berth.cli.controller_names`). Bad workload fields raise `InvalidObjectError`
naming the workload and the field, template fields under `spec.template`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.cli.controller_names import generated_name, object_uid, template_hash
from berth.engine.errors import FieldError, InvalidObjectError
from berth.engine.model.labels import parse_label_selector
from berth.engine.model.node import Node
from berth.engine.model.parsing import (
    as_bool,
    as_int,
    as_list,
    as_map,
    as_str,
    as_string_map,
    brief,
    display_name,
)
from berth.engine.model.pod import Pod
from berth.engine.nodematch import first_untolerated_taint, pod_matches_node

__all__ = ["WORKLOAD_KINDS", "expand_workload"]

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "Job", "DaemonSet")

APPS = "apps/v1"
BATCH = "batch/v1"

# The tolerations the DaemonSet controller adds to every daemon pod (AddOrUpdateDaemonPodTolerations).
_DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
_HOST_NETWORK_TOLERATION = ("node.kubernetes.io/network-unavailable", "NoSchedule")


@dataclass(frozen=True, slots=True)
class _Owner:
    api_version: str
    kind: str
    name: str
    uid: str

    def reference(self) -> dict[str, Any]:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "name": self.name,
            "uid": self.uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }


@dataclass(frozen=True, slots=True)
class _Workload:
    """The parts of a workload every controller reads."""

    kind: str
    namespace: str
    name: str
    uid: str
    generation: int
    spec: Mapping[str, Any]
    template: Mapping[str, Any]
    labels: dict[str, str]
    annotations: dict[str, str]
    pod_spec: Mapping[str, Any]

    def owner(self, api_version: str) -> _Owner:
        return _Owner(api_version, self.kind, self.name, self.uid)


def _read_workload(raw: Mapping[str, Any]) -> _Workload:
    kind = str(raw["kind"])
    metadata = as_map(raw.get("metadata"), "metadata")
    name = as_str(metadata.get("name"), "metadata.name")
    if not name:
        raise FieldError("metadata.name", "must be set")
    namespace = as_str(metadata.get("namespace"), "metadata.namespace") or "default"
    uid = as_str(metadata.get("uid"), "metadata.uid") or object_uid(kind, namespace, name)
    spec = as_map(raw.get("spec"), "spec")
    template = as_map(spec.get("template"), "spec.template")
    template_metadata = as_map(template.get("metadata"), "spec.template.metadata")
    return _Workload(
        kind=kind,
        namespace=namespace,
        name=name,
        uid=uid,
        generation=as_int(metadata.get("generation"), "metadata.generation", 1) or 1,
        spec=spec,
        template=template,
        labels=as_string_map(template_metadata.get("labels"), "spec.template.metadata.labels"),
        annotations=as_string_map(
            template_metadata.get("annotations"), "spec.template.metadata.annotations"
        ),
        pod_spec=as_map(template.get("spec"), "spec.template.spec"),
    )


def _count(workload: _Workload, key: str, default: int | None) -> int | None:
    value = workload.spec.get(key)
    if value is None:
        return default
    count = as_int(value, f"spec.{key}", bits=32)
    if count < 0:
        raise FieldError(f"spec.{key}", f"must be greater than or equal to 0, got {count}")
    return count


def _require_selector(workload: _Workload) -> None:
    """apps/v1 validation: a non-empty `spec.selector` that selects the template's labels."""
    selector = parse_label_selector(workload.spec.get("selector"), "spec.selector")
    if selector is None or selector.is_empty:
        raise FieldError("spec.selector", "must be set and not empty")
    if not selector.matches(workload.labels):
        raise FieldError(
            "spec.template.metadata.labels", "`selector` does not match template `labels`"
        )


def _make_pod(
    workload: _Workload,
    *,
    name: str,
    owner: _Owner,
    labels: Mapping[str, str],
    annotations: Mapping[str, str] | None = None,
    spec: Mapping[str, Any] | None = None,
) -> Pod:
    raw = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": workload.namespace,
            "uid": object_uid("Pod", workload.namespace, name),
            "labels": dict(labels),
            "annotations": dict(workload.annotations if annotations is None else annotations),
            "ownerReferences": [owner.reference()],
        },
        "spec": workload.pod_spec if spec is None else spec,
    }
    try:
        return Pod.from_dict(raw)
    except InvalidObjectError as error:
        # The fields of the pod are the fields of the workload's template.
        raise FieldError(f"spec.template.{error.field}", error.problem) from None


def _replica_set_pods(workload: _Workload, owner: _Owner, labels: Mapping[str, str]) -> list[Pod]:
    replicas = _count(workload, "replicas", 1) or 0
    return [
        _make_pod(
            workload, name=generated_name(f"{owner.name}-", index), owner=owner, labels=labels
        )
        for index in range(replicas)
    ]


def _expand_replica_set(workload: _Workload, _nodes: Sequence[Node]) -> list[Pod]:
    _require_selector(workload)
    return _replica_set_pods(workload, workload.owner(APPS), workload.labels)


def _expand_deployment(workload: _Workload, _nodes: Sequence[Node]) -> list[Pod]:
    _require_selector(workload)
    if as_bool(workload.spec.get("paused"), "spec.paused"):
        return []
    pod_template_hash = template_hash(workload.template)
    rs_name = f"{workload.name}-{pod_template_hash}"
    owner = _Owner(
        APPS, "ReplicaSet", rs_name, object_uid("ReplicaSet", workload.namespace, rs_name)
    )
    labels = {**workload.labels, "pod-template-hash": pod_template_hash}
    return _replica_set_pods(workload, owner, labels)


def _with_claim_volumes(workload: _Workload, spec: dict[str, Any], ordinal: int) -> None:
    """The StatefulSet controller's updateStorage: one claim volume per volumeClaimTemplate."""
    claims = as_list(workload.spec.get("volumeClaimTemplates"), "spec.volumeClaimTemplates")
    if not claims:
        return
    volumes = as_list(spec.get("volumes"), "spec.template.spec.volumes")
    by_name = {}
    for index, claim in enumerate(claims):
        field = f"spec.volumeClaimTemplates[{index}]"
        claim_metadata = as_map(as_map(claim, field).get("metadata"), f"{field}.metadata")
        claim_name = as_str(claim_metadata.get("name"), f"{field}.metadata.name")
        if not claim_name:
            raise FieldError(f"{field}.metadata.name", "must be set")
        by_name[claim_name] = {
            "name": claim_name,
            "persistentVolumeClaim": {"claimName": f"{claim_name}-{workload.name}-{ordinal}"},
        }
    kept = [v for v in volumes if not (isinstance(v, Mapping) and v.get("name") in by_name)]
    spec["volumes"] = [*kept, *by_name.values()]


def _expand_stateful_set(workload: _Workload, _nodes: Sequence[Node]) -> list[Pod]:
    _require_selector(workload)
    replicas = _count(workload, "replicas", 1) or 0
    ordinals = as_map(workload.spec.get("ordinals"), "spec.ordinals")
    start = as_int(ordinals.get("start"), "spec.ordinals.start", bits=32)
    if start < 0:
        raise FieldError("spec.ordinals.start", f"must be greater than or equal to 0, got {start}")
    revision = f"{workload.name}-{template_hash(workload.template)}"
    service = as_str(workload.spec.get("serviceName"), "spec.serviceName")
    owner = workload.owner(APPS)
    pods = []
    for ordinal in range(start, start + replicas):
        name = f"{workload.name}-{ordinal}"
        spec = copy.deepcopy(dict(workload.pod_spec))
        spec["hostname"] = name
        if service:
            spec["subdomain"] = service
        _with_claim_volumes(workload, spec, ordinal)
        labels = {
            **workload.labels,
            "statefulset.kubernetes.io/pod-name": name,
            "apps.kubernetes.io/pod-index": str(ordinal),
            "controller-revision-hash": revision,
        }
        pods.append(_make_pod(workload, name=name, owner=owner, labels=labels, spec=spec))
    return pods


def _job_pod_count(workload: _Workload) -> int:
    if as_bool(workload.spec.get("suspend"), "spec.suspend"):
        return 0
    completions = _count(workload, "completions", None)
    parallelism = _count(workload, "parallelism", 1) or 0
    return parallelism if completions is None else min(parallelism, completions)


def _expand_job(workload: _Workload, _nodes: Sequence[Node]) -> list[Pod]:
    mode = as_str(workload.spec.get("completionMode"), "spec.completionMode", "NonIndexed")
    if mode not in ("NonIndexed", "Indexed"):
        raise FieldError(
            "spec.completionMode", f"expected NonIndexed or Indexed, got {brief(mode)}"
        )
    if mode == "Indexed" and workload.spec.get("completions") is None:
        raise FieldError("spec.completions", "must be set when completionMode is Indexed")
    labels = dict(workload.labels)
    if not as_bool(workload.spec.get("manualSelector"), "spec.manualSelector"):
        # The API server's generateSelector: labels the user set are kept.
        for key in ("job-name", "batch.kubernetes.io/job-name"):
            labels.setdefault(key, workload.name)
        for key in ("controller-uid", "batch.kubernetes.io/controller-uid"):
            labels.setdefault(key, workload.uid)
    owner = workload.owner(BATCH)
    count = _job_pod_count(workload)
    if mode == "NonIndexed":
        return [
            _make_pod(
                workload, name=generated_name(f"{workload.name}-", i), owner=owner, labels=labels
            )
            for i in range(count)
        ]
    pods = []
    for index in range(count):
        marker = {"batch.kubernetes.io/job-completion-index": str(index)}
        spec = {**workload.pod_spec, "hostname": f"{workload.name}-{index}"}
        pods.append(
            _make_pod(
                workload,
                name=generated_name(_indexed_prefix(workload.name, index), 0),
                owner=owner,
                labels={**labels, **marker},
                annotations={**workload.annotations, **marker},
                spec=spec,
            )
        )
    return pods


def _indexed_prefix(job_name: str, index: int) -> str:
    """podGenerateNameWithIndex: the index survives when the Job's name is cut."""
    suffix = f"-{index}-"
    prefix = job_name + suffix
    if len(prefix) > 58:
        prefix = prefix[: 58 - len(suffix)] + suffix
    return prefix


def _daemon_tolerations(spec: Mapping[str, Any]) -> list[Any]:
    tolerations = list(as_list(spec.get("tolerations"), "spec.template.spec.tolerations"))
    wanted = list(_DAEMON_TOLERATIONS)
    if as_bool(spec.get("hostNetwork"), "spec.template.spec.hostNetwork"):
        wanted.append(_HOST_NETWORK_TOLERATION)
    for key, effect in wanted:
        # AddOrUpdateTolerationInPodSpec: an equal toleration is not added twice.
        if not any(
            isinstance(t, Mapping)
            and t.get("key") == key
            and t.get("operator") == "Exists"
            and not t.get("value")
            and t.get("effect") == effect
            for t in tolerations
        ):
            tolerations.append({"key": key, "operator": "Exists", "effect": effect})
    return tolerations


def _pinned_to(spec: Mapping[str, Any], node_name: str) -> dict[str, Any]:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required node terms become the node's name."""
    affinity = copy.deepcopy(dict(as_map(spec.get("affinity"), "spec.template.spec.affinity")))
    node_affinity = dict(
        as_map(affinity.get("nodeAffinity"), "spec.template.spec.affinity.nodeAffinity")
    )
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
        ]
    }
    affinity["nodeAffinity"] = node_affinity
    return {**spec, "affinity": affinity}


def _should_run(template_pod: Pod, node: Node) -> bool:
    """NodeShouldRunDaemonPod's `shouldRun` for a node without the DaemonSet's pod yet."""
    if template_pod.node_name and template_pod.node_name != node.name:
        return False
    return pod_matches_node(template_pod, node) and (
        first_untolerated_taint(node.taints, template_pod.tolerations) is None
    )


def _expand_daemon_set(workload: _Workload, nodes: Sequence[Node]) -> list[Pod]:
    _require_selector(workload)
    spec = {**workload.pod_spec, "tolerations": _daemon_tolerations(workload.pod_spec)}
    labels = {
        **workload.labels,
        "controller-revision-hash": template_hash(workload.template),
        "pod-template-generation": str(workload.generation),
    }
    owner = workload.owner(APPS)
    template_pod = _make_pod(workload, name=workload.name, owner=owner, labels=labels, spec=spec)
    return [
        _make_pod(
            workload,
            name=generated_name(f"{workload.name}-", index),
            owner=owner,
            labels=labels,
            spec=_pinned_to(spec, node.name),
        )
        for index, node in enumerate(nodes)
        if _should_run(template_pod, node)
    ]


_EXPANDERS: dict[str, Callable[[_Workload, Sequence[Node]], list[Pod]]] = {
    "Deployment": _expand_deployment,
    "ReplicaSet": _expand_replica_set,
    "StatefulSet": _expand_stateful_set,
    "Job": _expand_job,
    "DaemonSet": _expand_daemon_set,
}


def expand_workload(raw: Mapping[str, Any], *, nodes: Sequence[Node]) -> list[Pod]:
    """The pods the controller of `raw` (one of `WORKLOAD_KINDS`) would create on `nodes`.

    Raises `InvalidObjectError` naming the workload and the field at fault.
    """
    kind = str(raw.get("kind"))
    metadata = raw.get("metadata")
    if isinstance(metadata, Mapping):
        namespace = display_name(metadata.get("namespace"), "default")
        display = f"{namespace}/{display_name(metadata.get('name'))}"
    else:
        display = "<unnamed>"
    try:
        return _EXPANDERS[kind](_read_workload(raw), nodes)
    except FieldError as error:
        raise InvalidObjectError(
            kind=kind, name=display, field=error.field, problem=error.problem
        ) from None
