"""Device selectors: Kubernetes' CEL environment for DRA, compiled once, evaluated per device.

DeviceClasses and ResourceClaims select devices with CEL expressions over one variable,
`device` (`driver`, `allowMultipleAllocations`, `attributes[domain][name]`,
`capacity[domain][name]`), plus the quantity and semver libraries. kube-scheduler compiles each
expression once and evaluates it per candidate device; a failure is not "no match" but an
error that aborts the pod's scheduling attempt with a message naming the claim or class, the
selector and the device. This module gives the allocator the same: `compile_selector` (cached
by text), `CompiledSelector.matches`, and `CelError.report` for the message.

Like upstream, looking up a domain nobody published gives an empty map, so a missing attribute
fails as "no such key: <name>" whether its domain or only its name is missing, and `has()` and
optional chaining (`.?name.orValue(...)`) work on both.
"""

from __future__ import annotations

import functools
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from berth.engine.dra.cel_device import (
    AttributeValue,
    CapacityValue,
    DeviceView,
    split_qualified_name,
)
from berth.engine.dra.cel_library import (
    DESCRIPTOR_POOL,
    FUNCTIONS,
    quantity_message,
    semver_message,
)
from berth.engine.dra.cel_lists import LISTS_EXTENSION, RANGE_SIZE_CHECK
from berth.engine.dra.cel_network import NETWORK_EXTENSION
from berth.engine.dra.cel_quantity import amount_of
from berth.engine.dra.cel_regex import REGEX_EXTENSION, RegexError, compile_pattern
from berth.engine.dra.cel_semver import Semver
from berth.engine.dra.cel_source import (
    check_device_fields,
    literal_call_arguments,
    literal_domains,
    undeclared_member_call,
    wrap_call_arguments,
)
from berth.engine.dra.cel_unsupported import (
    EXTRA_MEMBER_FUNCTIONS,
    UNPLANNABLE_MEMBER_FUNCTIONS,
    not_provided_note,
)
from berth.engine.dra.cel_url import URL_EXTENSION

__all__ = ["CelError", "CompiledSelector", "compile_selector"]

_PATTERN_FUNCTIONS = frozenset(("find", "findAll"))
_DEVICE_FIELDS = frozenset(("driver", "allowMultipleAllocations", "attributes", "capacity"))
# kube-scheduler's hint after a failed lookup of a missing attribute (cel.EnhanceRuntimeError).
_MISSING_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check"
    " with has() for optional fields"
)
_ITERATION_BUDGET = (
    "comprehension iteration budget exceeded (Berth's CEL runtime stops an evaluation after"
    " 10,000 iterations; kube-scheduler stops it at a cost of 1,000,000)"
)
# cel-go's words for cel-cpp's runtime errors, as kube-scheduler reports them.
_RUNTIME_ERRORS = (
    (
        re.compile(r'NOT_FOUND: Key not found in map : "(?P<key>.*)"', re.DOTALL),
        "no such key: {key}",
    ),
    (re.compile(r"\w+: No matching overloads found.*", re.DOTALL), "no such overload"),
    (re.compile(r"\w+: divide by zero"), "division by zero"),
    # cel-cpp's lists library names the function before cel-go's text.
    (re.compile(r"\w+: sort\(\): unsupported type .*"), "list elements must be comparable"),
    (re.compile(r"\w+: (?:sort|flatten)\(\): (?P<rest>.*)", re.DOTALL), "{rest}"),
    # cel-cpp's own bound on a runtime without cost tracking; upstream has no such error.
    (re.compile(r"Iteration budget exceeded"), _ITERATION_BUDGET),
    (re.compile(r"\w+: (?P<rest>.*)", re.DOTALL), "{rest}"),
)
# How cel-go words a non-bool result it cannot convert (CompilationResult.DeviceMatches).
_NOT_BOOL = {
    "STRING": "unsupported native conversion from string to 'bool'",
    "INT": "unsupported type conversion from 'int' to bool",
    "UINT": "unsupported type conversion from 'uint' to bool",
    "DOUBLE": "type conversion error from Double to 'bool'",
    "BYTES": "type conversion error from Bytes to 'bool'",
    "NULL": "type conversion error from 'null_type' to 'bool'",
}


class CelError(Exception):
    """A selector failed to compile or to evaluate; `detail` is CEL's message, as upstream's."""

    def __init__(self, kind: Literal["compile", "runtime"], detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail

    def report(self, *, owner: str, selector_index: int, device_id: str) -> str:
        """kube-scheduler's message for this failure of the selector at `selector_index`.

        `owner` is "claim <namespace>/<name>" or "class <name>"; `device_id` is
        "<driver>/<pool>/<device>" (unused for compile errors, which name no device).
        """
        if self.kind == "compile":
            return f"{owner}: selector #{selector_index}: CEL compile error: {self.detail}"
        return (
            f"{owner}: selector #{selector_index} on device {device_id}: "
            f"CEL runtime error: {self.detail}"
        )


def _status_text(error: str) -> str:
    """cel-cpp's compile error without the status code around it (cel-go prints the rest alike)."""
    return re.sub(r"^\w+: |\s*\[\w+\]$", "", error)


def _runtime_detail(error: str) -> str:
    for pattern, template in _RUNTIME_ERRORS:
        match = pattern.fullmatch(error)
        if match:
            detail = template.format(**match.groupdict())
            return detail + _MISSING_KEY_HINT if detail.startswith("no such key:") else detail
    return error


# cel-cpp's own libraries that Kubernetes' base environment enables (cel-go's ext.Lists, ext.Sets,
# two-variable comprehensions); cel-expr-python reaches them only through an environment config.
_CEL_CPP_LIBRARIES = """
extensions:
  - name: lists
  - name: sets
  - name: two-var-comprehensions
"""


@functools.cache
def _environment() -> cel.Env:
    return cel.NewEnv(
        DESCRIPTOR_POOL,
        config=cel.NewEnvConfigFromYaml(_CEL_CPP_LIBRARIES),
        variables={"device": cel.Type.DYN},
        extensions=[
            ext_bindings.ExtBindings(),
            ext_optional.ExtOptional(),
            ext_strings.ExtStrings(2),  # the version Kubernetes' base environment uses
            LISTS_EXTENSION,
            REGEX_EXTENSION,
            NETWORK_EXTENSION,
            URL_EXTENSION,
        ],
        functions=FUNCTIONS,
    )


def _attribute(value: AttributeValue) -> Any:
    return semver_message(value) if isinstance(value, Semver) else value


def _capacity(value: CapacityValue) -> Any:
    return quantity_message(amount_of(value))


def _by_domain(
    values: Mapping[str, Any], *, driver: str, convert: Any
) -> dict[str, dict[str, Any]]:
    grouped: dict[str, dict[str, Any]] = {}
    for name, value in values.items():
        domain, identifier = split_qualified_name(name, driver=driver)
        grouped.setdefault(domain, {})[identifier] = convert(value)
    return grouped


@dataclass(slots=True)
class _DeviceInput:
    """One device converted for CEL, and its activations (by the empty domains they add)."""

    device: DeviceView
    value: dict[str, Any]
    activations: dict[frozenset[str], Any]


# Recently evaluated devices: a device meets several selectors (its class's, its request's) on
# every node it could serve, and handing CEL a ready activation is several times cheaper than
# converting the device again. Keyed by identity; an entry holds its device, so the id cannot
# be reused while it is cached.
_CONVERTED_DEVICES = 16384
_converted: OrderedDict[int, _DeviceInput] = OrderedDict()


def _device_input(device: DeviceView) -> _DeviceInput:
    cached = _converted.get(id(device))
    if cached is not None and cached.device is device:
        _converted.move_to_end(id(device))
        return cached
    driver = device.driver
    value = {
        "driver": driver,
        "allowMultipleAllocations": device.allow_multiple_allocations,
        "attributes": _by_domain(device.attributes, driver=driver, convert=_attribute),
        "capacity": _by_domain(device.capacity, driver=driver, convert=_capacity),
    }
    converted = _converted[id(device)] = _DeviceInput(device, value, {})
    if len(_converted) > _CONVERTED_DEVICES:
        _converted.popitem(last=False)
    return converted


def _activation(device: DeviceView, domains: frozenset[str]) -> Any:
    """The device's CEL activation, with an empty map for each of `domains` it lacks."""
    converted = _device_input(device)
    value = converted.value
    lacking = frozenset(
        domain
        for domain in domains
        if domain not in value["attributes"] or domain not in value["capacity"]
    )
    activation = converted.activations.get(lacking)
    if activation is None:
        if lacking:
            value = dict(value)
            for field in ("attributes", "capacity"):
                value[field] = {domain: {} for domain in lacking} | value[field]
        activation = _environment().Activation({"device": value})
        converted.activations[lacking] = activation
    return activation


@dataclass(frozen=True, slots=True)
class CompiledSelector:
    """One compiled selector expression; `matches` evaluates it for a device."""

    expression: str
    _program: Any
    # Domains the expression looks up by a literal key: a device lacking one gets an empty
    # map there, so a lookup fails on the attribute's name, as upstream's default map does.
    _domains: frozenset[str]
    # Whether it looks up a domain by a computed key (`device.attributes[device.driver]`).
    _computed_domain: bool

    def matches(self, device: DeviceView) -> bool:
        """Whether the device is selected; raises `CelError` if the evaluation fails."""
        empty = self._domains | {device.driver} if self._computed_domain else self._domains
        try:
            result = self._program.eval(_activation(device, empty))
        except (RuntimeError, ValueError) as error:  # cel-cpp aborted the whole evaluation
            raise CelError("runtime", _runtime_detail(_status_text(str(error)))) from None
        kind = result.type().name()
        if kind == "BOOL":
            return bool(result.value())
        if kind == "ERROR":
            raise CelError("runtime", _runtime_detail(str(result.value())))
        conversion = _NOT_BOOL.get(kind, f"unsupported native conversion to 'bool' from {kind}")
        raise CelError(
            "runtime",
            f"CEL result of type {kind.lower()} could not be converted to bool: {conversion}",
        )


def _check_literal_patterns(expression: str) -> None:
    """Upstream compiles a literal `find`/`findAll` pattern with the program: a bad one is a
    compile error there, not a runtime error on the first device."""
    for literal in literal_call_arguments(expression, _PATTERN_FUNCTIONS):
        pattern = _environment().compile(literal).eval().value()
        try:
            compile_pattern(pattern)
        except RegexError as error:
            raise CelError("compile", f"program instantiation failed: {error}") from None


@functools.lru_cache(maxsize=1024)
def compile_selector(expression: str) -> CompiledSelector:
    """Compile a device selector once (cached by its text); raises `CelError` if it is invalid."""
    try:
        program = _environment().compile(expression)
    except RuntimeError as error:
        detail = "compilation failed: " + _status_text(str(error))
        raise CelError("compile", detail + not_provided_note(detail)) from None
    undefined = check_device_fields(expression, _DEVICE_FIELDS) or undeclared_member_call(
        expression, EXTRA_MEMBER_FUNCTIONS | UNPLANNABLE_MEMBER_FUNCTIONS
    )
    if undefined:
        detail = "compilation failed: " + undefined
        raise CelError("compile", detail + not_provided_note(detail))
    returns = program.return_type().name()
    if returns not in ("BOOL", "DYN"):
        raise CelError(
            "compile", f"must evaluate to bool or the unknown type, not {returns.lower()}"
        )
    _check_literal_patterns(expression)
    guarded = wrap_call_arguments(expression, function="lists.range", wrapper=RANGE_SIZE_CHECK)
    if guarded != expression:
        program = _environment().compile(guarded)
    domains, computed = literal_domains(expression)
    return CompiledSelector(expression, program, domains, computed)
