"""Services and controllers as the engine's `Workload` selectors (for spread system defaults)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.engine.cluster import Workload
from berth.engine.errors import FieldError
from berth.engine.model.labels import parse_label_selector

KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")


def workload_from_dict(kind: str, raw: Mapping[str, Any]) -> Workload:
    """Reduce a Service/RC (label map) or ReplicaSet/StatefulSet (label selector) to its selector."""
    metadata = raw.get("metadata") or {}
    spec = raw.get("spec") or {}
    namespace = metadata.get("namespace") or "default"
    name = metadata.get("name") or ""
    if kind in ("Service", "ReplicationController"):
        selector = spec.get("selector") or {}
        pairs = tuple(sorted((str(k), str(v)) for k, v in selector.items()))
        return Workload(kind=kind, namespace=namespace, name=name, map_selector=pairs)
    try:
        parsed = parse_label_selector(spec.get("selector"), "spec.selector")
    except FieldError:
        parsed = None
    return Workload(kind=kind, namespace=namespace, name=name, selector=parsed)
