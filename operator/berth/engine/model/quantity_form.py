"""The form k8s.io/apimachinery gives a quantity text, which decides how it overflows int64.

kube-scheduler never sees what the user wrote: kube-apiserver parses the text
(`resource.ParseQuantity`), stores it re-printed in canonical form (`Quantity.String()`), and
kube-scheduler parses that again before it converts to int64 (`Value()`, `MilliValue()`). For
amounts that fit 64 bits all of this is exact. Beyond, the result depends on the form:

- *inline* (upstream's int64Amount): a mantissa of at most 18 digits and a power of ten. Scaling
  it past 2^63-1 gives 0, except by 10, 100, 1000, 10^6 or 10^9, which wrap around;
- *arbitrary precision* (upstream's inf.Dec): longer numbers, and binary suffixes too big for
  inline; rounded up to nano units; wraps modulo 2^64 when converted;
- *capped*: a binary-suffix amount above 2^63-1 saturates there when parsed (`memory: 8Ei`).

And the canonical text may itself change the form: "100000000000000000k" is re-printed "100E",
which reads as 0 where the original would wrap; a DecimalSI amount past 10^18 loses its
exponent ("1e22" written out in digits becomes "10"). `Quantity.effective()` follows that road.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction

from berth.engine.errors import FieldError
from berth.engine.model.parsing import brief

__all__ = ["BINARY_SUFFIXES", "INT64_MAX", "Form", "Quantity", "parse_text", "wrap_int64"]

INT64_MAX = 2**63 - 1
_NANO = -9  # the finest scale the API machinery keeps

BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12}
_DECIMAL_SUFFIXES |= {"P": 15, "E": 18}
_SUFFIX_OF_POWER = {power: suffix for suffix, power in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIX_OF_STEP = {power // 10: suffix for suffix, power in BINARY_SUFFIXES.items()}
# Upstream's scanner: sign, digits, an optional fraction, then a suffix or an exponent.
_TEXT = re.compile(
    r"(?P<number>(?P<sign>[+-]?)0*(?P<num>[0-9]*)(?:\.(?P<denom>[0-9]*))?)"
    r"(?P<suffix>[eEinumkKMGTP]*[+-]?[0-9]*)"
)
# Scale factors that upstream multiplies in one wrapping step (others loop and give 0).
_WRAPPING_SCALES = frozenset((1, 2, 3, 6, 9))


class Form(Enum):
    DECIMAL_SI = "DecimalSI"
    DECIMAL_EXPONENT = "DecimalExponent"
    BINARY_SI = "BinarySI"


def wrap_int64(value: int) -> int:
    """`value` as Go's int64 arithmetic leaves it: modulo 2^64, two's complement."""
    value &= 2**64 - 1
    return value - 2**64 if value > INT64_MAX else value


def _wrap32(value: int) -> int:
    value &= 2**32 - 1
    return value - 2**32 if value >= 2**31 else value


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def _ceil_scaled(mantissa: int, power10: int) -> int:
    """ceil(mantissa * 10**power10) for a non-negative mantissa, without huge powers."""
    if power10 >= 0:
        scaled: int = mantissa * 10**power10
        return scaled
    if -power10 > len(str(mantissa)):
        return 1 if mantissa else 0
    return _ceil_div(mantissa, 10**-power10)


@dataclass(frozen=True, slots=True)
class Quantity:
    """One parsed, non-negative quantity in the form kube-apiserver keeps it in.

    The amount is `mantissa * 10**power10 * 2**power2`; `inline`, `capped` or neither say
    which upstream representation holds it, `keeps_text` whether upstream re-prints the text
    as it was written.
    """

    mantissa: int
    power10: int
    form: Form
    power2: int = 0
    inline: bool = False
    capped: bool = False
    keeps_text: bool = False

    def scaled(self, scale: int) -> int:
        """Upstream's `ScaledValue(scale)`: ceil(q / 10**scale) as an int64."""
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
        return wrap_int64(_ceil_scaled(self.mantissa, power10))

    def _inline_scaled(self, scale: int) -> int:
        if self.power10 < scale:
            return _ceil_scaled(self.mantissa, self.power10 - scale)
        shift = self.power10 - scale
        product = self.mantissa * 10**shift if shift <= 19 else INT64_MAX + 1
        if product <= INT64_MAX:
            return product
        if shift in _WRAPPING_SCALES:
            return wrap_int64(product)
        return 0  # upstream multiplies by 10 step by step and gives up with 0

    def _normalized(self) -> tuple[int, int]:
        """(m, e) with the stored amount = m * 10**e and m free of trailing zeros."""
        if self.inline:
            mantissa, power10 = self.mantissa, self.power10
        elif self.capped:
            mantissa, power10 = INT64_MAX, 0
        elif self.power2:
            amount = Fraction(self.mantissa * 2**self.power2) * Fraction(10) ** self.power10
            mantissa, power10 = _ceil_div(amount.numerator * 10**9, amount.denominator), _NANO
        elif self.power10 >= _NANO:
            mantissa, power10 = self.mantissa, self.power10
        else:  # rounded up to nano units when parsed
            mantissa, power10 = _ceil_scaled(self.mantissa, self.power10 - _NANO), _NANO
        digits = str(mantissa)
        stripped = digits.rstrip("0")
        return int(stripped), power10 + len(digits) - len(stripped)

    def exact(self) -> Fraction:
        """The amount as an exact number (nano-rounded as upstream keeps it), for exact comparisons."""
        if self.mantissa == 0:
            return Fraction(0)
        mantissa, power10 = self._normalized()
        return Fraction(mantissa) * Fraction(10) ** power10

    def canonical_text(self) -> str:
        """Upstream's `Quantity.String()` of this quantity."""
        if self.mantissa == 0:
            return "0"
        mantissa, power10 = self._normalized()
        form = self.form
        if form is Form.BINARY_SI and (power10 < 0 or mantissa * 10**power10 < 1024):
            form = Form.DECIMAL_SI  # small or fractional binary amounts print in decimal
        if form is Form.BINARY_SI:
            amount, steps = mantissa * 10**power10, 0
            while amount % 1024 == 0:
                amount, steps = amount // 1024, steps + 1
            return f"{amount}{_BINARY_SUFFIX_OF_STEP.get(steps, '')}"
        remainder = power10 % 3 if power10 >= 0 else -(-power10 % 3)  # Go's truncated %
        if remainder in (1, -2):
            mantissa, power10 = mantissa * 10, power10 - 1
        elif remainder in (2, -1):
            mantissa, power10 = mantissa * 100, power10 - 2
        if form is Form.DECIMAL_EXPONENT:
            return f"{mantissa}e{power10}" if power10 else str(mantissa)
        # Upstream has no DecimalSI suffix past E and then prints none at all.
        return f"{mantissa}{_SUFFIX_OF_POWER.get(power10, '')}"

    def effective(self) -> Quantity:
        """The quantity kube-scheduler reads: this one re-printed by kube-apiserver, parsed again."""
        return self if self.keeps_text else parse_text(self.canonical_text())


def parse_text(text: str) -> Quantity:
    """Upstream's `ParseQuantity`, refusing negative amounts; raises `FieldError`."""
    match = _TEXT.fullmatch(text)
    if not text or match is None:
        raise FieldError("", f"invalid quantity {brief(text)}")
    num = match["num"] or "0"
    denom = match["denom"] or ""
    suffix = match["suffix"]
    if match["sign"] == "-" and (num + denom).strip("0"):
        raise FieldError("", f"quantity {brief(text)} must not be negative")
    # Only upstream's arbitrary-precision path insists on a digit ("Ki" is 0, "Ei" an error).
    no_digits = FieldError("", f"invalid quantity {brief(text)}: no digits")
    written = any(character.isdigit() for character in match["number"])
    if suffix in BINARY_SUFFIXES:
        quantity = _parse_binary(num, denom, BINARY_SUFFIXES[suffix])
        if not (quantity.inline or written):
            raise no_digits
        return quantity
    form = Form.DECIMAL_SI
    if suffix in _DECIMAL_SUFFIXES:
        exponent = _DECIMAL_SUFFIXES[suffix]
    elif len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[+-]?[0-9]+", suffix[1:]):
        parsed = int(suffix[1:])
        if not -(2**63) <= parsed <= INT64_MAX:
            raise FieldError("", f"invalid quantity {brief(text)}: exponent out of range")
        exponent, form = _wrap32(parsed), Form.DECIMAL_EXPONENT  # parsed in 64 bits, kept in 32
    else:
        raise FieldError("", f"invalid quantity {brief(text)}: unknown suffix {brief(suffix)}")
    mantissa = int(num + denom)
    scale = _wrap32(exponent - len(denom))
    if 18 - len(num) - len(denom) >= 0 and scale >= _NANO:
        shifted = num + denom
        keeps = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
        return Quantity(mantissa, scale, form, inline=True, keeps_text=keeps or mantissa == 0)
    if not written:
        raise no_digits
    # The arbitrary-precision path: upstream's int32 scale arithmetic wraps here too.
    return Quantity(mantissa, -_wrap32(len(denom) + _wrap32(-exponent)), form)


def _parse_binary(num: str, denom: str, power2: int) -> Quantity:
    mantissa = int(num + denom)
    # Upstream keeps a whole binary amount inline while its digits surely fit 64 bits.
    if not denom and 15 - len(num) - power2 * 3 // 10 - 1 >= 0:
        keeps = int(num) & 7 != 0
        return Quantity(mantissa * 2**power2, 0, Form.BINARY_SI, inline=True, keeps_text=keeps)
    exact = Fraction(mantissa * 2**power2, 10 ** len(denom))
    # Rounded up to nano units, then saturated: a binary amount never exceeds int64.
    if _ceil_div(exact.numerator * 10**9, exact.denominator) > INT64_MAX * 10**9:
        return Quantity(INT64_MAX, 0, Form.BINARY_SI, capped=True)
    return Quantity(mantissa, -len(denom), Form.BINARY_SI, power2=power2)
