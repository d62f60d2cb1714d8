"""PersistentVolume and PersistentVolumeClaim, as the volume plugins read them.

Parsed once from API dicts into frozen values. A field the API server defaults on create
(`volumeMode`) is defaulted the same way here, so objects read from files behave as they
would once admitted. Storage amounts are whole bytes, rounded up (upstream's
`Quantity.Value()`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from berth.engine.errors import FieldError
from berth.engine.model.labels import (
    LabelSelector,
    NodeSelector,
    parse_label_selector,
    parse_node_selector,
)
from berth.engine.model.object_meta import HasMetadata, ObjectMeta, parse_object
from berth.engine.model.parsing import RawObject, as_enum, as_list, as_map, as_str, as_string_map
from berth.engine.model.quantity import to_units
from berth.engine.model.volume_sources import VolumeSource, parse_volume_source

__all__ = [
    "ANN_BETA_STORAGE_CLASS",
    "ANN_BETA_STORAGE_PROVISIONER",
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_SELECTED_NODE",
    "ANN_STORAGE_PROVISIONER",
    "AccessMode",
    "ClaimRef",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "VolumeMode",
    "parse_claim_template",
    "storage_bytes",
]

ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"


class AccessMode(StrEnum):
    READ_WRITE_ONCE = "ReadWriteOnce"
    READ_ONLY_MANY = "ReadOnlyMany"
    READ_WRITE_MANY = "ReadWriteMany"
    READ_WRITE_ONCE_POD = "ReadWriteOncePod"


class VolumeMode(StrEnum):
    FILESYSTEM = "Filesystem"
    BLOCK = "Block"


def _access_modes(raw: object, field: str) -> tuple[AccessMode, ...]:
    return tuple(
        as_enum(AccessMode, item, f"{field}[{index}]", AccessMode.READ_WRITE_ONCE)
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
class PersistentVolume(HasMetadata):
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
        volume_mode=as_enum(
            VolumeMode, spec.get("volumeMode"), "spec.volumeMode", VolumeMode.FILESYSTEM
        ),
        storage_class_name=as_str(spec.get("storageClassName"), "spec.storageClassName"),
        volume_attributes_class_name=as_str(
            spec.get("volumeAttributesClassName"), "spec.volumeAttributesClassName"
        ),
        claim_ref=_parse_claim_ref(spec.get("claimRef")),
        node_affinity=parse_node_selector(affinity.get("required"), "spec.nodeAffinity.required"),
        phase=as_str(status.get("phase"), "status.phase"),
        source=parse_volume_source(spec, "spec", ignore=_PV_SPEC_FIELDS),
    )


# ---------------------------------------------------------------------- PersistentVolumeClaim


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim(HasMetadata):
    metadata: ObjectMeta
    volume_name: str  # spec.volumeName: the PV it is (being) bound to
    storage_class_name: str | None  # spec.storageClassName; None when unset
    volume_attributes_class_name: str
    access_modes: tuple[AccessMode, ...]
    volume_mode: VolumeMode
    requested: int  # spec.resources.requests.storage in bytes (0 when unset)
    selector: LabelSelector | None  # None: any volume's labels will do
    phase: str  # status.phase

    def from_template(
        self, *, name: str, controller_uid: str = "", labels: Mapping[str, str] | None = None
    ) -> PersistentVolumeClaim:
        """The claim a controller creates from this template: named, owned, extra labels added."""
        metadata = dataclasses.replace(
            self.metadata,
            name=name,
            uid=f"claim:{self.metadata.namespace}/{name}",
            controller_uid=controller_uid,
            labels={**self.metadata.labels, **(labels or {})},
        )
        return dataclasses.replace(self, metadata=metadata)

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
    status = as_map(raw.get("status"), "status")
    return _claim(
        metadata, raw.get("spec"), "spec", phase=as_str(status.get("phase"), "status.phase")
    )


def _claim(metadata: ObjectMeta, raw_spec: object, at: str, *, phase: str) -> PersistentVolumeClaim:
    """A claim of `metadata` with the spec `raw_spec` found at field path `at`."""
    spec = as_map(raw_spec, at)
    resources = as_map(spec.get("resources"), f"{at}.resources")
    requests = as_map(resources.get("requests"), f"{at}.resources.requests")
    class_name = spec.get("storageClassName")
    return PersistentVolumeClaim(
        metadata=metadata,
        volume_name=as_str(spec.get("volumeName"), f"{at}.volumeName"),
        storage_class_name=None
        if class_name is None
        else as_str(class_name, f"{at}.storageClassName"),
        volume_attributes_class_name=as_str(
            spec.get("volumeAttributesClassName"), f"{at}.volumeAttributesClassName"
        ),
        access_modes=_access_modes(spec.get("accessModes"), f"{at}.accessModes"),
        volume_mode=as_enum(
            VolumeMode, spec.get("volumeMode"), f"{at}.volumeMode", VolumeMode.FILESYSTEM
        ),
        requested=storage_bytes(requests.get("storage"), f"{at}.resources.requests.storage") or 0,
        selector=parse_label_selector(spec.get("selector"), f"{at}.selector"),
        phase=phase,
    )


def parse_claim_template(raw: object, at: str, *, namespace: str) -> PersistentVolumeClaim:
    """A claim template (an ephemeral volume's `volumeClaimTemplate`, a StatefulSet's
    `volumeClaimTemplates[]` entry) as the claim a controller makes of it, still unnamed.

    The controller names the claim, sets its owner and adds labels (`from_template`);
    raises `FieldError` with paths under `at`.
    """
    template = as_map(raw, at)
    metadata = as_map(template.get("metadata"), f"{at}.metadata")
    return _claim(
        ObjectMeta(
            name="",
            namespace=namespace,
            labels=as_string_map(metadata.get("labels"), f"{at}.metadata.labels"),
            annotations=as_string_map(metadata.get("annotations"), f"{at}.metadata.annotations"),
        ),
        template.get("spec"),
        f"{at}.spec",
        phase="Pending",
    )
