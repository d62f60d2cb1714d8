"""Kubernetes resource quantities ("500m", "1Gi", "1e3", "0.5"), read the way kube-scheduler reads them.

The engine keeps every resource as an integer in its canonical unit: CPU in millicores
(`Quantity.MilliValue()` upstream) and everything else in base units (`Value()`). Both round
*up*, so a request of 0.5 bytes needs a whole byte and 0.1m CPU a whole millicore.

Amounts beyond 64 bits are accepted by kube-apiserver and do not crash kube-scheduler: it
saturates (`memory: 8Ei` is 2^63-1 bytes), reads 0 (`cpu: 1e30` is 0 millicores, so such a
pod fits anywhere) or wraps, depending on how the text was written and re-printed. Berth
reproduces each case (see `quantity_form`) so that it places such pods and nodes the same way.
"""

from __future__ import annotations

import functools
from decimal import Decimal

from berth.engine.errors import FieldError
from berth.engine.model.parsing import brief
from berth.engine.model.quantity_form import BINARY_SUFFIXES, Quantity, parse_text, wrap_int64

__all__ = [
    "MAX_QUANTITY_LENGTH",
    "Quantity",
    "format_amount",
    "parse_quantity",
    "to_milli",
    "to_units",
    "wrap_int64",
]

# Longer texts are refused: no real amount needs them, and they would cost big-number maths.
MAX_QUANTITY_LENGTH = 256


def _float_text(value: float) -> str:
    """A float as kubectl's JSON writes it (Go's encoding/json), which decides its inline form.

    Fixed notation from 1e-6 up to 1e21, exponent notation outside; shortest digits either way.
    """
    text = repr(value)
    if "e" in text and 1e-6 <= abs(value) < 1e21:
        text = format(Decimal(text), "f")
    if "." in text and "e" not in text:
        text = text.rstrip("0").rstrip(".")
    return text


def parse_quantity(value: object) -> Quantity:
    """Parse a quantity in any of the forms the API server accepts, refusing negative ones.

    Integers and floats (as YAML produces for ``cpu: 2``) are read from their decimal text,
    as kubectl sends them. Raises `FieldError` with an empty field path; callers add where
    it was found.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise FieldError("", f"invalid quantity {brief(value)}: expected a string or number")
    if isinstance(value, str):
        text = value.strip()
    elif isinstance(value, int):
        if value.bit_length() > 4 * MAX_QUANTITY_LENGTH:
            raise FieldError("", "invalid quantity: too many digits")
        text = str(value)
    else:
        text = _float_text(value)
    if len(text) > MAX_QUANTITY_LENGTH:
        raise FieldError(
            "", f"invalid quantity {brief(text)}: longer than {MAX_QUANTITY_LENGTH} characters"
        )
    return _effective(text)


# Every pod of a Deployment repeats the same few texts ("100m", "500Mi"), and every watch
# event of a pod parses them again: a small memo of the (immutable) results saves most of
# a pod's parse. Errors are raised each time, never remembered.
@functools.lru_cache(maxsize=4096)
def _effective(text: str) -> Quantity:
    return parse_text(text).effective()


def to_milli(value: object) -> int:
    """The quantity in thousandths, rounded up (how CPU is counted): upstream's MilliValue()."""
    return parse_quantity(value).scaled(-3)


def to_units(value: object) -> int:
    """The quantity in whole units, rounded up (bytes, counts): upstream's Value()."""
    return parse_quantity(value).scaled(0)


_BINARY_BY_SIZE = sorted(
    ((2**power, suffix) for suffix, power in BINARY_SUFFIXES.items()), reverse=True
)


def format_amount(resource: str, amount: int) -> str:
    """A canonical amount back in Kubernetes notation: "1500m"/"2" for CPU, "1Gi" or bytes otherwise."""
    if resource == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    for factor, suffix in _BINARY_BY_SIZE:
        if amount and amount % factor == 0:
            return f"{amount // factor}{suffix}"
    return str(amount)
