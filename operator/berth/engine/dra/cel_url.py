"""Kubernetes' URL functions for CEL (k8s.io/apiserver `library.URLs`).

`url("https://example.com:80/a")` gives a value of upstream's type `kubernetes.URL`; here a
small message in the shared descriptor pool holding what the getters read from the URL Go's
`url.Parse` makes of the text, and Go's printed form (`URL.String`), which is what upstream's
equality compares. The printed form determines the other fields, so CEL's `==` on two messages
is upstream's. `url()` and `isURL()` validate with `url.ParseRequestURI` first, as upstream.
"""

from __future__ import annotations

import functools
from typing import Any

from cel_expr_python import cel
from google.protobuf import descriptor_pb2, message_factory

from berth.engine.dra.cel_library import DESCRIPTOR_POOL, CelFunctionError, overload
from berth.engine.dra.cel_url_parse import GoURL, URLError, go_string, parse_request_uri, parse_url

__all__ = ["URL_EXTENSION"]

_FIELDS = ("text", "scheme", "host", "hostname", "port", "escaped_path", "raw_query")


def _declare_message() -> Any:
    file = descriptor_pb2.FileDescriptorProto(
        name="berth/dra_cel_url.proto", package="kubernetes", syntax="proto3"
    )
    message = file.message_type.add(name="URL")
    for number, name in enumerate(_FIELDS, start=1):
        message.field.add(
            name=name,
            number=number,
            type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
            label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
        )
    DESCRIPTOR_POOL.Add(file)
    return message_factory.GetMessageClass(DESCRIPTOR_POOL.FindMessageTypeByName("kubernetes.URL"))


_URLMessage = _declare_message()
URL = cel.Type("kubernetes.URL")
_PARSE_ERROR = "URL parse error during conversion from string: "


@functools.lru_cache(maxsize=1024)
def _url(text: str) -> Any:
    try:
        parse_request_uri(text)
        url = parse_url(text)
    except URLError as error:
        raise CelFunctionError(f"{_PARSE_ERROR}{error}") from None
    return _URLMessage(
        text=go_string(url.string()),
        scheme=go_string(url.scheme),
        host=go_string(url.host),
        hostname=go_string(url.hostname()),
        port=go_string(url.port()),
        escaped_path=go_string(url.escaped_path()),
        raw_query=go_string(url.raw_query),
    )


def _is_url(text: str) -> bool:
    try:
        parse_request_uri(text)
    except URLError:
        return False
    return True


@functools.lru_cache(maxsize=1024)
def _query(raw_query: str) -> dict[str, list[str]]:
    parsed = GoURL(raw_query=raw_query.encode()).query()
    return {
        go_string(key): [go_string(value) for value in values] for key, values in parsed.items()
    }


def _getter(field: str) -> Any:
    return lambda message: str(getattr(message, field))


_B, _S = cel.Type.BOOL, cel.Type.STRING


def _declarations() -> list[cel.FunctionDecl]:
    getters = {
        "getScheme": ("url_get_scheme", "scheme"),
        "getHost": ("url_get_host", "host"),
        "getHostname": ("url_get_hostname", "hostname"),
        "getPort": ("url_get_port", "port"),
        "getEscapedPath": ("url_get_escaped_path", "escaped_path"),
    }
    overloads: dict[str, list[cel.Overload]] = {
        "url": [overload("string_to_url", URL, [_S], _url, member=False)],
        "isURL": [overload("is_url_string", _B, [_S], _is_url, member=False)],
        **{
            name: [overload(overload_id, _S, [URL], _getter(field), member=True)]
            for name, (overload_id, field) in getters.items()
        },
        "getQuery": [
            overload(
                "url_get_query",
                cel.Type.Map(_S, cel.Type.List(_S)),
                [URL],
                lambda message: _query(message.raw_query),
                member=True,
            )
        ],
    }
    return [cel.FunctionDecl(name, group) for name, group in overloads.items()]


URL_EXTENSION = cel.CelExtension("kubernetes.urls", _declarations())
