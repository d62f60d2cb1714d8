"""The small values resource.k8s.io objects are made of: amounts, device attributes, device IDs.

Device capacities, counters and consumed capacity are compared and added exactly (upstream's
`resource.Quantity` arithmetic), so an `Amount` keeps the exact number beside the canonical text
that goes back into a claim's status. Attributes keep their API type: a matchAttribute
constraint never equates the string "1" with the integer 1, nor `true` with 1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple, NewType, TypeVar

from berth.engine.dra.cel_semver import Semver, SemverError, parse_semver
from berth.engine.errors import FieldError, InvalidObjectError
from berth.engine.model.parsing import RawObject, as_map, as_str, brief, display_name
from berth.engine.model.quantity import parse_quantity
from berth.engine.model.quantity_form import Form, Quantity

__all__ = [
    "Amount",
    "AttributeValue",
    "DeviceID",
    "QualifiedName",
    "amount_of_units",
    "parse_amount",
    "parse_amount_map",
    "parse_attribute",
    "parse_entries",
    "parse_object",
    "parse_optional_amount",
    "required_name",
]

_Parsed = TypeVar("_Parsed")


def parse_object(
    kind: str, raw: RawObject, parse: Callable[[RawObject], _Parsed], *, namespaced: bool
) -> _Parsed:
    """`parse(raw)`, with a `FieldError` turned into an `InvalidObjectError` naming the object."""
    try:
        return parse(raw)
    except FieldError as error:
        metadata = raw.get("metadata") if isinstance(raw, Mapping) else None
        if not isinstance(metadata, Mapping):
            metadata = {}
        name = display_name(metadata.get("name"))
        if namespaced:
            name = f"{display_name(metadata.get('namespace'), 'default')}/{name}"
        raise InvalidObjectError(
            kind=kind, name=name, field=error.field, problem=error.problem
        ) from None


def required_name(raw: object, field: str) -> str:
    """The `name` of an object or list entry, which must be set."""
    name = as_str(as_map(raw, field).get("name"), f"{field}.name")
    if not name:
        raise FieldError(f"{field}.name", "must be set")
    return name


# A device attribute or capacity name: "domain/id", or a bare "id" in the driver's domain.
QualifiedName = NewType("QualifiedName", str)


@dataclass(frozen=True, slots=True)
class Amount:
    """A parsed quantity: its exact value, its canonical text and the form it prints in."""

    value: Fraction
    text: str
    form: Form
    units: int  # upstream's Value(): rounded up to a whole number, as int64
    quantity: Quantity  # as parsed, for CEL's quantity functions

    @classmethod
    def of(cls, quantity: Quantity) -> Amount:
        return cls(
            quantity.exact(), quantity.canonical_text(), quantity.form, quantity.scaled(0), quantity
        )

    def __str__(self) -> str:
        return self.text


def amount_of_units(units: int, form: Form) -> Amount:
    """A whole number of units printed in `form`, as upstream's `resource.NewQuantity` makes it."""
    return Amount.of(Quantity(units, 0, form, inline=True))


def parse_amount(raw: object, field: str) -> Amount:
    if raw is None:
        raise FieldError(field, "must be set")
    try:
        return Amount.of(parse_quantity(raw))
    except FieldError as error:
        raise FieldError(field, error.problem) from None


def parse_optional_amount(raw: object, field: str) -> Amount | None:
    return None if raw is None else parse_amount(raw, field)


_Entry = TypeVar("_Entry")


def parse_entries(
    raw: object, field: str, parse: Callable[[object, str], _Entry]
) -> dict[QualifiedName, _Entry]:
    """A map keyed by qualified names; `parse(value, "")` reads one value.

    The path of an entry ("field['name']") is only written when the entry is wrong: slices
    hold thousands of entries, and quoting each key up front costs more than parsing it.
    """
    parsed: dict[QualifiedName, _Entry] = {}
    for name, value in as_map(raw, field).items():
        try:
            parsed[QualifiedName(str(name))] = parse(value, "")
        except FieldError as error:
            raise FieldError(f"{field}[{brief(name)}]{error.field}", error.problem) from None
    return parsed


def parse_amount_map(raw: object, field: str) -> dict[QualifiedName, Amount]:
    return parse_entries(raw, field, parse_amount)


AttributeValue = bool | int | str | Semver  # the CEL side's value kinds

_ATTRIBUTE_KINDS = ("bool", "int", "string", "version")


def parse_attribute(raw: object, field: str) -> AttributeValue:
    """A DeviceAttribute: exactly one of bool, int, string, version."""
    attribute: RawObject = as_map(raw, field)
    present = [kind for kind in _ATTRIBUTE_KINDS if attribute.get(kind) is not None]
    if len(present) != 1:
        raise FieldError(field, f"exactly one of {', '.join(_ATTRIBUTE_KINDS)} must be set")
    kind = present[0]
    value = attribute[kind]
    if kind == "bool":
        if not isinstance(value, bool):
            raise FieldError(f"{field}.bool", f"expected true or false, got {brief(value)}")
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise FieldError(f"{field}.int", f"expected an integer, got {brief(value)}")
        return value
    if not isinstance(value, str):
        raise FieldError(f"{field}.{kind}", f"expected a string, got {brief(value)}")
    if kind != "version":
        return value
    try:
        return parse_semver(value)
    except SemverError as error:
        raise FieldError(f"{field}.version", str(error)) from None


class DeviceID(NamedTuple):
    """driver/pool/device: how allocations, counters and capacity bookkeeping name a device.

    A named tuple rather than a dataclass: it is hashed on every step of the search.
    """

    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"
