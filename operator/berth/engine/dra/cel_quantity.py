"""Quantity arithmetic for CEL's `quantity()` library, on exact amounts.

A DRA selector compares capacities with `device.capacity[...].memory.compareTo(quantity("40Gi"))`
and may add, subtract or convert them. Unlike pod requests, these amounts may be negative
(`quantity("-1")`) and are compared exactly, never rounded to units, so they are kept here as
exact fractions. Parse errors carry k8s.io/apimachinery's wording: kube-scheduler reports them
verbatim as the CEL runtime error.
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction

from berth.engine.errors import FieldError
from berth.engine.model.quantity import Quantity
from berth.engine.model.quantity_form import INT64_MAX, parse_text

__all__ = ["QuantityError", "amount_of", "as_int64", "parse_amount"]

_FORMAT = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_FORMAT_WRONG = f"quantities must match the regular expression '{_FORMAT}'"
_SUFFIX_WRONG = "unable to parse quantity's suffix"
_NUMERIC_WRONG = "unable to parse numeric part of quantity"
_INT64_MIN = -(2**63)


class QuantityError(ValueError):
    """`quantity()` was given a text that is no quantity; the message is apimachinery's."""


@functools.lru_cache(maxsize=4096)
def amount_of(value: int | Quantity) -> Fraction:
    """The exact amount of a device capacity (a whole number of units, or a parsed quantity)."""
    if isinstance(value, int):
        return Fraction(value)
    if value.capped:
        return Fraction(INT64_MAX)
    return Fraction(value.mantissa * 2**value.power2) * Fraction(10) ** value.power10


def parse_amount(text: str) -> Fraction:
    """The exact amount of a quantity text, which may be negative; raises `QuantityError`."""
    if not re.fullmatch(_FORMAT, text):
        raise QuantityError(_FORMAT_WRONG)
    negative = text.startswith("-")
    try:
        parsed = parse_text(text.lstrip("+-"))
    except FieldError as error:
        raise QuantityError(_SUFFIX_WRONG if "suffix" in str(error) else _NUMERIC_WRONG) from error
    amount = amount_of(parsed)
    return -amount if negative else amount


def as_int64(amount: Fraction) -> int | None:
    """The amount as a 64-bit integer, or None when it is fractional or does not fit."""
    if amount.denominator != 1 or not _INT64_MIN <= amount.numerator <= INT64_MAX:
        return None
    return amount.numerator
