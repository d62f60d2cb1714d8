"""Kubernetes resource quantities ("500m", "1Gi", "1e3", "0.5"), read the way kube-scheduler reads them.

The engine keeps every resource as an integer in its canonical unit: CPU in millicores
(`Quantity.MilliValue()` upstream) and everything else in base units (`Value()`). Both round
*up*, so a request of 0.5 bytes needs a whole byte and 0.1m CPU a whole millicore.

Amounts beyond 64 bits are where care is needed, because kube-apiserver accepts them and
kube-scheduler does not crash on them: it counts them in int64 with the API machinery's own
overflow rules, which depend on how the quantity was written:

- a binary suffix (Ki...Ei) saturates at 2^63-1 when parsed: a node's `memory: 8Ei` has
  2^63-1 bytes (and, read in millis, wraps to -1000);
- a short decimal ("1e30", "10E") is kept as a 64-bit mantissa and a power of ten; scaling it
  past 2^63-1 reads as 0 (a pod asking `cpu: 1e30` requests 0 millicores), except for the
  scale factors 10, 100, 1000, 10^6 and 10^9, which wrap around;
- a long decimal (more than 18 digits) is an arbitrary-precision number that wraps modulo 2^64.

`Quantity` records which of those forms a text takes, and converts exactly as upstream does,
so that Berth places such pods and nodes the way kube-scheduler does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from berth.engine.errors import FieldError
from berth.engine.model.parsing import brief

__all__ = [
    "MAX_QUANTITY_LENGTH",
    "Quantity",
    "format_amount",
    "parse_quantity",
    "to_milli",
    "to_units",
    "wrap_int64",
]

INT64_MAX = 2**63 - 1
_NANO = -9  # the finest scale the API machinery keeps
# Longer texts are refused: no real amount needs them, and they would cost big-number maths.
MAX_QUANTITY_LENGTH = 256

_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIXES = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
# Upstream's scanner: sign, digits, an optional fraction, then a suffix or an exponent.
_QUANTITY = re.compile(
    r"(?P<number>(?P<sign>[+-]?)0*(?P<num>[0-9]*)(?:\.(?P<denom>[0-9]*))?)"
    r"(?P<suffix>[eEinumkKMGTP]*[+-]?[0-9]*)"
)
# Scale factors for which upstream multiplies with a wrapping int64 product (others loop and give 0).
_WRAPPING_SCALES = frozenset((1, 2, 3, 6, 9))


def wrap_int64(value: int) -> int:
    """`value` as Go's int64 arithmetic leaves it: modulo 2^64, two's complement."""
    value &= 2**64 - 1
    return value - 2**64 if value > INT64_MAX else value


def _wrap32(value: int) -> int:
    value &= 2**32 - 1
    return value - 2**32 if value >= 2**31 else value


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


@dataclass(frozen=True, slots=True)
class Quantity:
    """One parsed quantity, non-negative, in the form kube-apiserver keeps it in.

    Inline (upstream's int64Amount): the value is `mantissa * 10**power10`, mantissa < 2^63.
    Otherwise (upstream's inf.Dec): `mantissa * 10**power10 * 2**power2`, unbounded, or
    `capped` at 2^63-1 for a binary suffix.
    """

    mantissa: int
    power10: int
    power2: int = 0
    inline: bool = False
    capped: bool = False

    def scaled(self, scale: int) -> int:
        """Upstream's `ScaledValue(scale)`: ceil(q / 10**scale) as kube-scheduler's int64 sees it."""
        if self.mantissa == 0:
            return 0
        if self.inline:
            return self._inline_scaled(scale)
        if self.capped:
            # Saturated at 2^63-1 units; scaling up multiplies that in int64.
            return wrap_int64(INT64_MAX * 10**-scale) if scale < 0 else INT64_MAX
        power10 = self.power10 - scale
        if self.power2:
            # Only binary suffixes get here; their powers are small, so exact maths is cheap.
            exact = Fraction(self.mantissa * 2**self.power2) * Fraction(10) ** power10
            return wrap_int64(_ceil_div(exact.numerator, exact.denominator))
        if power10 >= 0:
            return wrap_int64(self.mantissa * pow(10, power10, 2**64))
        if -power10 > len(str(self.mantissa)):
            return 1  # a positive amount below one unit rounds up to one
        return wrap_int64(_ceil_div(self.mantissa, 10**-power10))

    def _inline_scaled(self, scale: int) -> int:
        if self.power10 < scale:
            shift = scale - self.power10
            if shift > len(str(self.mantissa)):
                return 1
            return _ceil_div(self.mantissa, 10**shift)
        shift = self.power10 - scale
        product = self.mantissa * 10**shift if shift <= 19 else INT64_MAX + 1
        if product <= INT64_MAX:
            return product
        if shift in _WRAPPING_SCALES:
            return wrap_int64(product)
        return 0  # upstream multiplies by 10 step by step and gives up with 0


def _parse_text(text: str) -> Quantity:
    match = _QUANTITY.fullmatch(text)
    if not text or match is None:
        raise FieldError("", f"invalid quantity {brief(text)}")
    num = match["num"] or "0"
    denom = match["denom"] or ""
    suffix = match["suffix"]
    if match["sign"] == "-" and (num + denom).strip("0"):
        raise FieldError("", f"quantity {brief(text)} must not be negative")
    if suffix in _BINARY_SUFFIXES:
        return _parse_binary(num, denom, _BINARY_SUFFIXES[suffix])
    if suffix in _DECIMAL_SUFFIXES:
        exponent = _DECIMAL_SUFFIXES[suffix]
    elif len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[+-]?[0-9]+", suffix[1:]):
        parsed = int(suffix[1:])
        if not -(2**63) <= parsed <= INT64_MAX:
            raise FieldError("", f"invalid quantity {brief(text)}: exponent out of range")
        exponent = _wrap32(parsed)  # upstream parses 64 bits and keeps 32
    else:
        raise FieldError("", f"invalid quantity {brief(text)}: unknown suffix {brief(suffix)}")
    mantissa = int(num + denom)
    precision = 18 - len(num) - len(denom)
    scale = _wrap32(exponent - len(denom))
    if precision >= 0 and scale >= _NANO:
        return Quantity(mantissa=mantissa, power10=scale, inline=True)
    if not any(character.isdigit() for character in match["number"]):
        raise FieldError("", f"invalid quantity {brief(text)}: no digits")
    # The arbitrary-precision path: upstream's int32 scale arithmetic wraps here too.
    return Quantity(mantissa=mantissa, power10=-_wrap32(len(denom) + _wrap32(-exponent)))


def _parse_binary(num: str, denom: str, power2: int) -> Quantity:
    mantissa = int(num + denom)
    # Upstream keeps a whole binary amount inline while its digits surely fit 64 bits.
    if not denom and 15 - len(num) - power2 * 3 // 10 - 1 >= 0:
        return Quantity(mantissa=mantissa * 2**power2, power10=0, inline=True)
    exact = Fraction(mantissa * 2**power2, 10 ** len(denom))
    # Rounded up to nano units, then saturated: a binary amount never exceeds int64.
    nanos = _ceil_div(exact.numerator * 10**9, exact.denominator)
    if nanos > INT64_MAX * 10**9:
        return Quantity(mantissa=INT64_MAX, power10=0, capped=True)
    return Quantity(mantissa=mantissa, power10=-len(denom), power2=power2)


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
    return _parse_text(text)


def to_milli(value: object) -> int:
    """The quantity in thousandths, rounded up (how CPU is counted): upstream's MilliValue()."""
    return parse_quantity(value).scaled(-3)


def to_units(value: object) -> int:
    """The quantity in whole units, rounded up (bytes, counts): upstream's Value()."""
    return parse_quantity(value).scaled(0)


_BINARY_BY_SIZE = sorted(
    ((2**power, suffix) for suffix, power in _BINARY_SUFFIXES.items()), reverse=True
)


def format_amount(resource: str, amount: int) -> str:
    """A canonical amount back in Kubernetes notation: "1500m"/"2" for CPU, "1Gi" or bytes otherwise."""
    if resource == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    for factor, suffix in _BINARY_BY_SIZE:
        if amount and amount % factor == 0:
            return f"{amount // factor}{suffix}"
    return str(amount)
