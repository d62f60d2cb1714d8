"""IP addresses and prefixes as Go's net/netip reads them, for CEL's `ip()` and `cidr()`.

Kubernetes' IP and CIDR libraries parse with Go's `netip.ParseAddr` and `netip.ParsePrefix`
and report their errors verbatim ("ParseAddr(\\"1.2.3\\"): IPv4 address too short"), which
kube-scheduler puts in FailedScheduling messages. Python's `ipaddress` accepts and words things
differently, so the parse here follows netip's rules, case by case, and keeps its wording; the
printed form is netip's too (RFC 5952 for IPv6).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from berth.engine.dra.cel_semver import go_quoted

__all__ = ["Address", "AddressError", "Prefix", "parse_address", "parse_prefix"]

_HEX = "0123456789abcdefABCDEF"


class AddressError(ValueError):
    """A text is not an address or prefix; the message is netip's."""


@dataclass(frozen=True, slots=True)
class Address:
    """An IPv4 (`bits` 32) or IPv6 (`bits` 128) address, with the zone it was written with."""

    value: int
    bits: int
    zone: str = ""

    def __str__(self) -> str:
        if self.bits == 32:
            return str(ipaddress.IPv4Address(self.value))
        text = ipaddress.IPv6Address(self.value).compressed
        if self.is_4in6():
            text = "::ffff:" + str(ipaddress.IPv4Address(self.value & 0xFFFFFFFF))
        return f"{text}%{self.zone}" if self.zone else text

    def is_4in6(self) -> bool:
        """An IPv4-mapped IPv6 address (::ffff:a.b.c.d)."""
        return self.bits == 128 and self.value >> 32 == 0xFFFF

    def _unmapped(self) -> Address:
        return Address(self.value & 0xFFFFFFFF, 32) if self.is_4in6() else self

    def is_unspecified(self) -> bool:
        return self.value == 0 and not self.zone

    def is_loopback(self) -> bool:
        address = self._unmapped()
        if address.bits == 32:
            return address.value >> 24 == 127
        return address.value == 1

    def is_multicast(self) -> bool:
        address = self._unmapped()
        if address.bits == 32:
            return address.value >> 28 == 0xE
        return address.value >> 120 == 0xFF

    def is_link_local_unicast(self) -> bool:
        address = self._unmapped()
        if address.bits == 32:
            return address.value >> 16 == 0xA9FE  # 169.254/16
        return address.value >> 112 & 0xFFC0 == 0xFE80

    def is_link_local_multicast(self) -> bool:
        address = self._unmapped()
        if address.bits == 32:
            return address.value >> 8 == 0xE00000  # 224.0.0/24
        return address.value >> 112 & 0xFF0F == 0xFF02

    def is_global_unicast(self) -> bool:
        address = self._unmapped()
        if address.bits == 32 and address.value in (0, 0xFFFFFFFF):
            return False
        return not (
            (address.bits == 128 and address.value == 0)
            or address.is_loopback()
            or address.is_multicast()
            or address.is_link_local_unicast()
        )


@dataclass(frozen=True, slots=True)
class Prefix:
    """An address and a prefix length; the address keeps its host bits, as netip's does."""

    address: Address
    length: int

    def __str__(self) -> str:
        return f"{self.address}/{self.length}"

    def masked(self) -> Prefix:
        host_bits = self.address.bits - self.length
        value = self.address.value >> host_bits << host_bits
        return Prefix(Address(value, self.address.bits), self.length)

    def contains(self, address: Address) -> bool:
        if address.zone or address.bits != self.address.bits:
            return False
        host_bits = self.address.bits - self.length
        return address.value >> host_bits == self.address.value >> host_bits

    def overlaps(self, other: Prefix) -> bool:
        if self == other:
            return True
        if self.address.bits != other.address.bits:
            return False
        shortest = min(self.length, other.length)
        host_bits = self.address.bits - shortest
        return self.address.value >> host_bits == other.address.value >> host_bits


def _error(text: str, message: str, at: str = "") -> AddressError:
    where = f" (at {go_quoted(at)})" if at else ""
    return AddressError(f"ParseAddr({go_quoted(text)}): {message}{where}")


def _ipv4_fields(text: str, part: str) -> list[int]:
    """The four octets of `part` (the tail of `text` netip is reading as IPv4)."""
    fields: list[int] = []
    value, digits = 0, 0
    for index, character in enumerate(part):
        if "0" <= character <= "9":
            if digits == 1 and value == 0:
                raise _error(text, "IPv4 field has octet with leading zero")
            value, digits = value * 10 + int(character), digits + 1
            if value > 255:
                raise _error(text, "IPv4 field has value >255")
        elif character == ".":
            if index == 0 or index == len(part) - 1 or part[index - 1] == ".":
                raise _error(text, "IPv4 field must have at least one digit", part[index:])
            if len(fields) == 3:
                raise _error(text, "IPv4 address too long")
            fields.append(value)
            value, digits = 0, 0
        else:
            raise _error(text, "unexpected character", part[index:])
    if len(fields) < 3:
        raise _error(text, "IPv4 address too short")
    return [*fields, value]


def _octets_value(octets: list[int]) -> int:
    value = 0
    for octet in octets:
        value = value << 8 | octet
    return value


def _hex_group(text: str, rest: str) -> tuple[int, int]:
    """The value of the hex group `rest` starts with, and how many digits it has."""
    value, length = 0, 0
    while length < len(rest) and rest[length] in _HEX:
        value = value << 4 | int(rest[length], 16)
        if length > 3:
            raise _error(text, "each group must have 4 or less digits", rest)
        length += 1
    if length == 0:
        raise _error(text, "each colon-separated field must have at least one digit", rest)
    return value, length


def _ipv6(text: str) -> Address:
    rest, zone = text, ""
    if "%" in rest:
        rest, zone = rest.split("%", 1)
        if not zone:
            raise _error(text, "zone must be a non-empty string")
    groups: list[int] = []  # 16-bit groups, an embedded IPv4 counting as two
    ellipsis = -1
    if rest.startswith("::"):
        ellipsis, rest = 0, rest[2:]
        if not rest:
            return Address(0, 128, zone)
    while len(groups) < 8:
        value, length = _hex_group(text, rest)
        if length < len(rest) and rest[length] == ".":
            if ellipsis < 0 and len(groups) != 6:
                raise _error(
                    text,
                    "embedded IPv4 address must replace the final 2 fields of the address",
                    rest,
                )
            if len(groups) > 6:
                raise _error(
                    text,
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                    rest,
                )
            ipv4 = _octets_value(_ipv4_fields(text, rest))
            groups += [ipv4 >> 16, ipv4 & 0xFFFF]
            rest = ""
            break
        groups.append(value)
        rest = rest[length:]
        if not rest:
            break
        if rest[0] != ":":
            raise _error(text, "unexpected character, want colon", rest)
        if len(rest) == 1:
            raise _error(text, "colon must be followed by more characters", rest)
        rest = rest[1:]
        if rest[0] == ":":
            if ellipsis >= 0:
                raise _error(text, "multiple :: in address", rest)
            ellipsis, rest = len(groups), rest[1:]
            if not rest:
                break
    if rest:
        raise _error(text, "trailing garbage after address", rest)
    if len(groups) < 8:
        if ellipsis < 0:
            raise _error(text, "address string too short")
        groups[ellipsis:ellipsis] = [0] * (8 - len(groups))
    elif ellipsis >= 0:
        raise _error(text, "the :: must expand to at least one field of zeros")
    value = 0
    for group in groups:
        value = value << 16 | group
    return Address(value, 128, zone)


def parse_address(text: str) -> Address:
    """netip.ParseAddr: the first '.', ':' or '%' decides the family; raises `AddressError`."""
    for character in text:
        if character == ".":
            return Address(_octets_value(_ipv4_fields(text, text)), 32)
        if character == ":":
            return _ipv6(text)
        if character == "%":
            raise _error(text, "missing IPv6 address")
    raise _error(text, "unable to parse IP")


def parse_prefix(text: str) -> Prefix:
    """netip.ParsePrefix ("10.0.0.0/8"); raises `AddressError` with its wording."""

    def failure(message: str) -> AddressError:
        return AddressError(f"netip.ParsePrefix({go_quoted(text)}): {message}")

    address_text, slash, bits_text = text.rpartition("/")
    if not slash:
        raise failure("no '/'")
    try:
        address = parse_address(address_text)
    except AddressError as error:
        raise failure(str(error)) from None
    if address.zone:
        raise failure("IPv6 zones cannot be present in a prefix")
    bad_bits = failure(f"bad bits after slash: {go_quoted(bits_text)}")
    if len(bits_text) > 1 and not "1" <= bits_text[0] <= "9":
        raise bad_bits
    if not bits_text.isascii() or not bits_text.isdigit() or len(bits_text) > 18:
        raise bad_bits  # what strconv.Atoi refuses (18 digits keep it in int64)
    length = int(bits_text)
    if length > address.bits:
        raise failure("prefix length out of range")
    return Prefix(address, length)
