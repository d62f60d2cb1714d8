"""Small typed accessors for walking raw API dicts, raising `FieldError` with the path."""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, TypeVar

from berth.engine.errors import FieldError

RawObject = Mapping[str, Any]
E = TypeVar("E", bound=StrEnum)

_BRIEF = reprlib.Repr()
_BRIEF.maxstring = 60
_BRIEF.maxother = 60
_BRIEF.maxlevel = 2
for _limit in ("maxlist", "maxtuple", "maxdict", "maxset", "maxfrozenset", "maxdeque"):
    setattr(_BRIEF, _limit, 4)
MAX_NAME = 100


def brief(value: object) -> str:
    """A short one-line repr of a value read from input, for error messages.

    Input may be huge (a YAML alias repeated a million times); a message quotes at most
    a few elements and tens of characters of it, and never walks the rest.
    """
    return _BRIEF.repr(value)


def brief_name(name: str) -> str:
    """A name as written, cut to `MAX_NAME` characters so that a message stays readable."""
    return name if len(name) <= MAX_NAME else f"{name[:MAX_NAME]}..."


def display_name(raw: object, default: str = "<unnamed>") -> str:
    """How an error message names an object whose name field may be anything at all."""
    if isinstance(raw, str) and raw:
        return brief_name(raw)
    return default if raw is None or raw == "" else brief(raw)


def as_map(raw: object, field: str) -> RawObject:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise FieldError(field, f"expected an object, got {type(raw).__name__}")
    return raw


def as_list(raw: object, field: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise FieldError(field, f"expected a list, got {type(raw).__name__}")
    return raw


def as_str(raw: object, field: str, default: str = "") -> str:
    if raw is None:
        return default
    if not isinstance(raw, str):
        raise FieldError(field, f"expected a string, got {brief(raw)}")
    return raw


def as_int(raw: object, field: str, default: int = 0, *, bits: int = 64) -> int:
    """An integer field; `bits` is its width in the API (int32 or int64), as the API server checks."""
    if raw is None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise FieldError(field, f"expected an integer, got {brief(raw)}")
    if not -(2 ** (bits - 1)) <= raw < 2 ** (bits - 1):
        raise FieldError(field, f"{brief(raw)} is out of range for a {bits}-bit integer")
    return raw


def as_bool(raw: object, field: str, default: bool = False) -> bool:
    if raw is None:
        return default
    if not isinstance(raw, bool):
        raise FieldError(field, f"expected true or false, got {brief(raw)}")
    return raw


def as_string_map(raw: object, field: str) -> dict[str, str]:
    mapping = as_map(raw, field)
    for key, value in mapping.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise FieldError(f"{field}[{brief(key)}]", f"expected a string, got {brief(value)}")
    return dict(mapping)


def as_enum(enum: type[E], raw: object, field: str, default: E) -> E:
    """One of `enum`'s values; `default` when absent or empty; else an error listing the allowed ones."""
    if raw is None or raw == "":
        return default
    try:
        return enum(as_str(raw, field))
    except ValueError:
        allowed = ", ".join(member.value for member in enum)
        raise FieldError(field, f"unknown value {brief(raw)} (expected one of {allowed})") from None


def is_version_of(raw: RawObject, resource_version: str) -> bool:
    """Whether `raw` is the stored state `resource_version` names (both set and equal)."""
    metadata = raw.get("metadata")
    version = metadata.get("resourceVersion") if isinstance(metadata, Mapping) else None
    return bool(resource_version) and version == resource_version
