"""Semantic versions and quantity amounts as DRA's CEL libraries parse and order them."""

from __future__ import annotations

from fractions import Fraction

import pytest

from berth.engine.dra.cel_quantity import QuantityError, amount_of, as_int64, parse_amount
from berth.engine.dra.cel_semver import Semver, SemverError, parse_semver
from berth.engine.model.quantity import parse_quantity


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("1.0.0", "2.0.0"),
        ("1.2.3", "1.10.0"),
        ("1.0.0-alpha", "1.0.0"),
        ("1.0.0-alpha", "1.0.0-alpha.1"),
        ("1.0.0-alpha.1", "1.0.0-alpha.beta"),  # numeric identifiers sort first
        ("1.0.0-beta.2", "1.0.0-beta.11"),
        ("1.0.0-rc.1", "1.0.0"),
    ],
)
def test_versions_order_by_semver_precedence(lower: str, higher: str) -> None:
    assert parse_semver(lower).compare(parse_semver(higher)) == -1
    assert parse_semver(higher).compare(parse_semver(lower)) == 1


def test_build_metadata_does_not_count() -> None:
    assert parse_semver("1.0.0+build.5") == parse_semver("1.0.0")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("v1", Semver(1, 0, 0)), ("1.2", Semver(1, 2, 0)), ("v01.002.3", Semver(1, 2, 3))],
)
def test_normalized_versions(text: str, expected: Semver) -> None:
    assert parse_semver(text, normalize=True) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Version string empty"),
        ("1.2", "No Major.Minor.Patch elements found"),
        ("a.2.3", 'Invalid character(s) found in major number "a"'),
        ("1.02.3", 'Minor number must not contain leading zeroes "02"'),
        ("1.2.3-", "Prerelease is empty"),
        ("1.2.3-01", 'Numeric PreRelease version must not contain leading zeroes "01"'),
        ("1.2.3+", "Build meta data is empty"),
    ],
)
def test_invalid_versions_are_refused_in_blang_semvers_words(text: str, message: str) -> None:
    with pytest.raises(SemverError, match=None) as failure:
        parse_semver(text)
    assert str(failure.value) == message


def test_short_normalized_version_cannot_carry_a_prerelease() -> None:
    with pytest.raises(SemverError, match="short version cannot contain PreRelease/Build"):
        parse_semver("1.2-rc", normalize=True)


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("1Gi", Fraction(2**30)),
        ("1G", Fraction(10**9)),
        ("500m", Fraction(1, 2)),
        ("-1.5k", Fraction(-1500)),
        ("1e3", Fraction(1000)),
        ("0.1Ki", Fraction(512, 5)),
    ],
)
def test_quantity_texts_are_exact_amounts(text: str, amount: Fraction) -> None:
    assert parse_amount(text) == amount


def test_capacity_amounts_equal_their_spellings() -> None:
    assert amount_of(parse_quantity("80Gi")) == parse_amount("81920Mi")
    assert amount_of(7) == Fraction(7)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "quantities must match the regular expression"),
        ("abc", "quantities must match the regular expression"),
        ("1Kx", "quantities must match the regular expression"),
        ("1Mk", "unable to parse quantity's suffix"),
    ],
)
def test_invalid_quantity_texts(text: str, message: str) -> None:
    with pytest.raises(QuantityError) as failure:
        parse_amount(text)
    assert str(failure.value).startswith(message)


@pytest.mark.parametrize(
    ("amount", "expected"),
    [
        (Fraction(5), 5),
        (Fraction(1, 2), None),
        (Fraction(2**63), None),
        (Fraction(-(2**63)), -(2**63)),
    ],
)
def test_as_int64(amount: Fraction, expected: int | None) -> None:
    assert as_int64(amount) == expected
