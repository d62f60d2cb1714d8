"""A claim's device requests: `exactly` one kind of device, or `firstAvailable` alternatives.

Both shapes share one value, `RequestSpec`, because the allocator treats a request and a
subrequest alike (a subrequest never has admin access). Defaults are those the API server
applies (allocationMode ExactCount, count 1, toleration operator Equal), so objects read
from files behave like objects read from the cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from berth.engine.dra.values import Amount, QualifiedName, parse_amount_map
from berth.engine.errors import FieldError
from berth.engine.model.parsing import as_bool, as_int, as_list, as_map, as_str, brief

__all__ = [
    "ALLOCATION_MODE_ALL",
    "ALLOCATION_MODE_EXACT_COUNT",
    "DeviceRequest",
    "DeviceToleration",
    "RequestSpec",
    "parse_request",
    "parse_selector_expression",
    "parse_toleration",
]

ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
ALLOCATION_MODE_ALL = "All"
_MODES = (ALLOCATION_MODE_EXACT_COUNT, ALLOCATION_MODE_ALL)
_TOLERATION_OPERATORS = ("Equal", "Exists")


@dataclass(frozen=True, slots=True)
class DeviceToleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The toleration as an allocation result records it."""
        written: dict[str, Any] = {"operator": self.operator}
        for name, value in (("key", self.key), ("value", self.value), ("effect", self.effect)):
            if value:
                written[name] = value
        if self.toleration_seconds is not None:
            written["tolerationSeconds"] = self.toleration_seconds
        return written


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """What one request (or one subrequest) asks for."""

    name: str
    device_class_name: str
    # CEL expressions; None where a selector of a type newer than CEL was given.
    selectors: tuple[str | None, ...] = ()
    allocation_mode: str = ALLOCATION_MODE_EXACT_COUNT
    count: int = 1
    admin_access: bool | None = None  # None: not asked (differs from false in the result)
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: Mapping[QualifiedName, Amount] | None = None  # capacity.requests


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """One entry of spec.devices.requests: exactly one of `exactly` and `first_available`."""

    name: str
    exactly: RequestSpec | None
    first_available: tuple[RequestSpec, ...] = ()


def parse_request(raw: object, field: str) -> DeviceRequest:
    request = as_map(raw, field)
    name = as_str(request.get("name"), f"{field}.name")
    if not name:
        raise FieldError(f"{field}.name", "must be set")
    exactly = request.get("exactly")
    first_available = as_list(request.get("firstAvailable"), f"{field}.firstAvailable")
    if (exactly is None) == (not first_available):
        raise FieldError(field, "exactly one of exactly, firstAvailable must be set")
    if exactly is not None:
        return DeviceRequest(
            name=name,
            exactly=_parse_spec(exactly, f"{field}.exactly", name=name, subrequest=False),
        )
    subrequests: list[RequestSpec] = []
    for index, item in enumerate(first_available):
        where = f"{field}.firstAvailable[{index}]"
        sub_name = as_str(as_map(item, where).get("name"), f"{where}.name")
        if not sub_name:
            raise FieldError(f"{where}.name", "must be set")
        if any(existing.name == sub_name for existing in subrequests):
            raise FieldError(f"{where}.name", f"duplicate name {sub_name}")
        subrequests.append(_parse_spec(item, where, name=sub_name, subrequest=True))
    return DeviceRequest(name=name, exactly=None, first_available=tuple(subrequests))


def _parse_spec(raw: object, field: str, *, name: str, subrequest: bool) -> RequestSpec:
    spec = as_map(raw, field)
    class_name = as_str(spec.get("deviceClassName"), f"{field}.deviceClassName")
    if not class_name:
        raise FieldError(f"{field}.deviceClassName", "must be set")
    mode = as_str(spec.get("allocationMode"), f"{field}.allocationMode") or (
        ALLOCATION_MODE_EXACT_COUNT
    )
    if mode not in _MODES:
        raise FieldError(f"{field}.allocationMode", f"unsupported value {brief(mode)}")
    count = as_int(spec.get("count"), f"{field}.count", default=0)
    if mode == ALLOCATION_MODE_EXACT_COUNT:
        count = count or 1
        if count < 1:
            raise FieldError(f"{field}.count", "must be at least 1")
    elif count:
        raise FieldError(f"{field}.count", "must not be set when allocationMode is All")
    admin_access = spec.get("adminAccess")
    if subrequest and admin_access is not None:
        raise FieldError(f"{field}.adminAccess", "is not allowed in a subrequest")
    capacity = spec.get("capacity")
    return RequestSpec(
        name=name,
        device_class_name=class_name,
        selectors=tuple(
            parse_selector_expression(item, f"{field}.selectors[{index}]")
            for index, item in enumerate(as_list(spec.get("selectors"), f"{field}.selectors"))
        ),
        allocation_mode=mode,
        count=count,
        admin_access=None
        if admin_access is None
        else as_bool(admin_access, f"{field}.adminAccess"),
        tolerations=tuple(
            parse_toleration(item, f"{field}.tolerations[{index}]")
            for index, item in enumerate(as_list(spec.get("tolerations"), f"{field}.tolerations"))
        ),
        capacity=None
        if capacity is None
        else parse_amount_map(
            as_map(capacity, f"{field}.capacity").get("requests"), f"{field}.capacity.requests"
        ),
    )


def parse_selector_expression(raw: object, field: str) -> str | None:
    """A DeviceSelector's CEL expression; None for a selector without `cel` (a newer type)."""
    selector = as_map(raw, field)
    cel = selector.get("cel")
    if cel is None:
        return None
    expression = as_str(as_map(cel, f"{field}.cel").get("expression"), f"{field}.cel.expression")
    if not expression:
        raise FieldError(f"{field}.cel.expression", "must be set")
    return expression


def parse_toleration(raw: object, field: str) -> DeviceToleration:
    toleration = as_map(raw, field)
    operator = as_str(toleration.get("operator"), f"{field}.operator") or "Equal"
    if operator not in _TOLERATION_OPERATORS:
        raise FieldError(f"{field}.operator", f"unsupported value {brief(operator)}")
    value = as_str(toleration.get("value"), f"{field}.value")
    if operator == "Exists" and value:
        raise FieldError(f"{field}.value", "must be empty when operator is Exists")
    seconds = toleration.get("tolerationSeconds")
    return DeviceToleration(
        key=as_str(toleration.get("key"), f"{field}.key"),
        operator=operator,
        value=value,
        effect=as_str(toleration.get("effect"), f"{field}.effect"),
        toleration_seconds=None
        if seconds is None
        else as_int(seconds, f"{field}.tolerationSeconds"),
    )
