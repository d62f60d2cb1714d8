"""Calling one scheduler extender over HTTP(S), and saying how a call failed in kube-scheduler's words.

One `ExtenderClient` per configured extender holds one keep-alive aiohttp
session (kube-scheduler keeps one http.Client per extender), POSTs JSON bodies
(berth.engine.extenders.wire) to `<urlPrefix>/<verb>`, and bounds each call
by the extender's httpTimeout, as Go's Client.Timeout bounds the whole call.

A call ends in `Answered(value)` or an `ExtenderError` whose `message` is the
text kube-scheduler's error has for the same failure (what FailedScheduling
shows for a non-ignorable extender), and whose `kind` tells the failures apart:
transport, timeout, a status other than 200, a reply that is not the expected
JSON, or an `Error` set by the extender. Whether an error is skipped
(`ignorable`) is the caller's decision; the error carries the flag.
"""

from __future__ import annotations

import json
import os
import ssl
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import TracebackType
from typing import Any, Generic, Self, TypeVar
from urllib.parse import urlsplit

import aiohttp

from berth.engine.errors import FieldError
from berth.engine.extenders import (
    ExtenderConfig,
    ExtenderTLSConfig,
    FilterResult,
    HostPriority,
    MetaVictims,
    Victims,
    WireError,
    decode_binding_result,
    decode_filter_result,
    decode_host_priority_list,
    decode_preemption_result,
    encode_binding_args,
    encode_extender_args,
    encode_preemption_args,
)

__all__ = [
    "Answered",
    "ExtenderClient",
    "ExtenderError",
    "ExtenderErrorKind",
    "ExtenderReply",
    "tls_context",
]

T = TypeVar("T")


class ExtenderErrorKind(StrEnum):
    TRANSPORT = "transport"  # no answer: connection refused, reset, DNS, TLS...
    TIMEOUT = "timeout"  # no complete answer within httpTimeout
    HTTP_STATUS = "http-status"  # answered with a status other than 200
    BAD_REPLY = "bad-reply"  # 200, but not the JSON the verb answers with
    ERROR_FIELD = "error-field"  # the reply's `Error` was set (filter and bind)


@dataclass(frozen=True, slots=True)
class ExtenderError:
    """A failed call. `message` is kube-scheduler's error text for it."""

    extender: str  # the extender's name: its urlPrefix, as kube-scheduler names it
    verb: str
    kind: ExtenderErrorKind
    message: str
    ignorable: bool


@dataclass(frozen=True, slots=True)
class Answered(Generic[T]):
    value: T


ExtenderReply = Answered[T] | ExtenderError


class _Failed(Exception):
    def __init__(self, kind: ExtenderErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _pem_file(data: bytes, directory: str) -> str:
    # ssl can load a certificate chain only from files; the file lives only while loading.
    descriptor, path = tempfile.mkstemp(dir=directory, suffix=".pem")
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    return path


def _loading(field: str, load: Callable[[], object]) -> None:
    try:
        load()
    except (OSError, ValueError) as error:  # ssl.SSLError is an OSError
        raise FieldError(field, f"cannot load: {error}") from None


def tls_context(extender: ExtenderConfig) -> ssl.SSLContext | None:
    """The TLS settings kube-scheduler's transport would use for this extender (None: defaults).

    As upstream: `*Data` takes precedence over `*File`; enableHTTPS without any CA
    turns verification off; `insecure` turns it off too. Unreadable or invalid
    certificates raise a `FieldError` naming the tlsConfig field (kube-scheduler
    refuses to start on them).
    """
    tls = extender.tls or ExtenderTLSConfig()
    has_ca = bool(tls.ca_file or tls.ca_data)
    insecure = tls.insecure or (extender.enable_https and not has_ca)
    if extender.tls is None and not extender.enable_https:
        return None
    context = ssl.create_default_context()
    if tls.ca_data:
        cadata = tls.ca_data.decode("ascii", errors="replace")
        _loading("tlsConfig.caData", lambda: context.load_verify_locations(cadata=cadata))
    elif tls.ca_file:
        _loading("tlsConfig.caFile", lambda: context.load_verify_locations(cafile=tls.ca_file))
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if tls.cert_data or tls.cert_file:
        field = "tlsConfig.certData" if tls.cert_data else "tlsConfig.certFile"
        with tempfile.TemporaryDirectory() as directory:
            cert = _pem_file(tls.cert_data, directory) if tls.cert_data else tls.cert_file
            key = _pem_file(tls.key_data, directory) if tls.key_data else tls.key_file or None
            _loading(field, lambda: context.load_cert_chain(cert, key))
    return context


def _go_quoted(text: str) -> str:
    """Go's %q of a string (a JSON string literal is the same for what names hold)."""
    return json.dumps(text)


def _go_transport_message(url: str, error: BaseException) -> str:
    """Go's `*url.Error` text for a request that got no answer."""
    if isinstance(error, aiohttp.ClientConnectorError) and isinstance(
        error.os_error, ConnectionRefusedError
    ):
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return f'Post "{url}": dial tcp {parts.hostname}:{port}: connect: connection refused'
    return f'Post "{url}": {error}'


class ExtenderClient:
    """Calls one extender; use `async with`, or `close()` when done.

    Building one checks the TLS material (see `tls_context`), so build clients when
    the configuration is loaded, where a `FieldError` can name the field.
    """

    def __init__(self, extender: ExtenderConfig) -> None:
        self.extender = extender
        self._ssl = tls_context(extender)
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _open(self) -> aiohttp.ClientSession:
        # Opened on first use, inside the running loop that will use it.
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(ssl=self._ssl if self._ssl is not None else True)
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=self.extender.http_timeout_seconds),
                headers={"Content-Type": "application/json"},
            )
        return self._session

    async def _send(self, verb: str, body: Any) -> Any:
        """POST `body`, return the decoded JSON reply; raises `_Failed`."""
        url = self.extender.verb_url(verb)
        tls = self.extender.tls
        server_name = tls.server_name if tls is not None and tls.server_name else None
        try:
            async with self._open().post(
                url, data=json.dumps(body), server_hostname=server_name
            ) as response:
                if response.status != 200:
                    raise _Failed(
                        ExtenderErrorKind.HTTP_STATUS,
                        f"failed {verb} with extender at URL {url}, code {response.status}",
                    )
                raw = await response.read()
        except TimeoutError:
            raise _Failed(
                ExtenderErrorKind.TIMEOUT,
                f'Post "{url}": context deadline exceeded '
                "(Client.Timeout exceeded while awaiting headers)",
            ) from None
        except aiohttp.ClientError as error:
            raise _Failed(ExtenderErrorKind.TRANSPORT, _go_transport_message(url, error)) from None
        if not raw.strip():
            raise _Failed(ExtenderErrorKind.BAD_REPLY, "EOF")  # Go's decoder on an empty body
        try:
            # Go's decoder reads the first JSON value and ignores what follows it.
            value, _ = json.JSONDecoder().raw_decode(raw.decode("utf-8").lstrip())
        except (UnicodeDecodeError, ValueError) as error:
            raise _Failed(
                ExtenderErrorKind.BAD_REPLY, f"invalid JSON from {url}: {error}"
            ) from None
        return value

    async def _call(
        self, verb: str, body: Any, read: Callable[[Any], T]
    ) -> Answered[T] | ExtenderError:
        try:
            return Answered(read(await self._send(verb, body)))
        except _Failed as failed:
            return self._error(verb, failed.kind, failed.message)
        except WireError as error:
            return self._error(verb, ExtenderErrorKind.BAD_REPLY, str(error))

    def _error(self, verb: str, kind: ExtenderErrorKind, message: str) -> ExtenderError:
        return ExtenderError(self.extender.name, verb, kind, message, self.extender.ignorable)

    # -- the four verbs --------------------------------------------------------------------

    async def filter(
        self, *, pod: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]]
    ) -> Answered[FilterResult] | ExtenderError:
        """The filter verb on `nodes` (raw API objects, in the order the plugins left them)."""
        verb = self.extender.filter_verb
        cached = self.extender.node_cache_capable
        body = encode_extender_args(pod=pod, nodes=nodes, node_cache_capable=cached)
        reply = await self._call(
            verb, body, lambda raw: decode_filter_result(raw, node_cache_capable=cached)
        )
        if isinstance(reply, ExtenderError):
            return reply
        result = reply.value
        if result.error:
            return self._error(verb, ExtenderErrorKind.ERROR_FIELD, result.error)
        if cached and not result.from_node_objects:
            offered = set(body["NodeNames"] or ())
            for name in result.node_names:
                if name not in offered:
                    return self._error(
                        verb,
                        ExtenderErrorKind.BAD_REPLY,
                        f"extender {_go_quoted(self.extender.name)} claims a filtered node "
                        f"{_go_quoted(name)} which is not found in the input node list",
                    )
        return reply

    async def prioritize(
        self, *, pod: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]]
    ) -> Answered[tuple[HostPriority, ...]] | ExtenderError:
        """The prioritize verb: 0..10 per host, before scaling and weighting."""
        cached = self.extender.node_cache_capable
        body = encode_extender_args(pod=pod, nodes=nodes, node_cache_capable=cached)
        return await self._call(self.extender.prioritize_verb, body, decode_host_priority_list)

    async def bind(
        self, *, namespace: str, name: str, uid: str, node: str
    ) -> Answered[str] | ExtenderError:
        """The bind verb; answers the node the extender bound the pod to."""
        verb = self.extender.bind_verb
        body = encode_binding_args(namespace=namespace, name=name, uid=uid, node=node)
        reply = await self._call(verb, body, decode_binding_result)
        if isinstance(reply, ExtenderError):
            return reply
        if reply.value:
            return self._error(verb, ExtenderErrorKind.ERROR_FIELD, reply.value)
        return Answered(node)

    async def preempt(
        self, *, pod: Mapping[str, Any], victims: Mapping[str, Victims]
    ) -> Answered[dict[str, MetaVictims]] | ExtenderError:
        """The preempt verb: the candidates the extender keeps, victims by UID."""
        body = encode_preemption_args(
            pod=pod, victims=victims, node_cache_capable=self.extender.node_cache_capable
        )
        return await self._call(self.extender.preempt_verb, body, decode_preemption_result)
