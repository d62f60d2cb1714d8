"""What every workload controller shares when it makes pods: the workload's parts, its selector
check, the owner reference, and a pod made from the template.

A pod that cannot be parsed reports its field under `spec.template`, where the user wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from berth.cli.controller_names import object_uid
from berth.engine.errors import FieldError, InvalidObjectError
from berth.engine.model.labels import parse_label_selector
from berth.engine.model.parsing import as_int, as_map, as_str, as_string_map
from berth.engine.model.pod import Pod

__all__ = [
    "APPS",
    "BATCH",
    "Owner",
    "Workload",
    "make_pod",
    "read_workload",
    "replica_count",
    "require_selector",
]

APPS = "apps/v1"
BATCH = "batch/v1"


@dataclass(frozen=True, slots=True)
class Owner:
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
class Workload:
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

    def owner(self, api_version: str) -> Owner:
        return Owner(api_version, self.kind, self.name, self.uid)


def read_workload(raw: Mapping[str, Any]) -> Workload:
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
    return Workload(
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


def replica_count(workload: Workload, key: str, *, default: int | None) -> int | None:
    """A non-negative int32 count in `spec` (replicas, parallelism, completions)."""
    value = workload.spec.get(key)
    if value is None:
        return default
    count = as_int(value, f"spec.{key}", bits=32)
    if count < 0:
        raise FieldError(f"spec.{key}", f"must be greater than or equal to 0, got {count}")
    return count


def require_selector(workload: Workload) -> None:
    """apps/v1 validation: a non-empty `spec.selector` that selects the template's labels."""
    selector = parse_label_selector(workload.spec.get("selector"), "spec.selector")
    if selector is None or selector.is_empty:
        raise FieldError("spec.selector", "must be set and not empty")
    if not selector.matches(workload.labels):
        raise FieldError(
            "spec.template.metadata.labels", "`selector` does not match template `labels`"
        )


def make_pod(
    workload: Workload,
    *,
    name: str,
    owner: Owner,
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
