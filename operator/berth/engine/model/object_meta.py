"""The `metadata` every storage object carries, and the one way their parsers report errors.

The storage kinds (PersistentVolume, PersistentVolumeClaim, StorageClass, the CSI
objects) each need the same handful of metadata fields, and each must turn a
`FieldError` deep inside into an `InvalidObjectError` naming the kind and the object.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from berth.engine.errors import FieldError, InvalidObjectError
from berth.engine.model.parsing import (
    RawObject,
    as_list,
    as_map,
    as_str,
    as_string_map,
    display_name,
)

__all__ = ["HasMetadata", "ObjectMeta", "controller_uid", "parse_object"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ObjectMeta:
    name: str
    namespace: str = ""  # "" for cluster-scoped kinds
    uid: str = ""
    resource_version: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    deleting: bool = False  # metadata.deletionTimestamp is set
    controller_uid: str = ""  # UID of the ownerReference with controller: true, if any

    @property
    def key(self) -> str:
        """`namespace/name` for namespaced objects, `name` otherwise (client-go's cache key)."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


class HasMetadata:
    """What every storage object answers from its `metadata` (mixed into the frozen models)."""

    __slots__ = ()
    metadata: ObjectMeta

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
        """`namespace/name`, or `name` for a cluster-scoped kind: how caches and indexes key it."""
        return self.metadata.key

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
    def deleting(self) -> bool:
        return self.metadata.deleting


def _parse_meta(raw: RawObject, *, namespaced: bool) -> ObjectMeta:
    metadata = as_map(raw.get("metadata"), "metadata")
    name = as_str(metadata.get("name"), "metadata.name")
    if not name:
        raise FieldError("metadata.name", "must be set")
    namespace = ""
    if namespaced:
        namespace = as_str(metadata.get("namespace"), "metadata.namespace") or "default"
    return ObjectMeta(
        name=name,
        namespace=namespace,
        uid=as_str(metadata.get("uid"), "metadata.uid"),
        resource_version=as_str(metadata.get("resourceVersion"), "metadata.resourceVersion"),
        labels=as_string_map(metadata.get("labels"), "metadata.labels"),
        annotations=as_string_map(metadata.get("annotations"), "metadata.annotations"),
        deleting=metadata.get("deletionTimestamp") is not None,
        controller_uid=controller_uid(metadata),
    )


def controller_uid(metadata: Mapping[str, object]) -> str:
    """The UID of the ownerReference with `controller: true` in `metadata`, or ""."""
    for index, item in enumerate(
        as_list(metadata.get("ownerReferences"), "metadata.ownerReferences")
    ):
        owner = as_map(item, f"metadata.ownerReferences[{index}]")
        if owner.get("controller") is True:
            return as_str(owner.get("uid"), f"metadata.ownerReferences[{index}].uid")
    return ""


def parse_object(
    raw: RawObject,
    *,
    kind: str,
    namespaced: bool,
    parse: Callable[[ObjectMeta, RawObject], T],
) -> T:
    """`parse(metadata, raw)`, with any `FieldError` reported as this object's `InvalidObjectError`."""
    metadata = raw.get("metadata") if isinstance(raw, Mapping) else None
    if not isinstance(metadata, Mapping):
        metadata = {}
    display = display_name(metadata.get("name"))
    if namespaced:
        display = f"{display_name(metadata.get('namespace'), 'default')}/{display}"
    try:
        if not isinstance(raw, Mapping):
            raise FieldError("(object)", f"expected an object, got {type(raw).__name__}")
        return parse(_parse_meta(raw, namespaced=namespaced), raw)
    except FieldError as error:
        raise InvalidObjectError(
            kind=kind, name=display, field=error.field, problem=error.problem
        ) from None
