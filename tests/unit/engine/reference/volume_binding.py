"""VolumeBinding node by node, from raw pod, claim, volume, class and CSI dicts.

Follows kube-scheduler's volume binder literally (GetPodVolumeClaims, FindPodVolumes with
bound PVs translated to CSI (`csi_translation`), FindMatchingVolume, checkVolumeProvisions and hasEnoughCapacity, then the capacity
scorer), one node at a time, with nothing shared with the vectorised plugin. Quantities
are whole numbers with an optional binary suffix (the strategies only make those).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.unit.engine.reference import csi_translation

Raw = dict[str, Any]

NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

_SUFFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def quantity(text: str | None) -> int | None:
    if text is None:
        return None
    for suffix, factor in _SUFFIXES.items():
        if text.endswith(suffix):
            return int(text[: -len(suffix)]) * factor
    return int(text)


def _meta(obj: Raw) -> Raw:
    meta: Raw = obj.get("metadata") or {}
    return meta


def _annotations(obj: Raw) -> dict[str, str]:
    annotations: dict[str, str] = _meta(obj).get("annotations") or {}
    return annotations


def claim_class(claim: Raw) -> str:
    annotated = _annotations(claim).get("volume.beta.kubernetes.io/storage-class")
    if annotated is not None:
        return annotated
    return str((claim.get("spec") or {}).get("storageClassName") or "")


def volume_class(volume: Raw) -> str:
    annotated = _annotations(volume).get("volume.beta.kubernetes.io/storage-class")
    if annotated is not None:
        return annotated
    return str(volume["spec"].get("storageClassName") or "")


def requested(claim: Raw) -> int:
    requests = ((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}
    return quantity(requests.get("storage")) or 0


def _match_labels(selector: Raw | None, labels: dict[str, str]) -> bool:
    """A label selector of matchLabels and In/NotIn/Exists/DoesNotExist expressions."""
    if selector is None:
        return True
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = (
            expression["key"],
            expression["operator"],
            expression.get("values") or [],
        )
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def affinity_matches(volume: Raw, node: Raw) -> bool:
    """CheckNodeAffinity: node labels only; a term of only matchFields passes."""
    required = ((volume["spec"].get("nodeAffinity") or {}).get("required")) or None
    if required is None:
        return True
    labels = _meta(node).get("labels") or {}
    for term in required.get("nodeSelectorTerms") or []:
        expressions = term.get("matchExpressions") or []
        fields = term.get("matchFields") or []
        if not expressions and not fields:
            continue
        if all(_expression(e, labels) for e in expressions):
            return True
    return False


def _expression(expression: Raw, labels: dict[str, str]) -> bool:
    key, operator, values = (
        expression["key"],
        expression["operator"],
        expression.get("values") or [],
    )
    present = key in labels
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not present or labels[key] not in values
    if operator == "Exists":
        return present
    return not present  # DoesNotExist (the strategies make no Gt/Lt)


def _bound_to(volume: Raw, claim: Raw) -> bool:
    ref = volume["spec"].get("claimRef")
    if ref is None:
        return False
    if ref.get("name") != _meta(claim)["name"] or ref.get("namespace") != _meta(claim)["namespace"]:
        return False
    return not ref.get("uid") or ref.get("uid") == _meta(claim).get("uid")


def find_matching_volume(
    claim: Raw, volumes: list[Raw], node: Raw, excluded: set[str]
) -> Raw | None:
    smallest: Raw | None = None
    size = requested(claim)
    spec = claim.get("spec") or {}
    for volume in volumes:
        name = _meta(volume)["name"]
        if name in excluded:
            continue
        if volume["spec"].get("claimRef") is not None and not _bound_to(volume, claim):
            continue
        capacity = quantity(volume["spec"].get("capacity", {}).get("storage")) or 0
        if capacity < size:
            continue
        if (spec.get("volumeMode") or "Filesystem") != (
            volume["spec"].get("volumeMode") or "Filesystem"
        ):
            continue
        if (spec.get("volumeAttributesClassName") or "") != (
            volume["spec"].get("volumeAttributesClassName") or ""
        ):
            continue
        if _meta(volume).get("deletionTimestamp"):
            continue
        reachable = affinity_matches(volume, node)
        if _bound_to(volume, claim):
            return volume if reachable else None
        if (volume.get("status") or {}).get("phase") != "Available":
            continue
        if spec.get("selector") is not None and not _match_labels(
            spec["selector"], _meta(volume).get("labels") or {}
        ):
            continue
        if volume_class(volume) != claim_class(claim):
            continue
        if not reachable:
            continue
        if not set(spec.get("accessModes") or []) <= set(volume["spec"].get("accessModes") or []):
            continue
        current = quantity((smallest or {}).get("spec", {}).get("capacity", {}).get("storage"))
        if smallest is None or (current is not None and current > capacity):
            smallest = volume
    return smallest


@dataclass
class NodeOutcome:
    reasons: list[str] = field(default_factory=list)
    error: str | None = None
    static: list[tuple[Raw, Raw]] = field(default_factory=list)
    provisions: list[tuple[Raw, Raw | None]] = field(default_factory=list)


@dataclass
class Storage:
    claims: dict[str, Raw]  # by name (the pod's namespace)
    volumes: list[Raw]  # in the order the cache lists them
    classes: dict[str, Raw]
    drivers: dict[str, Raw]
    capacities: list[Raw]
    csi_nodes: dict[str, Raw] = field(default_factory=dict)  # by node name


def classify(pod: Raw, storage: Storage) -> tuple[list[Raw], list[Raw]] | str:
    """(bound, delayed) claims, or the PreFilter rejection."""
    bound: list[Raw] = []
    delayed: list[Raw] = []
    immediate = False
    for volume in pod["spec"].get("volumes") or []:
        source = volume.get("persistentVolumeClaim")
        if source is None:
            continue
        claim = storage.claims.get(source["claimName"])
        if claim is None:
            return f'persistentvolumeclaim "{source["claimName"]}" not found'
        spec = claim.get("spec") or {}
        if spec.get("volumeName") and "pv.kubernetes.io/bind-completed" in _annotations(claim):
            bound.append(claim)
            continue
        storage_class = storage.classes.get(claim_class(claim)) if claim_class(claim) else None
        waits = (
            storage_class is not None
            and storage_class.get("volumeBindingMode") == "WaitForFirstConsumer"
        )
        if waits and not spec.get("volumeName"):
            delayed.append(claim)
        else:
            immediate = True
    return UNBOUND_IMMEDIATE if immediate else (bound, delayed)


def _topology_allows(storage_class: Raw, node: Raw) -> bool:
    terms = storage_class.get("allowedTopologies") or []
    if not terms:
        return True
    labels = _meta(node).get("labels") or {}
    for term in terms:
        expressions = term.get("matchLabelExpressions") or []
        if not expressions:
            continue
        if all(e["key"] in labels and labels[e["key"]] in e["values"] for e in expressions):
            return True
    return False


def _capacity(
    storage: Storage, claim: Raw, storage_class: Raw, node: Raw
) -> tuple[bool, Raw | None]:
    size = requested(claim)
    if not size:
        return True, None
    driver = storage.drivers.get(storage_class.get("provisioner") or "")
    if driver is None or not (driver.get("spec") or {}).get("storageCapacity"):
        return True, None
    labels = _meta(node).get("labels") or {}
    for capacity in storage.capacities:
        if capacity.get("storageClassName") != _meta(storage_class)["name"]:
            continue
        limit = quantity(capacity.get("maximumVolumeSize") or capacity.get("capacity"))
        if limit is None or limit < size:
            continue
        if capacity.get("nodeTopology") is None or not _match_labels(
            capacity["nodeTopology"], labels
        ):
            continue
        return True, capacity
    return False, None


def find_pod_volumes(
    bound: list[Raw], delayed: list[Raw], storage: Storage, node: Raw
) -> NodeOutcome:
    outcome = NodeOutcome()
    bound_ok, volumes_found, unbound_ok, space_ok = True, True, True, True
    for claim in bound:
        volume = next(
            (v for v in storage.volumes if _meta(v)["name"] == claim["spec"]["volumeName"]), None
        )
        if volume is None:
            volumes_found = False
            break
        checked = csi_translation.try_translate(volume, storage.csi_nodes.get(_meta(node)["name"]))
        if isinstance(checked, str):
            outcome.error = checked
            return outcome
        if not affinity_matches(checked, node):
            bound_ok = False
            break
    node_name = _meta(node)["name"]
    to_provision: list[Raw] = []
    to_match: list[Raw] = []
    skip_rest = False
    for claim in delayed:
        selected = _annotations(claim).get("volume.kubernetes.io/selected-node")
        if selected is not None:
            if selected != node_name:
                unbound_ok = False
                skip_rest = True
                break
            to_provision.append(claim)
        else:
            to_match.append(claim)
    if delayed and not skip_rest:
        if to_match:
            chosen: set[str] = set()
            for claim in sorted(to_match, key=requested):
                candidates = [v for v in storage.volumes if volume_class(v) == claim_class(claim)]
                volume = find_matching_volume(claim, candidates, node, chosen)
                if volume is None:
                    to_provision.append(claim)
                    unbound_ok = False
                    continue
                chosen.add(_meta(volume)["name"])
                outcome.static.append((claim, volume))
        if to_provision:
            unbound_ok, space_ok = True, True
            provisions: list[tuple[Raw, Raw | None]] = []
            for claim in to_provision:
                class_name = claim_class(claim)
                storage_class = storage.classes.get(class_name)
                if not class_name:
                    outcome.error = (
                        f'no class for claim "{_meta(claim)["namespace"]}/{_meta(claim)["name"]}"'
                    )
                    return outcome
                if storage_class is None:
                    outcome.error = f'failed to find storage class "{class_name}"'
                    return outcome
                provisioner = storage_class.get("provisioner") or ""
                if not provisioner or provisioner == "kubernetes.io/no-provisioner":
                    unbound_ok, provisions = False, []
                    break
                if not _topology_allows(storage_class, node):
                    unbound_ok, provisions = False, []
                    break
                enough, capacity = _capacity(storage, claim, storage_class, node)
                if not enough:
                    space_ok, provisions = False, []
                    break
                provisions.append((claim, capacity))
            outcome.provisions = provisions
    if not bound_ok:
        outcome.reasons.append(NODE_CONFLICT)
    if not unbound_ok:
        outcome.reasons.append(BIND_CONFLICT)
    if not space_ok:
        outcome.reasons.append(NOT_ENOUGH_SPACE)
    if not volumes_found:
        outcome.reasons.append(PV_NOT_EXIST)
    return outcome


def _shape(utilization: int, shape: list[tuple[int, int]]) -> int:
    points = [(u, s * 10) for u, s in shape]
    for index, (u, s) in enumerate(points):
        if utilization <= u:
            if index == 0:
                return s
            u0, s0 = points[index - 1]
            step = (s - s0) * (utilization - u0)
            quotient = abs(step) // (u - u0)  # Go's integer division truncates toward zero
            return s0 + (quotient if step >= 0 else -quotient)
    return points[-1][1]


def score(outcome: NodeOutcome, shape: list[tuple[int, int]]) -> int:
    classes: dict[str, list[int]] = {}
    if outcome.static:
        for claim, volume in outcome.static:
            totals = classes.setdefault(str(volume["spec"].get("storageClassName") or ""), [0, 0])
            totals[0] += requested(claim)
            totals[1] += quantity(volume["spec"]["capacity"]["storage"]) or 0
    else:
        for claim, capacity in outcome.provisions:
            if capacity is None:
                continue
            totals = classes.setdefault(str(claim["spec"].get("storageClassName") or ""), [0, 0])
            totals[1] = quantity(capacity.get("capacity")) or 0
            totals[0] += requested(claim)
    if not classes:
        return 0
    total = 0
    for asked, offered in classes.values():
        utilization = 100 if offered == 0 or asked > offered else asked * 100 // offered
        total += _shape(utilization, shape)
    return int(total / len(classes) + 0.5)
