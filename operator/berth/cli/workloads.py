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
- DaemonSet: one pod per node the controller would run it on (`berth.cli.daemon_sets`),
  labelled `controller-revision-hash` and `pod-template-generation`.

Every pod has a controller owner reference to its ReplicaSet, StatefulSet, Job or DaemonSet (the
owner kube-scheduler's default spreading looks up). Random names, UIDs and hashes are replaced by
deterministic ones (`berth.cli.controller_names`). Bad workload fields raise `InvalidObjectError`
naming the workload and the field, template fields under `spec.template`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from berth.cli.controller_names import generated_name, object_uid, template_hash
from berth.cli.daemon_sets import expand_daemon_set
from berth.cli.workload_template import (
    APPS,
    BATCH,
    Owner,
    Workload,
    make_pod,
    read_workload,
    replica_count,
    require_selector,
)
from berth.engine.errors import FieldError, InvalidObjectError
from berth.engine.model.node import Node
from berth.engine.model.parsing import (
    as_bool,
    as_int,
    as_list,
    as_map,
    as_str,
    brief,
    display_name,
)
from berth.engine.model.pod import Pod

__all__ = ["WORKLOAD_KINDS", "expand_workload"]

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "Job", "DaemonSet")


def _replica_set_pods(workload: Workload, *, owner: Owner, labels: Mapping[str, str]) -> list[Pod]:
    replicas = replica_count(workload, "replicas", default=1) or 0
    return [
        make_pod(workload, name=generated_name(f"{owner.name}-", index), owner=owner, labels=labels)
        for index in range(replicas)
    ]


def _expand_replica_set(workload: Workload, _nodes: Sequence[Node]) -> list[Pod]:
    require_selector(workload)
    return _replica_set_pods(workload, owner=workload.owner(APPS), labels=workload.labels)


def _expand_deployment(workload: Workload, _nodes: Sequence[Node]) -> list[Pod]:
    require_selector(workload)
    if as_bool(workload.spec.get("paused"), "spec.paused"):
        return []
    pod_template_hash = template_hash(workload.template)
    rs_name = f"{workload.name}-{pod_template_hash}"
    owner = Owner(
        APPS, "ReplicaSet", rs_name, object_uid("ReplicaSet", workload.namespace, rs_name)
    )
    labels = {**workload.labels, "pod-template-hash": pod_template_hash}
    return _replica_set_pods(workload, owner=owner, labels=labels)


def _with_claim_volumes(workload: Workload, spec: dict[str, Any], *, ordinal: int) -> None:
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
    # Claim volumes first, then the template's others, as updateStorage orders them.
    spec["volumes"] = [*by_name.values(), *kept]


def _expand_stateful_set(workload: Workload, _nodes: Sequence[Node]) -> list[Pod]:
    require_selector(workload)
    replicas = replica_count(workload, "replicas", default=1) or 0
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
        _with_claim_volumes(workload, spec, ordinal=ordinal)
        labels = {
            **workload.labels,
            "statefulset.kubernetes.io/pod-name": name,
            "apps.kubernetes.io/pod-index": str(ordinal),
            "controller-revision-hash": revision,
        }
        pods.append(make_pod(workload, name=name, owner=owner, labels=labels, spec=spec))
    return pods


def _job_pod_count(workload: Workload) -> int:
    if as_bool(workload.spec.get("suspend"), "spec.suspend"):
        return 0
    completions = replica_count(workload, "completions", default=None)
    parallelism = replica_count(workload, "parallelism", default=1) or 0
    return parallelism if completions is None else min(parallelism, completions)


def _expand_job(workload: Workload, _nodes: Sequence[Node]) -> list[Pod]:
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
            make_pod(
                workload, name=generated_name(f"{workload.name}-", i), owner=owner, labels=labels
            )
            for i in range(count)
        ]
    pods = []
    for index in range(count):
        marker = {"batch.kubernetes.io/job-completion-index": str(index)}
        spec = {**workload.pod_spec, "hostname": f"{workload.name}-{index}"}
        pods.append(
            make_pod(
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


_EXPANDERS: dict[str, Callable[[Workload, Sequence[Node]], list[Pod]]] = {
    "Deployment": _expand_deployment,
    "ReplicaSet": _expand_replica_set,
    "StatefulSet": _expand_stateful_set,
    "Job": _expand_job,
    "DaemonSet": expand_daemon_set,
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
        return _EXPANDERS[kind](read_workload(raw), nodes)
    except FieldError as error:
        raise InvalidObjectError(
            kind=kind, name=display, field=error.field, problem=error.problem
        ) from None
