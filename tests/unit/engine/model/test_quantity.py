"""Quantities: every spelling the API accepts, compared by equalities between equivalent forms, and
the 64-bit edge where kube-scheduler saturates, reads 0 or wraps (the values below are what
k8s.io/apimachinery's Value()/MilliValue() return for the same text)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.engine.errors import FieldError
from berth.engine.model.quantity import (
    MAX_QUANTITY_LENGTH,
    format_amount,
    parse_quantity,
    to_milli,
    to_units,
)

INT64_MAX = 2**63 - 1


def _both(value: object) -> tuple[int, int]:
    return to_units(value), to_milli(value)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("1Gi", "1073741824"),
        ("0.5", "500m"),
        ("1e3", "1k"),
        ("1E3", "1000"),
        ("1.5Gi", "1536Mi"),
        ("100M", "1e8"),
        ("1Ki", 1024),
        ("2", 2),
        ("0.1", 0.1),
        ("1000000n", "1m"),
        ("1000u", "1m"),
        (".5", "0.5"),
        ("+1", "1"),
        ("1Ei", 2**60),
        ("1E", "1000P"),
        (" 2 ", "2"),
        ("1.", "1"),
        (2.0, "2"),
        ("-0", "0"),
    ],
    ids=repr,
)
def test_equivalent_spellings_are_equal(left: object, right: object) -> None:
    assert _both(left) == _both(right)


@pytest.mark.parametrize(
    ("quantity", "millis", "units"),
    [
        ("100m", 100, 1),
        ("0.1m", 1, 1),
        ("1.5", 1500, 2),
        ("2", 2000, 2),
        ("1Mi", 1048576000, 1048576),
        ("1e-12", 1, 1),
    ],
    ids=["100m", "sub-milli-rounds-up", "fraction-rounds-up", "whole", "binary", "tiny"],
)
def test_conversion_rounds_up(quantity: str, millis: int, units: int) -> None:
    assert to_milli(quantity) == millis
    assert to_units(quantity) == units


# (text, Value(), MilliValue()) of the text parsed by k8s.io/apimachinery v0.37.2, re-printed
# with Quantity.String() (as kube-apiserver stores it) and parsed again (as kube-scheduler reads it).
ORACLE = [
    # Binary suffixes saturate at 2^63-1 when parsed; read in millis that wraps.
    ("8Ei", INT64_MAX, -1000),
    ("9Ei", INT64_MAX, -1000),
    ("1Ei", 2**60, -(2**63)),
    ("7.99999999999Ei", 9223372036843246593, -11529215046),
    # A short decimal is a 64-bit mantissa and a power of ten: past int64 it reads 0...
    ("1e30", 0, 0),
    ("10E", 0, 0),
    ("9E", 9 * 10**18, 0),
    ("1e18", 10**18, 0),
    ("1e19", 0, 0),
    # ...except for scale factors upstream multiplies in one wrapping step.
    ("92233720368547758k", -80, -80000),
    # Re-printed "100E": the wrap of the written form becomes a 0.
    ("100000000000000000k", 0, 0),
    # A long decimal is arbitrary-precision and wraps modulo 2^64...
    ("9223372036854775808", -(2**63), 0),
    ("12345678901234567890123", 4807115922877859019, -7484280360333952776),
    ("1000000000000000000", 10**18, 0),
    # ...and past 10^18 its DecimalSI re-print loses the exponent.
    ("10000000000000000000000", 10, 10000),
    ("1e22", 0, 0),
    # The exponent is parsed in 64 bits and kept in 32.
    ("1e4294967296", 1, 1000),
    ("1e-30", 1, 1),
    ("123456789012345678901e-40", 1, 1),
    ("0.5Ki", 512, 512000),
    ("1.5Gi", 1610612736, 1610612736000),
    (1e30, 0, 0),
]


@pytest.mark.parametrize(("quantity", "units", "millis"), ORACLE, ids=repr)
def test_amounts_beyond_64_bits_read_as_kube_scheduler_reads_them(
    quantity: object, units: int, millis: int
) -> None:
    assert _both(quantity) == (units, millis)


@pytest.mark.parametrize(
    "bad",
    ["", "1.2.3", "abc", "1Gb", "1 Gi", "--1", "1e", "1K", "1e+", ".e-10", True, None, [1]],
    ids=repr,
)
def test_malformed_quantities_raise_with_the_value(bad: object) -> None:
    with pytest.raises(FieldError) as raised:
        parse_quantity(bad)
    assert "invalid quantity" in raised.value.problem


@pytest.mark.parametrize("negative", ["-1", "-0.5m", -3, "-1Gi"], ids=repr)
def test_negative_quantities_are_refused(negative: object) -> None:
    with pytest.raises(FieldError, match="must not be negative"):
        parse_quantity(negative)


def test_overlong_quantities_are_refused_without_quoting_them_whole() -> None:
    with pytest.raises(FieldError) as raised:
        parse_quantity("1" * 100_000)
    assert len(raised.value.problem) < 200
    with pytest.raises(FieldError):
        parse_quantity(10**5000)
    assert to_units("1" * MAX_QUANTITY_LENGTH) is not None


@given(st.text(max_size=40) | st.integers() | st.floats())
def test_any_value_gives_an_int64_or_a_field_error(value: object) -> None:
    try:
        units, millis = _both(value)
    except FieldError as error:
        assert "\n" not in error.problem
        return
    assert -(2**63) <= units <= INT64_MAX
    assert -(2**63) <= millis <= INT64_MAX


@pytest.mark.parametrize(
    ("resource", "amount", "text"),
    [
        ("cpu", 1500, "1500m"),
        ("cpu", 2000, "2"),
        ("memory", 2**30, "1Gi"),
        ("memory", 1000, "1000"),
        ("pods", 110, "110"),
    ],
)
def test_format_amount(resource: str, amount: int, text: str) -> None:
    assert format_amount(resource, amount) == text
