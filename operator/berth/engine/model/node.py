"""The Node as the scheduler sees it: labels, taints, allocatable, images."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from berth.engine.errors import FieldError, InvalidObjectError
from berth.engine.model.parsing import (
    RawObject,
    as_bool,
    as_int,
    as_list,
    as_map,
    as_str,
    as_string_map,
    brief,
    display_name,
    is_version_of,
)
from berth.engine.model.resources import parse_resource_list


class TaintEffect(StrEnum):
    NO_SCHEDULE = "NoSchedule"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    NO_EXECUTE = "NoExecute"


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: TaintEffect


@dataclass(frozen=True, slots=True)
class ContainerImage:
    names: tuple[str, ...]
    size_bytes: int


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    labels: dict[str, str]
    taints: tuple[Taint, ...]
    unschedulable: bool
    allocatable: dict[str, int]
    images: tuple[ContainerImage, ...]
    uid: str = ""
    resource_version: str = ""
    # status.declaredFeatures: the features its kubelet implements (NodeDeclaredFeatures).
    declared_features: tuple[str, ...] = ()
    # The object as read, kept only while some extender without a node cache needs whole
    # nodes (berth.scheduling.source_retention): a raw node costs more than the parsed one.
    source: RawObject | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_dict(cls, raw: RawObject, *, keep_source: bool = True) -> Node:
        """Parse a v1 Node; raises `InvalidObjectError` naming the node and the field.

        `keep_source=False` drops the object as read once parsed.
        """
        metadata = raw.get("metadata") if isinstance(raw, Mapping) else None
        display = display_name(metadata.get("name") if isinstance(metadata, Mapping) else None)
        try:
            node = _parse_node(raw)
        except FieldError as error:
            raise InvalidObjectError(
                kind="Node", name=display, field=error.field, problem=error.problem
            ) from None
        if keep_source:
            object.__setattr__(node, "source", raw)  # frozen: set once, right after parsing
        return node

    def remember_source(self, raw: RawObject) -> bool:
        """Keep `raw` as this node's source if it is this very version; whether it was kept.

        A node parsed without its source (no extender needed it then) takes the object
        later read from the API server, so that the next call need not read it again.
        """
        if not is_version_of(raw, self.resource_version):
            return False
        object.__setattr__(self, "source", raw)  # compare=False: value semantics unchanged
        return True


def _parse_node(raw: RawObject) -> Node:
    metadata = as_map(raw.get("metadata"), "metadata")
    name = as_str(metadata.get("name"), "metadata.name")
    if not name:
        raise FieldError("metadata.name", "must be set")
    spec = as_map(raw.get("spec"), "spec")
    status = as_map(raw.get("status"), "status")
    taints = []
    for index, item in enumerate(as_list(spec.get("taints"), "spec.taints")):
        field = f"spec.taints[{index}]"
        taint = as_map(item, field)
        try:
            effect = TaintEffect(str(taint.get("effect")))
        except ValueError:
            raise FieldError(
                f"{field}.effect", f"unknown taint effect {brief(taint.get('effect'))}"
            ) from None
        taints.append(
            Taint(
                key=as_str(taint.get("key"), f"{field}.key"),
                value=as_str(taint.get("value"), f"{field}.value"),
                effect=effect,
            )
        )
    # A node that reports no allocatable falls back to its capacity, as the kubelet does.
    raw_allocatable = status.get("allocatable")
    if raw_allocatable is None:
        raw_allocatable = status.get("capacity")
        field = "status.capacity"
    else:
        field = "status.allocatable"
    try:
        allocatable = parse_resource_list(raw_allocatable)
    except FieldError as error:
        raise error.under(field) from None
    images = []
    for index, item in enumerate(as_list(status.get("images"), "status.images")):
        field = f"status.images[{index}]"
        image = as_map(item, field)
        names = as_list(image.get("names"), f"{field}.names")
        images.append(
            ContainerImage(
                names=tuple(as_str(n, f"{field}.names") for n in names),
                size_bytes=as_int(image.get("sizeBytes"), f"{field}.sizeBytes"),
            )
        )
    return Node(
        name=name,
        labels=as_string_map(metadata.get("labels"), "metadata.labels"),
        taints=tuple(taints),
        unschedulable=as_bool(spec.get("unschedulable"), "spec.unschedulable"),
        allocatable=allocatable,
        images=tuple(images),
        uid=as_str(metadata.get("uid"), "metadata.uid"),
        resource_version=as_str(metadata.get("resourceVersion"), "metadata.resourceVersion"),
        declared_features=tuple(
            as_str(feature, f"status.declaredFeatures[{index}]")
            for index, feature in enumerate(
                as_list(status.get("declaredFeatures"), "status.declaredFeatures")
            )
        ),
    )
