"""The JSON bodies of the extender protocol, exactly as kube-scheduler v1.37 writes and reads them.

The types in k8s.io/kube-scheduler/extender/v1 have no json tags, so their
fields travel under Go's names (`Pod`, `Nodes`, `NodeNames`, `FailedNodes`...),
an unused pointer is `null` rather than absent, and a NodeList is
`{"metadata": {}, "items": [...]}`. The objects inside are what
kube-scheduler's informers hold: no `kind`/`apiVersion`, and pods without
`metadata.managedFields` (its pod informer drops them; nodes keep theirs).
tests/data/extender/ holds bodies captured from the real kube-scheduler.

Reading follows Go's encoding/json: a field matches its name exactly, else
case-insensitively; unknown fields are ignored; `null` is the zero value.
Anything of the wrong shape is a `WireError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

JsonObject = dict[str, Any]


class WireError(ValueError):
    """An extender's reply does not have the shape of the result it must be."""


# ------------------------------------------------------------------ objects as the informers hold them


def informer_pod(raw: Mapping[str, Any]) -> JsonObject:
    """A pod as kube-scheduler sends it: without kind, apiVersion and managedFields."""
    pod = {key: value for key, value in raw.items() if key not in ("kind", "apiVersion")}
    metadata = pod.get("metadata")
    if isinstance(metadata, Mapping) and "managedFields" in metadata:
        pod["metadata"] = {k: v for k, v in metadata.items() if k != "managedFields"}
    return pod


def informer_node(raw: Mapping[str, Any]) -> JsonObject:
    """A node as kube-scheduler sends it: without kind and apiVersion (managedFields stay)."""
    return {key: value for key, value in raw.items() if key not in ("kind", "apiVersion")}


def _node_name(raw: Mapping[str, Any]) -> str:
    metadata = raw.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return name if isinstance(name, str) else ""


# ------------------------------------------------------------------ requests


def encode_extender_args(
    *, pod: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]], node_cache_capable: bool
) -> JsonObject:
    """ExtenderArgs for filter and prioritize: node names only when the extender caches nodes."""
    if node_cache_capable:
        return {
            "Pod": informer_pod(pod),
            "Nodes": None,
            "NodeNames": [_node_name(n) for n in nodes],
        }
    items = [informer_node(node) for node in nodes]
    return {"Pod": informer_pod(pod), "Nodes": {"metadata": {}, "items": items}, "NodeNames": None}


def encode_binding_args(*, namespace: str, name: str, uid: str, node: str) -> JsonObject:
    """ExtenderBindingArgs: the pod by name, namespace and UID, and the chosen node."""
    return {"PodName": name, "PodNamespace": namespace, "PodUID": uid, "Node": node}


@dataclass(frozen=True, slots=True)
class Victims:
    """The pods preemption would evict on one node (full objects), and the budgets that breaks."""

    pods: tuple[Mapping[str, Any], ...]
    num_pdb_violations: int = 0


@dataclass(frozen=True, slots=True)
class MetaVictims:
    """Victims by UID: what an extender answers (and is sent, when it caches nodes)."""

    uids: tuple[str, ...]
    num_pdb_violations: int = 0


def _uid(raw: Mapping[str, Any]) -> str:
    metadata = raw.get("metadata")
    uid = metadata.get("uid") if isinstance(metadata, Mapping) else None
    return uid if isinstance(uid, str) else ""


def encode_preemption_args(
    *,
    pod: Mapping[str, Any],
    victims: Mapping[str, Victims],
    node_cache_capable: bool,
) -> JsonObject:
    """ExtenderPreemptionArgs: victims as UIDs when the extender caches nodes, else whole pods."""
    if node_cache_capable:
        meta = {
            node: {
                "Pods": [{"UID": _uid(victim)} for victim in found.pods],
                "NumPDBViolations": found.num_pdb_violations,
            }
            for node, found in victims.items()
        }
        return {"Pod": informer_pod(pod), "NodeNameToVictims": None, "NodeNameToMetaVictims": meta}
    full = {
        node: {
            "Pods": [informer_pod(victim) for victim in found.pods],
            "NumPDBViolations": found.num_pdb_violations,
        }
        for node, found in victims.items()
    }
    return {"Pod": informer_pod(pod), "NodeNameToVictims": full, "NodeNameToMetaVictims": None}


# ------------------------------------------------------------------ results


def _get(raw: Mapping[str, Any], name: str) -> Any:
    """A field as Go's decoder finds it: the exact name, else the first case-insensitive match."""
    if name in raw:
        return raw[name]
    folded = name.casefold()
    for key, value in raw.items():
        if isinstance(key, str) and key.casefold() == folded:
            return value
    return None


def _object(raw: Any, what: str) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise WireError(f"{what}: expected an object, got {type(raw).__name__}")
    return raw


def _string(raw: Any, what: str) -> str:
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise WireError(f"{what}: expected a string, got {type(raw).__name__}")
    return raw


def _integer(raw: Any, what: str) -> int:
    if raw is None:
        return 0
    if isinstance(raw, bool) or not isinstance(raw, int):
        # Go decodes 3.0 into an int64 only if it has no fraction; so do we.
        if isinstance(raw, float) and raw.is_integer():
            return int(raw)
        raise WireError(f"{what}: expected an integer, got {raw!r}")
    return raw


def _string_list(raw: Any, what: str) -> tuple[str, ...]:
    if not isinstance(raw, list):
        raise WireError(f"{what}: expected a list, got {type(raw).__name__}")
    return tuple(_string(item, f"{what}[{index}]") for index, item in enumerate(raw))


def _reasons(raw: Any, what: str) -> dict[str, str]:
    return {
        str(node): _string(reason, f"{what}.{node}") for node, reason in _object(raw, what).items()
    }


@dataclass(frozen=True, slots=True)
class FilterResult:
    """ExtenderFilterResult, read as kube-scheduler reads it.

    `node_names` are the nodes that passed. `from_node_objects` says they came
    back as full Node objects (the extender does not cache nodes, or sent no
    names): kube-scheduler then continues with fresh node infos built from
    those objects alone (`node_objects`), without the pods on them.
    """

    node_names: tuple[str, ...] = ()
    from_node_objects: bool = False
    node_objects: tuple[Mapping[str, Any], ...] = ()
    failed: Mapping[str, str] = field(default_factory=dict)
    failed_and_unresolvable: Mapping[str, str] = field(default_factory=dict)
    error: str = ""


def decode_filter_result(raw: Any, *, node_cache_capable: bool) -> FilterResult:
    body = _object(raw, "ExtenderFilterResult")
    failed = _reasons(_get(body, "FailedNodes"), "FailedNodes")
    unresolvable = _reasons(_get(body, "FailedAndUnresolvableNodes"), "FailedAndUnresolvableNodes")
    error = _string(_get(body, "Error"), "Error")
    names = _get(body, "NodeNames")
    if node_cache_capable and names is not None:
        return FilterResult(
            node_names=_string_list(names, "NodeNames"),
            failed=failed,
            failed_and_unresolvable=unresolvable,
            error=error,
        )
    node_list = _get(body, "Nodes")
    items = _get(_object(node_list, "Nodes"), "items") if node_list is not None else None
    objects = tuple(
        _object(item, f"Nodes.items[{index}]") for index, item in enumerate(items or [])
    )
    return FilterResult(
        node_names=tuple(_node_name(item) for item in objects),
        from_node_objects=node_list is not None,
        node_objects=objects,
        failed=failed,
        failed_and_unresolvable=unresolvable,
        error=error,
    )


@dataclass(frozen=True, slots=True)
class HostPriority:
    host: str
    score: int


def decode_host_priority_list(raw: Any) -> tuple[HostPriority, ...]:
    """HostPriorityList: `[{"Host": ..., "Score": ...}]`; null is an empty list."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise WireError(f"HostPriorityList: expected a list, got {type(raw).__name__}")
    priorities = []
    for index, item in enumerate(raw):
        entry = _object(item, f"HostPriorityList[{index}]")
        priorities.append(
            HostPriority(
                host=_string(_get(entry, "Host"), f"HostPriorityList[{index}].Host"),
                score=_integer(_get(entry, "Score"), f"HostPriorityList[{index}].Score"),
            )
        )
    return tuple(priorities)


def decode_binding_result(raw: Any) -> str:
    """ExtenderBindingResult: its `Error` ("" = bound)."""
    return _string(_get(_object(raw, "ExtenderBindingResult"), "Error"), "Error")


def decode_preemption_result(raw: Any) -> dict[str, MetaVictims]:
    """ExtenderPreemptionResult: node -> victims by UID (an extender always answers in UIDs)."""
    body = _object(raw, "ExtenderPreemptionResult")
    nodes = _object(_get(body, "NodeNameToMetaVictims"), "NodeNameToMetaVictims")
    decoded = {}
    for node, victims in nodes.items():
        where = f"NodeNameToMetaVictims.{node}"
        if victims is None:
            raise WireError(f"{where}: null victims")
        entry = _object(victims, where)
        pods = _get(entry, "Pods")
        if pods is not None and not isinstance(pods, list):
            raise WireError(f"{where}.Pods: expected a list, got {type(pods).__name__}")
        uids = tuple(
            _string(_get(_object(pod, f"{where}.Pods[{i}]"), "UID"), f"{where}.Pods[{i}].UID")
            for i, pod in enumerate(pods or [])
        )
        violations = _integer(_get(entry, "NumPDBViolations"), f"{where}.NumPDBViolations")
        decoded[str(node)] = MetaVictims(uids, violations)
    return decoded
