"""A Hypothesis strategy that breaks one field of a valid raw object by giving it a wrong type.

The API server would never send such an object, but files fed to `berth simulate`, older
API versions and hand-written tests can; what matters is that the parser refuses it with an
error naming that field (or an enclosing one) instead of raising something else.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

# Fields Berth never reads: a wrong type there changes nothing.
_IGNORED_ROOTS = ("apiVersion", "kind", "metadata.annotations")


def _fields(value: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    """(path in Berth's field syntax, container, key) for every field below `value`."""
    if isinstance(value, dict):
        items: Iterator[tuple[Any, Any]] = iter(value.items())
        for key, child in items:
            where = f"{path}.{key}" if path else key
            yield where, value, key
            yield from _fields(child, where)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            where = f"{path}[{index}]"
            yield where, value, index
            yield from _fields(child, where)


def _wrong_values(value: Any) -> tuple[Any, ...]:
    if isinstance(value, bool):
        return ("true", 1)
    if isinstance(value, int):
        return ("7", 1.5, True, [])
    if isinstance(value, str):
        return (7, [], {}, False)
    if isinstance(value, list):
        return ({}, "x", 7)
    return ([], "x", 7)


@st.composite
def corrupted(draw: st.DrawFn, raw: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A deep copy of `raw` with one field's value replaced by one of another type, and its path."""
    broken = copy.deepcopy(raw)
    fields = [
        (where, container, key)
        for where, container, key in _fields(broken, "")
        if not where.startswith(_IGNORED_ROOTS)
    ]
    where, container, key = draw(st.sampled_from(fields))
    container[key] = draw(st.sampled_from(_wrong_values(container[key])))
    return broken, where
