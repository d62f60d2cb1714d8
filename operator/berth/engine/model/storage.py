"""PersistentVolume, PersistentVolumeClaim and StorageClass, as the volume plugins read them.

Parsed once from API dicts into frozen values. Fields the API server defaults on create
(a PV's or claim's `volumeMode`, a class's `volumeBindingMode`) are defaulted the same way
here, so objects read from files behave as they would once admitted. Storage amounts are
whole bytes, rounded up (upstream's `Quantity.Value()`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from berth.engine.errors import FieldError
from berth.engine.model.labels import (
    LabelSelector,
    NodeSelector,
    is_label_value,
    parse_label_selector,
    qualified_name_problem,
)
from berth.engine.model.labels import parse_node_selector as _parse_node_selector
from berth.engine.model.object_meta import ObjectMeta, parse_object
from berth.engine.model.parsing import RawObject, as_list, as_map, as_str, brief
from berth.engine.model.quantity import to_units
from berth.engine.model.volume_sources import VolumeSource, parse_volume_source

__all__ = [
    "ANN_BETA_STORAGE_CLASS",
    "ANN_BETA_STORAGE_PROVISIONER",
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_SELECTED_NODE",
    "ANN_STORAGE_PROVISIONER",
    "NOT_SUPPORTED_PROVISIONER",
    "AccessMode",
    "BindingMode",
    "ClaimRef",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "TopologySelectorTerm",
    "VolumeMode",
    "storage_bytes",
]

ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"

E = TypeVar("E", bound=StrEnum)


class AccessMode(StrEnum):
    READ_WRITE_ONCE = "ReadWriteOnce"
    READ_ONLY_MANY = "ReadOnlyMany"
    READ_WRITE_MANY = "ReadWriteMany"
    READ_WRITE_ONCE_POD = "ReadWriteOncePod"


class VolumeMode(StrEnum):
    FILESYSTEM = "Filesystem"
    BLOCK = "Block"


class BindingMode(StrEnum):
    IMMEDIATE = "Immediate"
    WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"


def _enum_value(enum: type[E], raw: object, field: str, default: E) -> E:
    if raw is None or raw == "":
        return default
    try:
        return enum(as_str(raw, field))
    except ValueError:
        allowed = ", ".join(member.value for member in enum)
        raise FieldError(field, f"unknown value {brief(raw)} (expected one of {allowed})") from None


def _access_modes(raw: object, field: str) -> tuple[AccessMode, ...]:
    return tuple(
        _enum_value(AccessMode, item, f"{field}[{index}]", AccessMode.READ_WRITE_ONCE)
        for index, item in enumerate(as_list(raw, field))
    )


def storage_bytes(raw: object, field: str) -> int | None:
    """A `storage` quantity in bytes; None when the field is absent."""
    if raw is None:
        return None
    try:
        return to_units(raw)
    except FieldError as error:
        raise FieldError(field, error.problem) from None


def _class_of(metadata: ObjectMeta, spec_class: str | None) -> str:
    # The beta annotation, when present, wins over the spec field (component-helpers' rule).
    annotated = metadata.annotations.get(ANN_BETA_STORAGE_CLASS)
    if annotated is not None:
        return annotated
    return spec_class or ""


# ---------------------------------------------------------------------- PersistentVolume


@dataclass(frozen=True, slots=True)
class ClaimRef:
    namespace: str
    name: str
    uid: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class PersistentVolume:
    metadata: ObjectMeta
    capacity: int  # spec.capacity.storage in bytes (0 when unset)
    access_modes: tuple[AccessMode, ...]
    volume_mode: VolumeMode
    storage_class_name: str  # spec.storageClassName as written
    volume_attributes_class_name: str
    claim_ref: ClaimRef | None
    node_affinity: NodeSelector | None  # spec.nodeAffinity.required
    phase: str  # status.phase ("" when the object carries no status)
    source: VolumeSource | None

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def key(self) -> str:
        return self.metadata.name

    @property
    def resource_version(self) -> str:
        return self.metadata.resource_version

    @property
    def labels(self) -> Mapping[str, str]:
        return self.metadata.labels

    @property
    def annotations(self) -> Mapping[str, str]:
        return self.metadata.annotations

    @property
    def storage_class(self) -> str:
        """The class the PV belongs to: the beta annotation if present, else `storageClassName`."""
        return _class_of(self.metadata, self.storage_class_name)

    def node_affinity_matches(self, labels: Mapping[str, str]) -> bool:
        """The volume is reachable from a node with these labels (upstream `CheckNodeAffinity`).

        The node is judged by its labels alone: `matchFields` terms are not evaluated
        (they pass), a term that did not parse matches nothing, an empty term is skipped.
        """
        if self.node_affinity is None:
            return True
        return any(
            term.valid and not term.is_empty and all(r.matches(labels) for r in term.expressions)
            for term in self.node_affinity.terms
        )

    def is_bound_to(self, claim: PersistentVolumeClaim) -> bool:
        """`claimRef` names `claim` (and its UID, when the reference carries one)."""
        ref = self.claim_ref
        if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
            return False
        return not ref.uid or ref.uid == claim.uid

    @classmethod
    def from_dict(cls, raw: RawObject) -> PersistentVolume:
        """Parse a v1 PersistentVolume; raises `InvalidObjectError` naming the volume and field."""
        return parse_object(raw, kind="PersistentVolume", namespaced=False, parse=_parse_pv)


_PV_SPEC_FIELDS = frozenset(
    {
        "accessModes",
        "capacity",
        "claimRef",
        "mountOptions",
        "nodeAffinity",
        "persistentVolumeReclaimPolicy",
        "storageClassName",
        "volumeAttributesClassName",
        "volumeMode",
    }
)


def _parse_claim_ref(raw: object) -> ClaimRef | None:
    if raw is None:
        return None
    ref = as_map(raw, "spec.claimRef")
    return ClaimRef(
        namespace=as_str(ref.get("namespace"), "spec.claimRef.namespace"),
        name=as_str(ref.get("name"), "spec.claimRef.name"),
        uid=as_str(ref.get("uid"), "spec.claimRef.uid"),
    )


def _parse_pv(metadata: ObjectMeta, raw: RawObject) -> PersistentVolume:
    spec = as_map(raw.get("spec"), "spec")
    status = as_map(raw.get("status"), "status")
    capacity = as_map(spec.get("capacity"), "spec.capacity")
    affinity = as_map(spec.get("nodeAffinity"), "spec.nodeAffinity")
    return PersistentVolume(
        metadata=metadata,
        capacity=storage_bytes(capacity.get("storage"), "spec.capacity.storage") or 0,
        access_modes=_access_modes(spec.get("accessModes"), "spec.accessModes"),
        volume_mode=_enum_value(
            VolumeMode, spec.get("volumeMode"), "spec.volumeMode", VolumeMode.FILESYSTEM
        ),
        storage_class_name=as_str(spec.get("storageClassName"), "spec.storageClassName"),
        volume_attributes_class_name=as_str(
            spec.get("volumeAttributesClassName"), "spec.volumeAttributesClassName"
        ),
        claim_ref=_parse_claim_ref(spec.get("claimRef")),
        node_affinity=_parse_node_selector(affinity.get("required"), "spec.nodeAffinity.required"),
        phase=as_str(status.get("phase"), "status.phase"),
        source=parse_volume_source(spec, "spec", ignore=_PV_SPEC_FIELDS),
    )


# ---------------------------------------------------------------------- PersistentVolumeClaim


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim:
    metadata: ObjectMeta
    volume_name: str  # spec.volumeName: the PV it is (being) bound to
    storage_class_name: str | None  # spec.storageClassName; None when unset
    volume_attributes_class_name: str
    access_modes: tuple[AccessMode, ...]
    volume_mode: VolumeMode
    requested: int  # spec.resources.requests.storage in bytes (0 when unset)
    selector: LabelSelector | None  # None: any volume's labels will do
    phase: str  # status.phase

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def uid(self) -> str:
        return self.metadata.uid

    @property
    def key(self) -> str:
        return self.metadata.key

    @property
    def resource_version(self) -> str:
        return self.metadata.resource_version

    @property
    def annotations(self) -> Mapping[str, str]:
        return self.metadata.annotations

    @property
    def deleting(self) -> bool:
        return self.metadata.deleting

    @property
    def storage_class(self) -> str:
        """The class asked for: the beta annotation if present, else `storageClassName` ("" none)."""
        return _class_of(self.metadata, self.storage_class_name)

    @property
    def selected_node(self) -> str | None:
        """`volume.kubernetes.io/selected-node`: where delayed provisioning was asked to happen."""
        return self.metadata.annotations.get(ANN_SELECTED_NODE)

    @property
    def bind_completed(self) -> bool:
        """Bound to its volume and the PV controller finished binding it (upstream `isPVCFullyBound`)."""
        return bool(self.volume_name) and ANN_BIND_COMPLETED in self.metadata.annotations

    @classmethod
    def from_dict(cls, raw: RawObject) -> PersistentVolumeClaim:
        """Parse a v1 PersistentVolumeClaim; raises `InvalidObjectError` naming the claim and field."""
        return parse_object(raw, kind="PersistentVolumeClaim", namespaced=True, parse=_parse_pvc)


def _parse_pvc(metadata: ObjectMeta, raw: RawObject) -> PersistentVolumeClaim:
    spec = as_map(raw.get("spec"), "spec")
    status = as_map(raw.get("status"), "status")
    resources = as_map(spec.get("resources"), "spec.resources")
    requests = as_map(resources.get("requests"), "spec.resources.requests")
    class_name = spec.get("storageClassName")
    return PersistentVolumeClaim(
        metadata=metadata,
        volume_name=as_str(spec.get("volumeName"), "spec.volumeName"),
        storage_class_name=None
        if class_name is None
        else as_str(class_name, "spec.storageClassName"),
        volume_attributes_class_name=as_str(
            spec.get("volumeAttributesClassName"), "spec.volumeAttributesClassName"
        ),
        access_modes=_access_modes(spec.get("accessModes"), "spec.accessModes"),
        volume_mode=_enum_value(
            VolumeMode, spec.get("volumeMode"), "spec.volumeMode", VolumeMode.FILESYSTEM
        ),
        requested=storage_bytes(requests.get("storage"), "spec.resources.requests.storage") or 0,
        selector=parse_label_selector(spec.get("selector"), "spec.selector"),
        phase=as_str(status.get("phase"), "status.phase"),
    )


# ---------------------------------------------------------------------- StorageClass


@dataclass(frozen=True, slots=True)
class TopologySelectorTerm:
    """One `allowedTopologies` term: every key present on the node with one of its values.

    A term upstream cannot turn into a selector (no expressions, an expression without
    values, a key or value that is no valid label) matches no node; it is kept, not refused.
    """

    expressions: tuple[tuple[str, frozenset[str]], ...]
    valid: bool = True

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.valid and all(
            key in labels and labels[key] in values for key, values in self.expressions
        )


@dataclass(frozen=True, slots=True)
class StorageClass:
    metadata: ObjectMeta
    provisioner: str
    volume_binding_mode: BindingMode  # the API server's default, Immediate, when unset
    allowed_topologies: tuple[TopologySelectorTerm, ...]  # empty: every node
    reclaim_policy: str
    parameters: Mapping[str, str]

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def key(self) -> str:
        return self.metadata.name

    @property
    def resource_version(self) -> str:
        return self.metadata.resource_version

    @property
    def waits_for_first_consumer(self) -> bool:
        return self.volume_binding_mode is BindingMode.WAIT_FOR_FIRST_CONSUMER

    def allows_topology(self, labels: Mapping[str, str]) -> bool:
        """Upstream `MatchTopologySelectorTerms`: no terms allow every node, else any term must match."""
        if not self.allowed_topologies:
            return True
        return any(term.matches(labels) for term in self.allowed_topologies)

    @classmethod
    def from_dict(cls, raw: RawObject) -> StorageClass:
        """Parse a storage.k8s.io/v1 StorageClass; raises `InvalidObjectError` naming the field."""
        return parse_object(raw, kind="StorageClass", namespaced=False, parse=_parse_class)


def _parse_topologies(raw: object) -> tuple[TopologySelectorTerm, ...]:
    terms = []
    for index, item in enumerate(as_list(raw, "allowedTopologies")):
        where = f"allowedTopologies[{index}]"
        term = as_map(item, where)
        expressions = []
        for position, expression in enumerate(
            as_list(term.get("matchLabelExpressions"), f"{where}.matchLabelExpressions")
        ):
            at = f"{where}.matchLabelExpressions[{position}]"
            entry = as_map(expression, at)
            key = as_str(entry.get("key"), f"{at}.key")
            if not key:
                raise FieldError(f"{at}.key", "must be set")
            values = frozenset(
                as_str(value, f"{at}.values[{i}]")
                for i, value in enumerate(as_list(entry.get("values"), f"{at}.values"))
            )
            expressions.append((key, values))
        valid = bool(expressions) and all(
            values
            and qualified_name_problem(key) is None
            and all(is_label_value(value) for value in values)
            for key, values in expressions
        )
        terms.append(TopologySelectorTerm(tuple(expressions), valid))
    return tuple(terms)


def _parse_class(metadata: ObjectMeta, raw: RawObject) -> StorageClass:
    parameters = as_map(raw.get("parameters"), "parameters")
    for key, value in parameters.items():
        if not isinstance(value, str):
            raise FieldError(f"parameters[{brief(key)}]", f"expected a string, got {brief(value)}")
    return StorageClass(
        metadata=metadata,
        provisioner=as_str(raw.get("provisioner"), "provisioner"),
        volume_binding_mode=_enum_value(
            BindingMode, raw.get("volumeBindingMode"), "volumeBindingMode", BindingMode.IMMEDIATE
        ),
        allowed_topologies=_parse_topologies(raw.get("allowedTopologies")),
        reclaim_policy=as_str(raw.get("reclaimPolicy"), "reclaimPolicy") or "Delete",
        parameters={str(key): str(value) for key, value in parameters.items()},
    )
