"""Strict decoding helpers shared by every configuration document Berth reads.

kube-scheduler decodes its configuration strictly: an unknown field is refused
by name, and a value of the wrong type is an error, never a silent default. The
profile document and the extender list both decode with these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.engine.errors import FieldError, shown


def field_name(key: object) -> str:
    """A field name fit for a path: as written if it is a sane string, else a short repr."""
    return key if isinstance(key, str) and len(key) <= 100 else shown(key)


def check_known_fields(raw: Mapping[Any, Any], known: frozenset[str], where: str) -> None:
    """Refuse the first field of `raw` that is not in `known`, as strict decoding does."""
    for key in raw:
        if key not in known:
            raise FieldError(f"{where}.{field_name(key)}", "unknown field")


def as_object(raw: object, where: str, expected: str) -> Mapping[Any, Any]:
    """`raw` if it is an object (null reads as an empty one), else a FieldError naming `expected`."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise FieldError(where, f"expected {expected}, got {shown(raw)}")
    return raw


def as_list(raw: object, where: str, expected: str) -> list[Any]:
    """`raw` if it is a list (null reads as an empty one), else a FieldError naming `expected`."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise FieldError(where, f"expected {expected}, got {shown(raw)}")
    return raw
