"""Semantic versions as DRA reads them: version attributes and CEL's `semver()` library.

kube-scheduler parses version attributes and `semver("...")` arguments with blang/semver v4
and orders them by its rules (a pre-release sorts before its release, numeric identifiers
before alphanumeric ones, build metadata ignored). Berth parses and orders the same way, and
words parse errors the same way because they reach FailedScheduling messages verbatim.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["Semver", "SemverError", "go_quoted", "parse_semver"]

_DIGITS = frozenset("0123456789")
_ALPHANUMERIC = _DIGITS | frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")
_UINT64_MAX = 2**64 - 1


class SemverError(ValueError):
    """A text is not a semantic version; the message is blang/semver's."""


def go_quoted(text: str) -> str:
    """Go's %q for the texts that can reach here."""
    return json.dumps(text, ensure_ascii=False)


def _only(text: str, allowed: frozenset[str]) -> bool:
    return all(character in allowed for character in text)


def _leading_zero(text: str) -> bool:
    return len(text) > 1 and text[0] == "0"


def _uint64(text: str) -> int:
    if not text:
        raise SemverError('strconv.ParseUint: parsing "": invalid syntax')
    value = int(text)
    if value > _UINT64_MAX:
        raise SemverError(f"strconv.ParseUint: parsing {go_quoted(text)}: value out of range")
    return value


def _number(text: str, part: str) -> int:
    if not _only(text, _DIGITS):
        raise SemverError(f"Invalid character(s) found in {part.lower()} number {go_quoted(text)}")
    if _leading_zero(text):
        raise SemverError(f"{part} number must not contain leading zeroes {go_quoted(text)}")
    return _uint64(text)


def _prerelease_part(text: str) -> int | str:
    if not text:
        raise SemverError("Prerelease is empty")
    if _only(text, _DIGITS):
        if _leading_zero(text):
            raise SemverError(
                f"Numeric PreRelease version must not contain leading zeroes {go_quoted(text)}"
            )
        return _uint64(text)
    if not _only(text, _ALPHANUMERIC):
        raise SemverError(f"Invalid character(s) found in prerelease {go_quoted(text)}")
    return text


def _compare_part(left: int | str, right: int | str) -> int:
    if isinstance(left, int) != isinstance(right, int):
        return -1 if isinstance(left, int) else 1
    return (left > right) - (left < right)  # type: ignore[operator]  # same kinds, checked above


@dataclass(frozen=True, slots=True)
class Semver:
    """A parsed version; equal when they compare equal (build metadata is not kept)."""

    major: int
    minor: int
    patch: int
    prerelease: tuple[int | str, ...] = ()

    def compare(self, other: Semver) -> int:
        """-1, 0 or 1, by semantic-versioning precedence."""
        mine, theirs = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if mine != theirs:
            return 1 if mine > theirs else -1
        if not self.prerelease or not other.prerelease:
            # A release sorts after its pre-releases.
            return (not self.prerelease) - (not other.prerelease)
        for left, right in zip(self.prerelease, other.prerelease, strict=False):
            order = _compare_part(left, right)
            if order:
                return order
        return (len(self.prerelease) > len(other.prerelease)) - (
            len(self.prerelease) < len(other.prerelease)
        )

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(str(part) for part in self.prerelease)
        return text


def parse_semver(text: str, *, normalize: bool = False) -> Semver:
    """Parse strictly ("1.2.3-rc.1+build"), or tolerantly with `normalize` ("v1.2" is 1.2.0).

    Raises `SemverError` with blang/semver's (or CEL's normalizer's) message.
    """
    if normalize:
        text = _normalized(text)
    if not text:
        raise SemverError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "Major")
    minor = _number(parts[1], "Minor")
    rest, plus, build = parts[2].partition("+")
    patch_text, dash, prerelease = rest.partition("-")
    patch = _number(patch_text, "Patch")
    pre = tuple(_prerelease_part(part) for part in prerelease.split(".")) if dash else ()
    for part in build.split(".") if plus else ():
        if not part:
            raise SemverError("Build meta data is empty")
        if not _only(part, _ALPHANUMERIC):
            raise SemverError(f"Invalid character(s) found in build meta data {go_quoted(part)}")
    return Semver(major, minor, patch, pre)


def _normalized(text: str) -> str:
    """CEL's `semver(text, true)`: no "v" prefix, no leading zeros, missing parts are 0."""
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for index, part in enumerate(parts):
        if len(part) > 1:
            stripped = part.lstrip("0")
            parts[index] = stripped if stripped[:1] in _DIGITS else "0" + stripped
    if len(parts) < 3:
        if any(character in parts[-1] for character in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)
