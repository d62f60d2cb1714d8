"""Quantities: every spelling the API accepts, compared by equalities between equivalent forms."""

from __future__ import annotations

from fractions import Fraction

import pytest

from berth.engine.errors import FieldError
from berth.engine.model.quantity import format_amount, parse_quantity, to_milli, to_units


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
        ("1E", 10**18),
    ],
    ids=repr,
)
def test_equivalent_spellings_are_equal(left: object, right: object) -> None:
    assert parse_quantity(left) == parse_quantity(right)


@pytest.mark.parametrize(
    ("quantity", "millis", "units"),
    [
        ("100m", 100, 1),
        ("0.1m", 1, 1),
        ("1.5", 1500, 2),
        ("2", 2000, 2),
        ("1Mi", 1048576000, 1048576),
    ],
    ids=["100m", "sub-milli-rounds-up", "fraction-rounds-up", "whole", "binary"],
)
def test_conversion_rounds_up(quantity: str, millis: int, units: int) -> None:
    assert to_milli(quantity) == millis
    assert to_units(quantity) == units


def test_negative_quantities_parse_exactly() -> None:
    assert parse_quantity("-1.5") == Fraction(-3, 2)


@pytest.mark.parametrize(
    "bad", ["", "1.2.3", "abc", "1Gb", "1 Gi", "--1", True, None, [1]], ids=repr
)
def test_malformed_quantities_raise_with_the_value(bad: object) -> None:
    with pytest.raises(FieldError) as raised:
        parse_quantity(bad)
    assert "invalid quantity" in raised.value.problem


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
