"""Kubernetes' list functions for CEL (k8s.io/apiserver `library.Lists`, version 1).

kube-scheduler's stored-expressions environment offers `isSorted`, `sum`, `min`, `max`,
`indexOf`, `lastIndexOf` and `includes` on lists; cel-expr-python has none of them, so they are
Python functions here. Two limits of its function bindings shape the declarations:

- A parameter declared `dyn` never matches at run time, and type parameters cannot be declared,
  so upstream's `list(T)`/`T` overloads become `list(dyn)` with one overload per concrete kind
  of the other argument. The checker therefore accepts a few expressions upstream's rejects
  (`[1].indexOf("a")` is -1 here, a compile error there).
- The runtime keys a Python implementation by the argument kinds it sees (a list is a list,
  whatever its elements; all messages are one kind), so each function has one implementation
  that reads any element, and `sum`, `min` and `max` return `dyn`.

Equality and ordering follow cel-go's: numbers compare across int, uint and double, a bool
equals only a bool, and comparing unlike kinds is "no such overload".
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator
from typing import Any

from cel_expr_python import cel

from berth.engine.dra.cel_library import CelFunctionError, overload

__all__ = ["LISTS_EXTENSION", "RANGE_SIZE_CHECK", "cel_equal"]

_INT64 = (-(2**63), 2**63 - 1)
_NO_SUCH_OVERLOAD = "no such overload"

_T = cel.Type
_LIST = _T.List(_T.DYN)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def cel_equal(left: Any, right: Any) -> bool:
    """CEL's equality on two values as the runtime hands them to Python."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if _is_number(left) and _is_number(right):
        return bool(left == right)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(cel_equal, left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(cel_equal(left[k], right[k]) for k in left)
    if type(left) is not type(right):
        return False
    return bool(left == right)


def _ordering_kind(value: Any) -> str:
    """Which values `value` can be ordered against (cel-go's Comparer), or "" if none."""
    if isinstance(value, bool):
        return "bool"
    if _is_number(value):
        return "number"
    for kind in (str, bytes, bytearray, datetime.timedelta, datetime.datetime):
        if isinstance(value, kind):
            return "bytes" if kind is bytearray else kind.__name__
    return ""


def _compare(left: Any, right: Any) -> int:
    kind = _ordering_kind(left)
    if not kind or kind != _ordering_kind(right):
        raise CelFunctionError(_NO_SUCH_OVERLOAD)
    return int(left > right) - int(left < right)


def _is_sorted(items: list[Any]) -> bool:
    for index in range(len(items)):
        if index and _compare(items[index - 1], items[index]) == 1:
            return False
        _compare(items[index], items[index])  # every element must be orderable
    return True


def _untyped_result(name: str, value: Any) -> Any:
    """`value` as a `dyn` result: cel-expr-python cannot hand back a duration or timestamp
    untyped, so that case is a clear error rather than the binding's."""
    if isinstance(value, datetime.timedelta | datetime.datetime):
        raise CelFunctionError(
            f"{name} of durations or timestamps is not provided by Berth's CEL environment"
        )
    return value


def _extreme(name: str, preferred: int) -> Callable[[list[Any]], Any]:
    def pick(items: list[Any]) -> Any:
        if not items:
            raise CelFunctionError(f"{name} called on empty list")
        result = items[0]
        _compare(result, result)
        for item in items[1:]:
            if _compare(result, item) == preferred:
                result = item
        return _untyped_result(name, result)

    return pick


def _sum(items: list[Any]) -> Any:
    if not items:
        return 0
    first = items[0]
    kind = "number" if _is_number(first) else _ordering_kind(first)
    if kind not in ("number", "timedelta"):
        raise CelFunctionError(_NO_SUCH_OVERLOAD)
    total = first
    for item in items[1:]:
        if type(item) is not type(first):
            raise CelFunctionError(_NO_SUCH_OVERLOAD)
        total = total + item
        if isinstance(total, int) and not _INT64[0] <= total <= _INT64[1]:
            raise CelFunctionError("integer overflow")
    return _untyped_result("sum", total)


def _positions(items: list[Any], *, backwards: bool) -> Iterator[int]:
    return reversed(range(len(items))) if backwards else iter(range(len(items)))


def _index_of(*, backwards: bool) -> Callable[[list[Any], Any], int]:
    def find(items: list[Any], value: Any) -> int:
        for index in _positions(items, backwards=backwards):
            if cel_equal(items[index], value):
                return index
        return -1

    return find


def _includes(target: Any, value: Any) -> bool:
    if isinstance(target, list):
        return any(cel_equal(item, value) for item in target)
    return cel_equal(target, value)


# cel-go's `lists.range` refuses a negative size and sizes past a million; cel-cpp's builds any
# list asked for (or fails inside C++). Berth routes the size through this check first.
RANGE_SIZE_CHECK = "berth.listsRangeSize"
_MAX_RANGE_SIZE = 1_000_000


def _range_size(size: int) -> int:
    if size < 0:
        raise CelFunctionError(f"lists.range: size must be non-negative, got {size}")
    if size > _MAX_RANGE_SIZE:
        raise CelFunctionError(
            f"lists.range: size {size} exceeds maximum allowed ({_MAX_RANGE_SIZE})"
        )
    return size


def _member(
    name: str, result: cel.Type, parameters: list[cel.Type], impl: Callable[..., Any]
) -> cel.FunctionDecl:
    return cel.FunctionDecl(
        name, [overload(f"{name}_overload", result, parameters, impl, member=True)]
    )


def _declarations() -> list[cel.FunctionDecl]:
    return [
        _member("isSorted", _T.BOOL, [_LIST], _is_sorted),
        _member("sum", _T.DYN, [_LIST], _sum),
        _member("min", _T.DYN, [_LIST], _extreme("min", 1)),
        _member("max", _T.DYN, [_LIST], _extreme("max", -1)),
        _member("indexOf", _T.INT, [_LIST, _T.DYN], _index_of(backwards=False)),
        _member("lastIndexOf", _T.INT, [_LIST, _T.DYN], _index_of(backwards=True)),
        _member("includes", _T.BOOL, [_T.DYN, _T.DYN], _includes),
        cel.FunctionDecl(
            RANGE_SIZE_CHECK,
            [overload("berth_lists_range_size", _T.INT, [_T.INT], _range_size, member=False)],
        ),
    ]


# An extension rather than plain functions: `indexOf` and `lastIndexOf` already have string
# overloads (strings extension), and only an extension may add overloads to them; and only in
# an extension does a `dyn` parameter match any value at run time.
LISTS_EXTENSION = cel.CelExtension("kubernetes.lists", _declarations())
