"""Device and class selectors: how the allocator asks CEL whether a device fits a request.

The CEL environment lives beside this module (`cel*`), written separately; the allocator
knows it only through `SelectorCompiler`, a callable that compiles one expression into
something with `matches(device)`. Which exceptions mean "this expression is broken" is told
to `SelectorCache` too, so compile and runtime errors are reported in kube-scheduler's words:

    class gpu: selector #0: CEL compile error: ...
    claim default/c: selector #1 on device driver/pool/dev: CEL runtime error: ...

Each expression is compiled once per cache (upstream keeps a CEL cache for the same reason),
and a device's answer to an expression is remembered on the device's `Candidate`, which
lives as long as the slice index it came from: selectors are pure functions of the device.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, cast

from berth.engine.dra.errors import AllocationError
from berth.engine.dra.slices import DeviceCapacity
from berth.engine.dra.values import AttributeValue, DeviceID, QualifiedName
from berth.engine.model.quantity import Quantity

__all__ = [
    "CelDevice",
    "CompiledSelector",
    "SelectorCache",
    "SelectorCompiler",
    "SelectorFailure",
    "cel_selector_cache",
]


@dataclass(frozen=True, slots=True)
class CelDevice:
    """What a selector sees of a device (upstream's `cel.Device`).

    `attributes` and `capacity` are keyed as the slice writes them: a bare name belongs to
    the driver's domain, which the CEL environment resolves.
    """

    driver: str
    attributes: Mapping[str, AttributeValue]  # QualifiedName keys, typed as the CEL side reads them
    capacity: Mapping[str, Quantity]
    allow_multiple_allocations: bool = False

    @classmethod
    def of(
        cls,
        *,
        driver: str,
        attributes: Mapping[QualifiedName, AttributeValue],
        capacity: Mapping[QualifiedName, DeviceCapacity],
        allow_multiple_allocations: bool | None,
    ) -> CelDevice:
        return cls(
            driver=driver,
            attributes=cast(Mapping[str, AttributeValue], attributes),  # a QualifiedName is a str
            capacity={name: entry.value.quantity for name, entry in capacity.items()},
            allow_multiple_allocations=bool(allow_multiple_allocations),
        )


class CompiledSelector(Protocol):
    def matches(self, device: CelDevice, /) -> bool: ...


class SelectorCompiler(Protocol):
    def __call__(self, expression: str, /) -> CompiledSelector: ...


class SelectorFailure(AllocationError):
    """A selector could not be compiled or evaluated; `str()` is kube-scheduler's message."""


class _Broken:
    """An expression that did not compile; every use reports the compile error."""

    def __init__(self, error: Exception) -> None:
        self.error = error


class SelectorCache:
    """Compiles each expression once and evaluates it, turning CEL errors into `SelectorFailure`."""

    def __init__(
        self, compile_selector: SelectorCompiler, *, errors: tuple[type[Exception], ...]
    ) -> None:
        self._compile = compile_selector
        self._errors = errors
        self._compiled: dict[str, CompiledSelector | _Broken] = {}

    def matches(
        self, *, expression: str, device: CelDevice, device_id: DeviceID, owner: str, index: int
    ) -> bool:
        """Whether `device` satisfies selector #`index` of `owner` ("class x" or "claim ns/n")."""
        compiled = self._compiled.get(expression)
        if compiled is None:
            try:
                compiled = self._compile(expression)
            except self._errors as error:
                compiled = _Broken(error)
            self._compiled[expression] = compiled
        if isinstance(compiled, _Broken):
            raise SelectorFailure(
                f"{owner}: selector #{index}: CEL compile error: {compiled.error}"
            )
        try:
            return compiled.matches(device)
        except self._errors as error:
            raise SelectorFailure(
                f"{owner}: selector #{index} on device {device_id}: CEL runtime error: {error}"
            ) from None


def cel_selector_cache() -> SelectorCache:
    """A cache compiling with Kubernetes' CEL environment for DRA (`berth.engine.dra.cel`).

    CEL's runtime (C++ with protobuf, ~24 MiB resident) is loaded here, by the first user
    that needs a selector, not with every profile: most clusters never use DRA.
    """
    from berth.engine.dra.cel import CelError, compile_selector

    return SelectorCache(compile_selector, errors=(CelError,))
