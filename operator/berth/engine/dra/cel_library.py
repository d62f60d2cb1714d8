"""Kubernetes' CEL function libraries for DRA selectors (quantity and semver), for cel-expr-python.

cel-expr-python (Google's CEL C++ runtime) passes only CEL values and protobuf messages between
Python and CEL, so a quantity and a semantic version travel as two small messages,
`kubernetes.Quantity` and `kubernetes.Semver`, declared here at import time. Each message holds
one normalised value, so CEL's `==` on two of them is value equality, as upstream's `Equal` is
(`quantity("1") == quantity("1000m")`, `semver("1.0.0+a") == semver("1.0.0")`).

The functions mirror k8s.io/apiserver's `library.Quantity` and `library.SemverLib` (version 1),
with their member/global forms and overload names.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from cel_expr_python import cel
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from berth.engine.dra.cel_quantity import as_int64, parse_amount
from berth.engine.dra.cel_semver import Semver, SemverError, parse_semver

__all__ = [
    "DESCRIPTOR_POOL",
    "FUNCTIONS",
    "CelFunctionError",
    "overload",
    "quantity_message",
    "semver_message",
]

_FIELD = descriptor_pb2.FieldDescriptorProto


def _declare_messages() -> descriptor_pool.DescriptorPool:
    file = descriptor_pb2.FileDescriptorProto(
        name="berth/dra_cel.proto", package="kubernetes", syntax="proto3"
    )
    quantity = file.message_type.add(name="Quantity")
    # amount = digits * 10**exponent, digits without trailing zeros: one spelling per amount.
    quantity.field.add(
        name="digits", number=1, type=_FIELD.TYPE_STRING, label=_FIELD.LABEL_OPTIONAL
    )
    quantity.field.add(
        name="exponent", number=2, type=_FIELD.TYPE_INT64, label=_FIELD.LABEL_OPTIONAL
    )
    semver = file.message_type.add(name="Semver")
    for number, name in enumerate(("major", "minor", "patch"), start=1):
        semver.field.add(
            name=name, number=number, type=_FIELD.TYPE_UINT64, label=_FIELD.LABEL_OPTIONAL
        )
    semver.field.add(
        name="prerelease", number=4, type=_FIELD.TYPE_STRING, label=_FIELD.LABEL_REPEATED
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return pool


DESCRIPTOR_POOL = _declare_messages()
_QuantityMessage: Any = message_factory.GetMessageClass(
    DESCRIPTOR_POOL.FindMessageTypeByName("kubernetes.Quantity")
)
_SemverMessage: Any = message_factory.GetMessageClass(
    DESCRIPTOR_POOL.FindMessageTypeByName("kubernetes.Semver")
)
QUANTITY = cel.Type("kubernetes.Quantity")
SEMVER = cel.Type("kubernetes.Semver")


# Selectors evaluate per device, so the same few amounts and texts recur: convert each once.
@functools.lru_cache(maxsize=4096)
def quantity_message(amount: Fraction) -> Any:
    """The CEL value of an exact amount, spelled as digits * 10**exponent."""
    # Amounts come from decimal or binary texts, so some power of ten clears the denominator.
    places = 0
    while 10**places % amount.denominator:
        places += 1
    digits, exponent = amount.numerator * 10**places // amount.denominator, -places
    while digits and digits % 10 == 0:
        digits, exponent = digits // 10, exponent + 1
    return _QuantityMessage(digits=str(digits), exponent=exponent)


def _amount(message: Any) -> Fraction:
    return _amount_of_spelling(message.digits, message.exponent)


@functools.lru_cache(maxsize=4096)
def _amount_of_spelling(digits: str, exponent: int) -> Fraction:
    return Fraction(int(digits)) * Fraction(10) ** exponent


@functools.lru_cache(maxsize=1024)
def semver_message(version: Semver) -> Any:
    """The CEL value of a semantic version."""
    return _SemverMessage(
        major=version.major,
        minor=version.minor,
        patch=version.patch,
        prerelease=[str(part) for part in version.prerelease],
    )


def _version(message: Any) -> Semver:
    parts = tuple(int(part) if part.isdigit() else part for part in message.prerelease)
    return Semver(int(message.major), int(message.minor), int(message.patch), parts)


class CelFunctionError(ValueError):
    """A library function failed; CEL reports the message as the evaluation's error."""


@functools.lru_cache(maxsize=1024)
def _quantity(text: str) -> Any:
    try:
        return quantity_message(parse_amount(text))
    except ValueError as error:
        raise CelFunctionError(str(error)) from error


def _is_quantity(text: str) -> bool:
    try:
        parse_amount(text)
    except ValueError:
        return False
    return True


def _sign(message: Any) -> int:
    amount = _amount(message)
    return (amount > 0) - (amount < 0)


def _compare_amounts(left: Any, right: Any) -> int:
    """Order two quantity messages in integers: a selector compares on every device."""
    left_digits, right_digits = int(left.digits), int(right.digits)
    shift = left.exponent - right.exponent
    if shift > 0:
        left_digits *= 10**shift
    elif shift < 0:
        right_digits *= 10**-shift
    return (left_digits > right_digits) - (left_digits < right_digits)


def _as_integer(message: Any) -> int:
    value = as_int64(_amount(message))
    if value is None:
        raise CelFunctionError("cannot convert value to integer")
    return value


@functools.lru_cache(maxsize=1024)
def _semver(text: str, normalize: bool = False) -> Any:
    try:
        return semver_message(parse_semver(text, normalize=normalize))
    except SemverError as error:
        raise CelFunctionError(str(error)) from error


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize=normalize)
    except SemverError:
        return False
    return True


def _compare(left: Any, right: Any) -> int:
    if left.DESCRIPTOR.full_name == "kubernetes.Semver":
        return _version(left).compare(_version(right))
    return _compare_amounts(left, right)


def _order(result: Callable[[int], Any]) -> Any:
    """A comparison of two quantities or two versions, its order (-1, 0, 1) mapped by `result`."""
    return lambda left, right: result(_compare(left, right))


def _arithmetic(sign: int, *, with_int: bool) -> Any:
    def apply(left: Any, right: Any) -> Any:
        other = Fraction(right) if with_int else _amount(right)
        return quantity_message(_amount(left) + sign * other)

    return apply


def overload(
    overload_id: str, result: cel.Type, parameters: list[cel.Type], impl: Any, *, member: bool
) -> cel.Overload:
    """One overload; without `impl` a declaration only (its run-time kinds share another's)."""
    if impl is None:
        return cel.Overload(
            overload_id, return_type=result, parameters=parameters, is_member=member
        )
    return cel.Overload(
        overload_id, return_type=result, parameters=parameters, is_member=member, impl=impl
    )


_B, _I, _S, _D = cel.Type.BOOL, cel.Type.INT, cel.Type.STRING, cel.Type.DOUBLE
_Q, _V = QUANTITY, SEMVER


def _declarations() -> list[cel.FunctionDecl]:
    overloads: dict[str, list[cel.Overload]] = {
        "quantity": [overload("string_to_quantity", _Q, [_S], _quantity, member=False)],
        "isQuantity": [overload("is_quantity_string", _B, [_S], _is_quantity, member=False)],
        "sign": [overload("quantity_sign", _I, [_Q], _sign, member=False)],
        "asApproximateFloat": [
            overload("quantity_get_float", _D, [_Q], lambda q: float(_amount(q)), member=True)
        ],
        "asInteger": [overload("quantity_get_int", _I, [_Q], _as_integer, member=True)],
        "isInteger": [
            overload(
                "quantity_is_integer",
                _B,
                [_Q],
                lambda q: as_int64(_amount(q)) is not None,
                member=True,
            )
        ],
        "add": [
            overload("quantity_add", _Q, [_Q, _Q], _arithmetic(1, with_int=False), member=True),
            overload("quantity_add_int", _Q, [_Q, _I], _arithmetic(1, with_int=True), member=True),
        ],
        "sub": [
            overload("quantity_sub", _Q, [_Q, _Q], _arithmetic(-1, with_int=False), member=True),
            overload("quantity_sub_int", _Q, [_Q, _I], _arithmetic(-1, with_int=True), member=True),
        ],
        "semver": [
            overload("string_to_semver", _V, [_S], _semver, member=False),
            overload("string_bool_to_semver", _V, [_S, _B], _semver, member=False),
        ],
        "isSemver": [
            overload("is_semver_string", _B, [_S], _is_semver, member=False),
            overload("is_semver_string_bool", _B, [_S, _B], _is_semver, member=False),
        ],
        "major": [overload("semver_major", _I, [_V], lambda v: int(v.major), member=True)],
        "minor": [overload("semver_minor", _I, [_V], lambda v: int(v.minor), member=True)],
        "patch": [overload("semver_patch", _I, [_V], lambda v: int(v.patch), member=True)],
        # The runtime tells message types apart only by their values, so each comparison has
        # one implementation for both its overloads (on the first), which reads either kind.
        "compareTo": [
            overload("quantity_compare_to", _I, [_Q, _Q], _order(int), member=True),
            overload("semver_compare_to", _I, [_V, _V], None, member=True),
        ],
        "isGreaterThan": [
            overload(
                "quantity_is_greater_than", _B, [_Q, _Q], _order(lambda o: o == 1), member=True
            ),
            overload("semver_is_greater_than", _B, [_V, _V], None, member=True),
        ],
        "isLessThan": [
            overload("quantity_is_less_than", _B, [_Q, _Q], _order(lambda o: o == -1), member=True),
            overload("semver_is_less_than", _B, [_V, _V], None, member=True),
        ],
    }
    return [cel.FunctionDecl(name, list(group)) for name, group in overloads.items()]


FUNCTIONS = _declarations()
