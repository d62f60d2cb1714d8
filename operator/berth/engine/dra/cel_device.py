"""The device as a DRA selector sees it, and the one rule that qualifies attribute names.

A ResourceSlice names a device's attributes and capacities either fully ("gpu.example.com/model")
or shortly ("model"); a short name belongs to the device's own driver. CEL reads both through
`device.attributes[domain][name]`, and constraints (`matchAttribute`) name attributes fully, so
the rule lives here, once, for the CEL environment and the allocator alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from berth.engine.dra.cel_semver import Semver
from berth.engine.model.quantity import Quantity

__all__ = [
    "AttributeValue",
    "CapacityValue",
    "DeviceView",
    "find_attribute",
    "split_qualified_name",
]

# The value kinds a device attribute can hold (resource.k8s.io/v1 DeviceAttribute).
AttributeValue = bool | int | str | Semver
# A capacity: a parsed quantity, or a whole number of base units.
CapacityValue = int | Quantity


class DeviceView(Protocol):
    """What a selector reads from one device; the allocator's device model provides it.

    Treated as immutable: selectors keep a device's CEL input by object identity, so a changed
    device must be a new object (as a parsed ResourceSlice's devices are).
    """

    @property
    def driver(self) -> str: ...

    @property
    def attributes(self) -> Mapping[str, AttributeValue]:
        """Attribute values by name as published: qualified ("domain/name") or short ("name")."""
        ...

    @property
    def capacity(self) -> Mapping[str, CapacityValue]:
        """Capacities by name as published: qualified or short, like `attributes`."""
        ...

    @property
    def allow_multiple_allocations(self) -> bool: ...


def split_qualified_name(name: str, *, driver: str) -> tuple[str, str]:
    """(domain, identifier) of an attribute or capacity name; a short name is the driver's."""
    domain, separator, identifier = name.partition("/")
    if not separator:
        return driver, name
    return domain, identifier


def find_attribute(
    attributes: Mapping[str, AttributeValue], full_name: str, *, driver: str
) -> AttributeValue | None:
    """The attribute a fully qualified name ("domain/name") refers to on a device of `driver`.

    Published under the full name, or, when the domain is the driver's own, under the short one.
    """
    value = attributes.get(full_name)
    if value is not None:
        return value
    domain, identifier = split_qualified_name(full_name, driver=driver)
    if domain != driver or identifier == full_name:
        return None
    return attributes.get(identifier)
