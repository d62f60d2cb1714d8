"""A claim's allocation (status.allocation): read from the cluster, or made by the allocator.

The same value serves both ways: the allocator's result is what PreBind writes into the claim
status (`to_dict`), and allocations read from claims tell the allocator which devices and how
much of their capacity are already taken.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from berth.engine.dra.requests import DeviceToleration, parse_toleration
from berth.engine.dra.values import Amount, DeviceID, QualifiedName, parse_amount_map
from berth.engine.errors import FieldError
from berth.engine.model.labels import NodeSelector, parse_node_selector
from berth.engine.model.parsing import as_bool, as_list, as_map, as_str

__all__ = [
    "CONFIG_SOURCE_CLAIM",
    "CONFIG_SOURCE_CLASS",
    "AllocatedDevice",
    "AllocationConfiguration",
    "AllocationResult",
    "parse_allocation",
]

CONFIG_SOURCE_CLASS = "FromClass"
CONFIG_SOURCE_CLAIM = "FromClaim"


@dataclass(frozen=True, slots=True)
class AllocatedDevice:
    """One device given to one request (`request` is "req" or "req/subrequest")."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    share_id: str | None = None
    consumed_capacity: Mapping[QualifiedName, Amount] | None = None

    @property
    def id(self) -> DeviceID:
        return DeviceID(self.driver, self.pool, self.device)

    def to_dict(self) -> dict[str, Any]:
        written: dict[str, Any] = {
            "request": self.request,
            "driver": self.driver,
            "pool": self.pool,
            "device": self.device,
        }
        if self.admin_access is not None:
            written["adminAccess"] = self.admin_access
        if self.tolerations:
            written["tolerations"] = [toleration.to_dict() for toleration in self.tolerations]
        if self.binding_conditions:
            written["bindingConditions"] = list(self.binding_conditions)
        if self.binding_failure_conditions:
            written["bindingFailureConditions"] = list(self.binding_failure_conditions)
        if self.share_id is not None:
            written["shareID"] = self.share_id
        if self.consumed_capacity:
            written["consumedCapacity"] = {
                name: amount.text for name, amount in self.consumed_capacity.items()
            }
        return written


@dataclass(frozen=True, slots=True)
class AllocationConfiguration:
    source: str  # FromClass or FromClaim
    requests: tuple[str, ...]  # empty: all requests
    configuration: Mapping[str, Any]  # the opaque DeviceConfiguration as written

    def to_dict(self) -> dict[str, Any]:
        written: dict[str, Any] = {"source": self.source, **self.configuration}
        if self.requests:
            written["requests"] = list(self.requests)
        return written


@dataclass(frozen=True, slots=True)
class AllocationResult:
    devices: tuple[AllocatedDevice, ...]
    config: tuple[AllocationConfiguration, ...] = ()
    node_selector: NodeSelector | None = None  # None: usable on every node
    node_selector_raw: Mapping[str, Any] | None = field(default=None, compare=False)

    def available_on(self, *, node_name: str, labels: Mapping[str, str]) -> bool:
        """Whether pods on this node can use the allocated devices (Filter's first check)."""
        return self.node_selector is None or self.node_selector.matches(labels, node_name)

    def to_dict(self) -> dict[str, Any]:
        """status.allocation as PreBind writes it (without allocationTimestamp, which it adds)."""
        devices: dict[str, Any] = {"results": [device.to_dict() for device in self.devices]}
        if self.config:
            devices["config"] = [config.to_dict() for config in self.config]
        written: dict[str, Any] = {"devices": devices}
        if self.node_selector_raw is not None:
            written["nodeSelector"] = dict(self.node_selector_raw)
        return written


def parse_allocation(raw: object, field: str) -> AllocationResult:
    allocation = as_map(raw, field)
    devices = as_map(allocation.get("devices"), f"{field}.devices")
    selector_raw = allocation.get("nodeSelector")
    return AllocationResult(
        devices=tuple(
            _parse_device(item, f"{field}.devices.results[{index}]")
            for index, item in enumerate(
                as_list(devices.get("results"), f"{field}.devices.results")
            )
        ),
        config=tuple(
            _parse_config(item, f"{field}.devices.config[{index}]")
            for index, item in enumerate(as_list(devices.get("config"), f"{field}.devices.config"))
        ),
        node_selector=parse_node_selector(selector_raw, f"{field}.nodeSelector"),
        node_selector_raw=None
        if selector_raw is None
        else as_map(selector_raw, f"{field}.nodeSelector"),
    )


def _required(raw: Mapping[str, Any], name: str, field: str) -> str:
    value = as_str(raw.get(name), f"{field}.{name}")
    if not value:
        raise FieldError(f"{field}.{name}", "must be set")
    return value


def _parse_device(raw: object, field: str) -> AllocatedDevice:
    device = as_map(raw, field)
    admin_access = device.get("adminAccess")
    share_id = device.get("shareID")
    capacity = device.get("consumedCapacity")

    def strings(name: str) -> tuple[str, ...]:
        where = f"{field}.{name}"
        return tuple(
            as_str(item, f"{where}[{index}]")
            for index, item in enumerate(as_list(device.get(name), where))
        )

    return AllocatedDevice(
        request=_required(device, "request", field),
        driver=_required(device, "driver", field),
        pool=_required(device, "pool", field),
        device=_required(device, "device", field),
        admin_access=None
        if admin_access is None
        else as_bool(admin_access, f"{field}.adminAccess"),
        tolerations=tuple(
            parse_toleration(item, f"{field}.tolerations[{index}]")
            for index, item in enumerate(as_list(device.get("tolerations"), f"{field}.tolerations"))
        ),
        binding_conditions=strings("bindingConditions"),
        binding_failure_conditions=strings("bindingFailureConditions"),
        share_id=None if share_id is None else as_str(share_id, f"{field}.shareID"),
        consumed_capacity=None
        if capacity is None
        else parse_amount_map(capacity, f"{field}.consumedCapacity"),
    )


def _parse_config(raw: object, field: str) -> AllocationConfiguration:
    config = as_map(raw, field)
    return AllocationConfiguration(
        source=_required(config, "source", field),
        requests=tuple(
            as_str(item, f"{field}.requests[{index}]")
            for index, item in enumerate(as_list(config.get("requests"), f"{field}.requests"))
        ),
        configuration={
            key: value for key, value in config.items() if key not in ("source", "requests")
        },
    )
