"""DeviceTaintRule (resource.k8s.io/v1): taints an administrator puts on devices from outside.

kube-scheduler v1.37 runs with DRADeviceTaintRules on (GA): its ResourceSlice tracker adds
the taint of every rule whose selector matches (driver, pool and device, each optional) to
the matching devices, and the allocator sees the slices so patched. A rule without a
selector matches nothing. `apply_taint_rules` does that patching for one slice.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from berth.engine.dra.slices import DeviceTaint, ResourceSlice, parse_device_taint
from berth.engine.dra.values import parse_object, required_name
from berth.engine.model.parsing import RawObject, as_map, as_str

__all__ = ["DeviceTaintRule", "DeviceTaintSelector", "apply_taint_rules"]


@dataclass(frozen=True, slots=True)
class DeviceTaintSelector:
    """Which devices a rule taints; an unset field matches any value."""

    driver: str | None = None
    pool: str | None = None
    device: str | None = None


@dataclass(frozen=True, slots=True)
class DeviceTaintRule:
    name: str
    selector: DeviceTaintSelector | None  # None: the rule taints no device
    taint: DeviceTaint
    resource_version: str = ""

    @property
    def key(self) -> str:
        return self.name

    @classmethod
    def from_dict(cls, raw: RawObject) -> DeviceTaintRule:
        """Parse a DeviceTaintRule; raises `InvalidObjectError` naming the rule and the field."""
        return parse_object("DeviceTaintRule", raw, _parse_rule, namespaced=False)


def _parse_rule(raw: RawObject) -> DeviceTaintRule:
    metadata = as_map(raw.get("metadata"), "metadata")
    spec = as_map(raw.get("spec"), "spec")
    selector_raw = spec.get("deviceSelector")
    selector = None
    if selector_raw is not None:
        fields = as_map(selector_raw, "spec.deviceSelector")
        selector = DeviceTaintSelector(
            **{
                name: _optional(fields.get(name), f"spec.deviceSelector.{name}")
                for name in ("driver", "pool", "device")
            }
        )
    return DeviceTaintRule(
        name=required_name(metadata, "metadata"),
        selector=selector,
        taint=parse_device_taint(spec.get("taint"), "spec.taint"),
        resource_version=as_str(metadata.get("resourceVersion"), "metadata.resourceVersion"),
    )


def _optional(raw: object, field: str) -> str | None:
    return None if raw is None else as_str(raw, field)


def apply_taint_rules(
    resource_slice: ResourceSlice, rules: Iterable[DeviceTaintRule]
) -> ResourceSlice:
    """`resource_slice` with each matching rule's taint appended to its devices' own."""
    added: dict[int, list[DeviceTaint]] = {}
    for rule in rules:
        selector = rule.selector
        if selector is None:
            continue
        if selector.driver is not None and selector.driver != resource_slice.driver:
            continue
        if selector.pool is not None and selector.pool != resource_slice.pool.name:
            continue
        for index, device in enumerate(resource_slice.devices):
            if selector.device is None or selector.device == device.name:
                added.setdefault(index, []).append(rule.taint)
    if not added:
        return resource_slice
    devices = tuple(
        dataclasses.replace(device, taints=(*device.taints, *added[index]))
        if index in added
        else device
        for index, device in enumerate(resource_slice.devices)
    )
    return dataclasses.replace(resource_slice, devices=devices)
