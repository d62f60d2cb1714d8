"""Kubernetes resource quantities ("500m", "1Gi", "1e3", "0.5") as exact fractions.

The engine keeps every resource as an integer in its canonical unit: CPU in
millicores and everything else in base units. Like the API machinery, conversion
rounds *up* (a request of 0.5 bytes needs a whole byte, 0.1m CPU a whole millicore).
"""

from __future__ import annotations

import re
from fractions import Fraction

from berth.engine.errors import FieldError

_BINARY_SUFFIXES = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
_DECIMAL_SUFFIXES = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(
    r"^(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<exponent>[eE][+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?))$"
)


def parse_quantity(value: object) -> Fraction:
    """Parse a quantity in any of the forms the API server accepts.

    Integers and floats (as YAML produces for ``cpu: 2``) are accepted too. Raises
    `FieldError` with an empty field path; callers add where it was found.
    """
    if isinstance(value, bool):
        raise FieldError("", f"invalid quantity {value!r}: expected a string or number")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        text = repr(value)
    elif isinstance(value, str):
        text = value.strip()
    else:
        raise FieldError("", f"invalid quantity {value!r}: expected a string or number")
    match = _QUANTITY.match(text)
    if match is None:
        raise FieldError("", f"invalid quantity {text!r}")
    number = Fraction(match["number"])
    if match["sign"] == "-":
        number = -number
    exponent = match["exponent"]
    if exponent is not None:
        power = int(exponent[1:])
        if abs(power) > 30:
            raise FieldError("", f"invalid quantity {text!r}: exponent out of range")
        return number * Fraction(10) ** power
    suffix = match["suffix"] or ""
    if suffix in _BINARY_SUFFIXES:
        return number * _BINARY_SUFFIXES[suffix]
    return number * _DECIMAL_SUFFIXES[suffix]


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


def to_milli(value: object) -> int:
    """The quantity in thousandths, rounded up (how CPU is counted)."""
    return _ceil(parse_quantity(value) * 1000)


def to_units(value: object) -> int:
    """The quantity in whole units, rounded up (bytes, counts)."""
    return _ceil(parse_quantity(value))


_BINARY_BY_SIZE = sorted(
    ((factor, suffix) for suffix, factor in _BINARY_SUFFIXES.items()), reverse=True
)


def format_amount(resource: str, amount: int) -> str:
    """A canonical amount back in Kubernetes notation: "1500m"/"2" for CPU, "1Gi" or bytes otherwise."""
    if resource == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    for factor, suffix in _BINARY_BY_SIZE:
        if amount and amount % factor == 0:
            return f"{amount // factor}{suffix}"
    return str(amount)
