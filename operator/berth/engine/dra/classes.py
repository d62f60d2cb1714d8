"""DeviceClass (resource.k8s.io/v1): the selectors and configuration a request inherits.

A request names a class; the class's CEL selectors must all match a device before the
request's own selectors are tried, and the class's opaque config is copied into every
allocation that used it. `extendedResourceName` lets pods ask for such devices through
ordinary container resources (extended resources backed by DRA).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from berth.engine.dra.requests import parse_selector_expression
from berth.engine.dra.values import parse_object, required_name
from berth.engine.errors import FieldError
from berth.engine.model.parsing import RawObject, as_list, as_map, as_str

__all__ = ["DeviceClass"]


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[str, ...]  # CEL expressions, all of which must match
    config: tuple[Mapping[str, Any], ...] = ()  # opaque DeviceConfigurations, as written
    extended_resource_name: str | None = None
    resource_version: str = ""
    # RFC 3339: of two classes naming the same extended resource, the older one serves it.
    creation_timestamp: str = ""

    @property
    def key(self) -> str:
        return self.name

    @classmethod
    def from_dict(cls, raw: RawObject) -> DeviceClass:
        """Parse a DeviceClass; raises `InvalidObjectError` naming the class and the field."""
        return parse_object("DeviceClass", raw, _parse_class, namespaced=False)


def _parse_class(raw: RawObject) -> DeviceClass:
    name = required_name(raw.get("metadata"), "metadata")
    metadata = as_map(raw.get("metadata"), "metadata")
    spec = as_map(raw.get("spec"), "spec")
    selectors = []
    for index, item in enumerate(as_list(spec.get("selectors"), "spec.selectors")):
        expression = parse_selector_expression(item, f"spec.selectors[{index}]")
        if expression is None:
            # kube-scheduler cannot evaluate a class selector of another type either.
            raise FieldError(f"spec.selectors[{index}]", "cel must be set")
        selectors.append(expression)
    return DeviceClass(
        name=name,
        selectors=tuple(selectors),
        config=tuple(
            as_map(item, f"spec.config[{index}]")
            for index, item in enumerate(as_list(spec.get("config"), "spec.config"))
        ),
        extended_resource_name=as_str(spec.get("extendedResourceName"), "spec.extendedResourceName")
        or None,
        resource_version=as_str(metadata.get("resourceVersion"), "metadata.resourceVersion"),
        creation_timestamp=as_str(metadata.get("creationTimestamp"), "metadata.creationTimestamp"),
    )
