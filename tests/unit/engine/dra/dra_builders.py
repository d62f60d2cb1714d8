"""Builders of DRA objects for tests, and a tiny stand-in for the CEL environment.

`FakeCel` understands a handful of expression shapes, enough for allocator tests:

    true | false
    device.driver == "x"
    device.attributes["domain"].name == <"text" | 12 | true>
    device.capacity["domain"].name >= <units>
    fail()                 (a runtime error)
    <a> && <b>

anything else is a compile error, which is what the real CEL environment reports for
expressions it cannot type-check.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from typing import Any

from berth.engine.dra.allocated_state import AllocatedState
from berth.engine.dra.allocator import Allocator
from berth.engine.dra.cel_semver import Semver
from berth.engine.dra.claims import ResourceClaim
from berth.engine.dra.classes import DeviceClass
from berth.engine.dra.pools import SliceIndex
from berth.engine.dra.selection import CelDevice, SelectorCache
from berth.engine.dra.slices import ResourceSlice
from berth.engine.dra.values import QualifiedName
from berth.engine.model.node import Node

DRIVER = "gpu.example.com"


class FakeCelError(Exception):
    pass


_ATTRIBUTE = re.compile(r'device\.attributes\["([^"]+)"\]\.([\w.-]+) == (.+)')
_CAPACITY = re.compile(r'device\.capacity\["([^"]+)"\]\.([\w.-]+) >= (\d+)')
_DRIVER = re.compile(r'device\.driver == "([^"]*)"')


def _attribute(device: CelDevice, domain: str, name: str) -> object:
    value = device.attributes.get(QualifiedName(f"{domain}/{name}"))
    if value is None and domain == device.driver:
        value = device.attributes.get(QualifiedName(name))
    return value


def _compile_one(text: str) -> Callable[[CelDevice], bool]:
    text = text.strip()
    if text in ("true", "false"):
        return lambda _device: text == "true"
    if text == "fail()":

        def failing(_device: CelDevice) -> bool:
            raise FakeCelError("no such overload")

        return failing
    if match := _DRIVER.fullmatch(text):
        wanted_driver = match[1]
        return lambda device: device.driver == wanted_driver
    if match := _ATTRIBUTE.fullmatch(text):
        domain, name, literal = match[1], match[2], json.loads(match[3])
        return lambda device: (
            (value := _attribute(device, domain, name)) is not None
            and type(value) is type(literal)
            and value == literal
        )
    if match := _CAPACITY.fullmatch(text):
        domain, name, units = match[1], match[2], int(match[3])

        def capacity_at_least(device: CelDevice) -> bool:
            amount = device.capacity.get(QualifiedName(f"{domain}/{name}"))
            if amount is None and domain == device.driver:
                amount = device.capacity.get(QualifiedName(name))
            return amount is not None and amount.exact() >= units

        return capacity_at_least
    raise FakeCelError(f"undeclared reference in {text!r}")


class _Compiled:
    def __init__(self, parts: list[Callable[[CelDevice], bool]]) -> None:
        self.parts = parts

    def matches(self, device: CelDevice, /) -> bool:
        return all(part(device) for part in self.parts)


class FakeCel:
    def __init__(self) -> None:
        self.compiled: list[str] = []

    def __call__(self, expression: str, /) -> _Compiled:
        self.compiled.append(expression)
        return _Compiled([_compile_one(part) for part in expression.split("&&")])


def selectors(cel: FakeCel | None = None) -> SelectorCache:
    return SelectorCache(cel or FakeCel(), errors=(FakeCelError,))


def attributes(values: dict[str, Any]) -> dict[str, Any]:
    written: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, Semver):
            written[name] = {"version": str(value)}
        elif isinstance(value, bool):
            written[name] = {"bool": value}
        elif isinstance(value, int):
            written[name] = {"int": value}
        else:
            written[name] = {"string": value}
    return written


def device(name: str, attrs: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    written: dict[str, Any] = {"name": name, **fields}
    if attrs:
        written["attributes"] = attributes(attrs)
    return written


def gpus(count: int, **fields: Any) -> list[dict[str, Any]]:
    return [device(f"gpu-{index}", **fields) for index in range(count)]


def slice_dict(
    name: str,
    devices: list[dict[str, Any]] | None = None,
    *,
    driver: str = DRIVER,
    pool: str = "",
    node: str | None = "node-a",
    generation: int = 1,
    count: int = 1,
    **spec: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "driver": driver,
        "pool": {
            "name": pool or node or name,
            "generation": generation,
            "resourceSliceCount": count,
        },
        **spec,
    }
    if devices is not None:
        body["devices"] = devices
    if node is not None and not (
        {"nodeSelector", "allNodes", "perDeviceNodeSelection"} & spec.keys()
    ):
        body["nodeName"] = node
    return {"metadata": {"name": name}, "spec": body}


def make_slice(
    name: str, devices: list[dict[str, Any]] | None = None, **fields: Any
) -> ResourceSlice:
    return ResourceSlice.from_dict(slice_dict(name, devices, **fields))


def make_class(
    name: str = "gpu", selectors: tuple[str, ...] = (), config: list[dict[str, Any]] | None = None
) -> DeviceClass:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": text}} for text in selectors]}
    if config:
        spec["config"] = config
    return DeviceClass.from_dict({"metadata": {"name": name}, "spec": spec})


def exactly(
    name: str = "req",
    device_class: str = "gpu",
    *,
    count: int | None = None,
    mode: str | None = None,
    selectors: tuple[str, ...] = (),
    **fields: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {"deviceClassName": device_class, **fields}
    if count is not None:
        body["count"] = count
    if mode is not None:
        body["allocationMode"] = mode
    if selectors:
        body["selectors"] = [{"cel": {"expression": text}} for text in selectors]
    return {"name": name, "exactly": body}


def first_available(name: str, *subrequests: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "firstAvailable": [{"name": sub["name"], **sub["exactly"]} for sub in subrequests],
    }


def make_claim(
    name: str = "claim",
    *requests: dict[str, Any],
    constraints: list[dict[str, Any]] | None = None,
    config: list[dict[str, Any]] | None = None,
    status: dict[str, Any] | None = None,
) -> ResourceClaim:
    devices: dict[str, Any] = {"requests": list(requests) or [exactly()]}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    raw: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"devices": devices},
    }
    if status:
        raw["status"] = status
    return ResourceClaim.from_dict(raw)


def make_node(name: str = "node-a", labels: dict[str, str] | None = None) -> Node:
    return Node.from_dict({"metadata": {"name": name, "labels": labels or {}}})


def share_ids() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"share-{next(counter)}"


def make_allocator(
    slices: list[ResourceSlice],
    classes: list[DeviceClass] | None = None,
    *,
    allocated: list[ResourceClaim] = (),  # type: ignore[assignment]
    cel: FakeCel | None = None,
    clock: Callable[[], float] | None = None,
) -> Allocator:
    state = AllocatedState.of(claim.allocation for claim in allocated if claim.allocation)
    extra: dict[str, Any] = {} if clock is None else {"clock": clock}
    return Allocator(
        slices=SliceIndex(slices),
        classes={item.name: item for item in classes or [make_class()]},
        allocated=state,
        selectors=selectors(cel),
        new_share_id=share_ids(),
        **extra,
    )
