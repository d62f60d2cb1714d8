"""The device a selector test evaluates: the allocator's `DeviceView`, as a plain value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from berth.engine.dra.cel_device import AttributeValue, CapacityValue


@dataclass(frozen=True)
class Device:
    driver: str = "dra.example.com"
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    capacity: Mapping[str, CapacityValue] = field(default_factory=dict)
    allow_multiple_allocations: bool = False
