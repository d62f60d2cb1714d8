"""Kubernetes' IP and CIDR functions for CEL (k8s.io/apiserver `library.IP`, `library.CIDR`).

`ip("10.0.0.1")` and `cidr("10.0.0.0/8")` give values of upstream's types `net.IP` and
`net.CIDR`; here they are two small messages, declared in the same descriptor pool as the
quantity and semver ones, each holding netip's printed form. That form is one per value, so
CEL's `==` on two of them is netip's equality (a CIDR keeps its host bits: `cidr("10.0.0.1/8")
!= cidr("10.0.0.0/8")`, as upstream). Error texts are upstream's, around netip's parse errors.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from cel_expr_python import cel
from google.protobuf import descriptor_pb2, message_factory

from berth.engine.dra.cel_address import (
    Address,
    AddressError,
    Prefix,
    parse_address,
    parse_prefix,
)
from berth.engine.dra.cel_library import DESCRIPTOR_POOL, CelFunctionError, overload
from berth.engine.dra.cel_semver import go_quoted

__all__ = ["NETWORK_EXTENSION"]


def _declare_messages() -> tuple[Any, Any]:
    file = descriptor_pb2.FileDescriptorProto(
        name="berth/dra_cel_net.proto", package="net", syntax="proto3"
    )
    for name in ("IP", "CIDR"):
        file.message_type.add(name=name).field.add(
            name="text",
            number=1,
            type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
            label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
        )
    DESCRIPTOR_POOL.Add(file)
    return tuple(
        message_factory.GetMessageClass(DESCRIPTOR_POOL.FindMessageTypeByName(f"net.{name}"))
        for name in ("IP", "CIDR")
    )


_IPMessage, _CIDRMessage = _declare_messages()
IP = cel.Type("net.IP")
CIDR = cel.Type("net.CIDR")


@functools.lru_cache(maxsize=1024)
def _checked_address(text: str) -> Address:
    """k8s' parseIPAddr: netip's parse, then no zone and no IPv4-mapped IPv6 address."""
    try:
        address = parse_address(text)
    except AddressError as error:
        raise CelFunctionError(
            f"IP Address {go_quoted(text)} parse error during conversion from string: {error}"
        ) from None
    if address.zone:
        raise CelFunctionError(f"IP address {go_quoted(text)} with zone value is not allowed")
    if address.is_4in6():
        raise CelFunctionError(f"IPv4-mapped IPv6 address {go_quoted(text)} is not allowed")
    return address


_CIDR_PARSE = "network address parse error during conversion from string: "


@functools.lru_cache(maxsize=1024)
def _checked_prefix(text: str) -> Prefix:
    """k8s' parseCIDR, its message prefixed once more, as `cidr()` reports it."""
    try:
        prefix = parse_prefix(text)
    except AddressError as error:
        raise CelFunctionError(f"{_CIDR_PARSE}{_CIDR_PARSE}{error}") from None
    if prefix.address.is_4in6():
        raise CelFunctionError(
            f"{_CIDR_PARSE}IPv4-mapped IPv6 address {go_quoted(text)} is not allowed"
        )
    return prefix


def _ip_value(address: Address) -> Any:
    return _IPMessage(text=str(address))


def _cidr_value(prefix: Prefix) -> Any:
    return _CIDRMessage(text=str(prefix))


def _address(message: Any) -> Address:
    return _checked_address(message.text)


def _prefix(message: Any) -> Prefix:
    return _checked_prefix(message.text)


def _is_valid(check: Callable[[str], object]) -> Callable[[str], bool]:
    def valid(text: str) -> bool:
        try:
            check(text)
        except CelFunctionError:
            return False
        return True

    return valid


def _is_canonical(text: str) -> bool:
    return str(_checked_address(text)) == text


def _to_string(message: Any) -> str:
    return str(message.text)


def _contains_ip(cidr: Any, other: Any) -> bool:
    address = _checked_address(other) if isinstance(other, str) else _address(other)
    return _prefix(cidr).contains(address)


def _contains_cidr(cidr: Any, other: Any) -> bool:
    inner = _checked_prefix(other) if isinstance(other, str) else _prefix(other)
    outer = _prefix(cidr)
    return outer.overlaps(inner) and outer.length <= inner.length


def _family(message: Any) -> int:
    return 4 if _address(message).bits == 32 else 6


def _predicate(check: Callable[[Address], bool]) -> Callable[[Any], bool]:
    return lambda message: check(_address(message))


_B, _I, _S = cel.Type.BOOL, cel.Type.INT, cel.Type.STRING


def _declarations() -> list[cel.FunctionDecl]:
    predicates = {
        "isUnspecified": ("ip_is_unspecified", Address.is_unspecified),
        "isLoopback": ("ip_is_loopback", Address.is_loopback),
        "isLinkLocalMulticast": ("ip_is_link_local_multicast", Address.is_link_local_multicast),
        "isLinkLocalUnicast": ("ip_is_link_local_unicast", Address.is_link_local_unicast),
        "isGlobalUnicast": ("ip_is_global_unicast", Address.is_global_unicast),
    }
    overloads: dict[str, list[cel.Overload]] = {
        "ip": [
            overload(
                "string_to_ip", IP, [_S], lambda t: _ip_value(_checked_address(t)), member=False
            ),
            overload("cidr_ip", IP, [CIDR], lambda c: _ip_value(_prefix(c).address), member=True),
        ],
        "ip.isCanonical": [overload("ip_is_canonical", _B, [_S], _is_canonical, member=False)],
        "isIP": [overload("is_ip", _B, [_S], _is_valid(_checked_address), member=False)],
        "family": [overload("ip_family", _I, [IP], _family, member=True)],
        **{
            name: [overload(overload_id, _B, [IP], _predicate(check), member=True)]
            for name, (overload_id, check) in predicates.items()
        },
        "cidr": [
            overload(
                "string_to_cidr",
                CIDR,
                [_S],
                lambda t: _cidr_value(_checked_prefix(t)),
                member=False,
            )
        ],
        "isCIDR": [overload("is_cidr", _B, [_S], _is_valid(_checked_prefix), member=False)],
        "containsIP": [
            overload("cidr_contains_ip_string", _B, [CIDR, _S], _contains_ip, member=True),
            overload("cidr_contains_ip_ip", _B, [CIDR, IP], _contains_ip, member=True),
        ],
        "containsCIDR": [
            overload("cidr_contains_cidr_string", _B, [CIDR, _S], _contains_cidr, member=True),
            overload("cidr_contains_cidr", _B, [CIDR, CIDR], _contains_cidr, member=True),
        ],
        "prefixLength": [
            overload("cidr_prefix_length", _I, [CIDR], lambda c: _prefix(c).length, member=True)
        ],
        "masked": [
            overload(
                "cidr_masked", CIDR, [CIDR], lambda c: _cidr_value(_prefix(c).masked()), member=True
            )
        ],
        # Only `string(ip)`: the runtime sees both messages as one kind, and cel-expr-python
        # registers every overload declared in an extension, so `string(cidr)` would collide.
        "string": [overload("ip_to_string", _S, [IP], _to_string, member=False)],
    }
    return [cel.FunctionDecl(name, group) for name, group in overloads.items()]


# An extension, as `string` already has the standard library's overloads.
NETWORK_EXTENSION = cel.CelExtension("kubernetes.net", _declarations())
