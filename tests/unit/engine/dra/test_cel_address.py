"""IP addresses and prefixes parsed and printed as Go's net/netip does.

The cases and their expected texts were produced by Go 1.26's netip.ParseAddr and
netip.ParsePrefix (String and Masked for the accepted ones): kube-scheduler reports these
errors verbatim when a selector's `ip()` or `cidr()` argument is invalid.
"""

from __future__ import annotations

import pytest

from berth.engine.dra.cel_address import AddressError, parse_address, parse_prefix

ADDRESSES = [
    ("::", "::"),
    ("::1", "::1"),
    ("1::", "1::"),
    ("::ffff:1.2.3.4", "::ffff:1.2.3.4"),
    ("1:2::3:4:1.2.3.4", "1:2::3:4:102:304"),
    ("fe80::1%eth0", "fe80::1%eth0"),
    ("2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
    ("2001:db8::1:0:0:1", "2001:db8::1:0:0:1"),
    ("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"),
]

ADDRESS_ERRORS = [
    ("1.2.3", 'ParseAddr("1.2.3"): IPv4 address too short'),
    ("1.2.3.4.5", 'ParseAddr("1.2.3.4.5"): IPv4 address too long'),
    ("01.2.3.4", 'ParseAddr("01.2.3.4"): IPv4 field has octet with leading zero'),
    ("256.1.1.1", 'ParseAddr("256.1.1.1"): IPv4 field has value >255'),
    ("1..2.3", 'ParseAddr("1..2.3"): IPv4 field must have at least one digit (at ".2.3")'),
    ("1.2.3.4%eth0", 'ParseAddr("1.2.3.4%eth0"): unexpected character (at "%eth0")'),
    ("foo", 'ParseAddr("foo"): unable to parse IP'),
    ("%x", 'ParseAddr("%x"): missing IPv6 address'),
    (
        "1:2:3:4:5:6:7:8:9",
        'ParseAddr("1:2:3:4:5:6:7:8:9"): trailing garbage after address (at "9")',
    ),
    (
        "1:2:3:4:5:6:7::8",
        'ParseAddr("1:2:3:4:5:6:7::8"): the :: must expand to at least one field of zeros',
    ),
    (
        "1:2:3:4:5:6:7:1.2.3.4",
        'ParseAddr("1:2:3:4:5:6:7:1.2.3.4"): embedded IPv4 address must replace the final 2 fields of the address (at "1.2.3.4")',
    ),
    ("12345::", 'ParseAddr("12345::"): each group must have 4 or less digits (at "12345::")'),
    ("g::", 'ParseAddr("g::"): each colon-separated field must have at least one digit (at "g::")'),
    (
        "1:::2",
        'ParseAddr("1:::2"): each colon-separated field must have at least one digit (at ":2")',
    ),
    ("1::2::3", 'ParseAddr("1::2::3"): multiple :: in address (at ":3")'),
    ("fe80::1%", 'ParseAddr("fe80::1%"): zone must be a non-empty string'),
    ("1:2:3:4:5:6:7", 'ParseAddr("1:2:3:4:5:6:7"): address string too short'),
    ("1:2", 'ParseAddr("1:2"): address string too short'),
    (":1", 'ParseAddr(":1"): each colon-separated field must have at least one digit (at ":1")'),
    ("1:", 'ParseAddr("1:"): colon must be followed by more characters (at ":")'),
    ("1.2.3.", 'ParseAddr("1.2.3."): IPv4 field must have at least one digit (at ".")'),
    (".1.2.3", 'ParseAddr(".1.2.3"): IPv4 field must have at least one digit (at ".1.2.3")'),
    ("1.2.3.a", 'ParseAddr("1.2.3.a"): unexpected character (at "a")'),
]

PREFIXES = [
    ("10.0.0.0/8", "10.0.0.0/8", "10.0.0.0/8"),
    ("10.0.0.1/8", "10.0.0.1/8", "10.0.0.0/8"),
    ("::/0", "::/0", "::/0"),
    ("1.2.3.4/0", "1.2.3.4/0", "0.0.0.0/0"),
]

PREFIX_ERRORS = [
    ("10.0.0.0", "netip.ParsePrefix(\"10.0.0.0\"): no '/'"),
    ("10.0.0.0/33", 'netip.ParsePrefix("10.0.0.0/33"): prefix length out of range'),
    ("10.0.0.0/08", 'netip.ParsePrefix("10.0.0.0/08"): bad bits after slash: "08"'),
    ("10.0.0.0/+8", 'netip.ParsePrefix("10.0.0.0/+8"): bad bits after slash: "+8"'),
    ("10.0.0.0/", 'netip.ParsePrefix("10.0.0.0/"): bad bits after slash: ""'),
    ("10.0.0.0/-1", 'netip.ParsePrefix("10.0.0.0/-1"): bad bits after slash: "-1"'),
    (
        "fe80::1%eth0/64",
        'netip.ParsePrefix("fe80::1%eth0/64"): IPv6 zones cannot be present in a prefix',
    ),
    ("1.2.3/8", 'netip.ParsePrefix("1.2.3/8"): ParseAddr("1.2.3"): IPv4 address too short'),
    (
        "10.0.0.0/99999999999999999999",
        'netip.ParsePrefix("10.0.0.0/99999999999999999999"): bad bits after slash: "99999999999999999999"',
    ),
    ("10.0.0.0/a", 'netip.ParsePrefix("10.0.0.0/a"): bad bits after slash: "a"'),
    ("::1/129", 'netip.ParsePrefix("::1/129"): prefix length out of range'),
]


@pytest.mark.parametrize(("text", "printed"), ADDRESSES)
def test_address_prints_as_netip(text: str, printed: str) -> None:
    assert str(parse_address(text)) == printed


@pytest.mark.parametrize(("text", "message"), ADDRESS_ERRORS)
def test_address_error_has_netip_text(text: str, message: str) -> None:
    with pytest.raises(AddressError) as failure:
        parse_address(text)
    assert str(failure.value) == message


@pytest.mark.parametrize(("text", "printed", "masked"), PREFIXES)
def test_prefix_prints_and_masks_as_netip(text: str, printed: str, masked: str) -> None:
    prefix = parse_prefix(text)
    assert (str(prefix), str(prefix.masked())) == (printed, masked)


@pytest.mark.parametrize(("text", "message"), PREFIX_ERRORS)
def test_prefix_error_has_netip_text(text: str, message: str) -> None:
    with pytest.raises(AddressError) as failure:
        parse_prefix(text)
    assert str(failure.value) == message
