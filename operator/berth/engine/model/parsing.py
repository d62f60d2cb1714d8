"""Small typed accessors for walking raw API dicts, raising `FieldError` with the path."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.engine.errors import FieldError

RawObject = Mapping[str, Any]


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
        raise FieldError(field, f"expected a string, got {raw!r}")
    return raw


def as_int(raw: object, field: str, default: int = 0) -> int:
    if raw is None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise FieldError(field, f"expected an integer, got {raw!r}")
    return raw


def as_bool(raw: object, field: str, default: bool = False) -> bool:
    if raw is None:
        return default
    if not isinstance(raw, bool):
        raise FieldError(field, f"expected true or false, got {raw!r}")
    return raw


def as_string_map(raw: object, field: str) -> dict[str, str]:
    mapping = as_map(raw, field)
    for key, value in mapping.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise FieldError(f"{field}[{key!r}]", f"expected a string, got {value!r}")
    return dict(mapping)
