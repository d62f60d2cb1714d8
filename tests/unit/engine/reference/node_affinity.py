"""NodeAffinity per node from raw pod and node dicts, straight from the behaviour notes (§2.4, §3.8)."""

from __future__ import annotations

import re
from typing import Any

_INT = re.compile(r"[+-]?[0-9]+\Z")
# apimachinery's label value format (labels.NewRequirement checks every value against it).
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")


def _as_int(text: str) -> int | None:
    if not _INT.match(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def expression_matches(expression: dict[str, Any], labels: dict[str, str]) -> bool | None:
    """None when the expression is malformed (the whole term then never matches)."""
    key, operator, values = (
        expression["key"],
        expression["operator"],
        expression.get("values") or [],
    )
    if any(len(value) > 63 or not _LABEL_VALUE.match(value) for value in values):
        return None
    if operator == "In":
        return None if not values else bool(key in labels and labels[key] in values)
    if operator == "NotIn":
        return None if not values else bool(key not in labels or labels[key] not in values)
    if operator == "Exists":
        return None if values else key in labels
    if operator == "DoesNotExist":
        return None if values else key not in labels
    if operator in ("Gt", "Lt"):
        if len(values) != 1 or _as_int(values[0]) is None:
            return None
        have = _as_int(labels[key]) if key in labels else None
        if have is None:
            return False
        bound = _as_int(values[0])
        assert bound is not None
        return have > bound if operator == "Gt" else have < bound
    return None


def field_matches(field: dict[str, Any], node_name: str) -> bool | None:
    values: list[str] = field.get("values") or []
    if field["key"] != "metadata.name" or len(values) != 1:
        return None
    if field["operator"] == "In":
        return node_name == values[0]
    if field["operator"] == "NotIn":
        return node_name != values[0]
    return None


def term_matches(term: dict[str, Any], node: dict[str, Any]) -> bool:
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False
    labels = node["metadata"].get("labels", {})
    verdicts = [expression_matches(e, labels) for e in expressions]
    verdicts += [field_matches(f, node["metadata"]["name"]) for f in fields]
    if any(v is None for v in verdicts):
        return False
    return all(verdicts)


def passes(pod: dict[str, Any], node: dict[str, Any], added_required: Any = None) -> str | None:
    """None when the node passes, else the failure reason."""
    if added_required is not None and not any(
        term_matches(t, node) for t in added_required.get("nodeSelectorTerms") or []
    ):
        return "node(s) didn't match scheduler-enforced node affinity"
    labels = node["metadata"].get("labels", {})
    selector = pod["spec"].get("nodeSelector") or {}
    required = (
        pod["spec"]
        .get("affinity", {})
        .get("nodeAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution")
    )
    ok = all(labels.get(k) == v for k, v in selector.items())
    if ok and required is not None:
        ok = any(term_matches(t, node) for t in required.get("nodeSelectorTerms") or [])
    return None if ok else "node(s) didn't match Pod's node affinity/selector"


def raw_score(pod: dict[str, Any], node: dict[str, Any], added_preferred: Any = ()) -> int:
    preferred = (
        pod["spec"]
        .get("affinity", {})
        .get("nodeAffinity", {})
        .get("preferredDuringSchedulingIgnoredDuringExecution")
        or []
    )
    return sum(
        p["weight"] for p in [*added_preferred, *preferred] if term_matches(p["preference"], node)
    )


def normalized_scores(
    pod: dict[str, Any], nodes: list[dict[str, Any]], added_preferred: Any = ()
) -> list[int]:
    raw = [raw_score(pod, node, added_preferred) for node in nodes]
    highest = max(raw, default=0)
    if highest <= 0:
        return raw
    return [100 * r // highest for r in raw]
