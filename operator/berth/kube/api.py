"""One shared keep-alive HTTP session to the API server, raw JSON in and out.

The hot path (Bindings, events, status patches) does not go through a generated
client: model (de)serialisation costs more CPU than the request itself, and the
official client cannot even read a Binding's answer. JSON goes through orjson, a
few times faster than the standard library on API objects (the listings of a
re-list are thousands of them). This session is deliberately
kind-agnostic: callers give API paths and JSON and get JSON (or a typed error).

Credentials come from kopf's login (`from_connection_info`, so the operator and
its handlers authenticate the same way) or from a kubeconfig file. A 401 raises
`Unauthorized`; when the token came from a file (in-cluster ServiceAccount
tokens rotate), the file is re-read once and the request retried first.
"""

from __future__ import annotations

import json
import os
import ssl
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

import aiohttp
import kopf
import orjson
import yaml

__all__ = [
    "DEFAULT_CONNECTION_LIMIT",
    "TRANSIENT_STATUSES",
    "ApiError",
    "ApiSession",
    "ApiTransportError",
    "JsonObject",
    "PatchType",
    "Unauthorized",
    "connection_info_from_kubeconfig",
    "error_from_response",
    "error_from_status",
    "is_transient",
]

JsonObject = dict[str, Any]
PatchType = Literal["merge", "strategic", "json-patch"]

# Bindings, events and status patches share these keep-alive connections; the
# callers bound their own concurrency below this (binds in flight, reporter sends).
DEFAULT_CONNECTION_LIMIT = 100
DEFAULT_REQUEST_TIMEOUT = 30.0
# Watch events arrive one JSON document a line; big objects need more than aiohttp's 64 KiB.
WATCH_LINE_BUFFER = 4 * 1024 * 1024

# Failures to open a connection: the request was never written, so it surely had no effect.
_NOT_SENT = (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)

_PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json-patch": "application/json-patch+json",
}


class ApiError(Exception):
    """A non-2xx answer. `reason` is the Status reason (e.g. Conflict), `message` its text."""

    def __init__(
        self, status: int, reason: str, message: str, *, method: str = "", path: str = ""
    ) -> None:
        self.status = status
        self.reason = reason
        self.message = message
        self.method = method
        self.path = path
        where = f"{method} {path}: " if method else ""
        super().__init__(f"{where}HTTP {status} {reason}: {message}")


class Unauthorized(ApiError):
    """401: the API server rejected the credentials (expired or wrong token, unknown cert)."""


class ApiTransportError(Exception):
    """No HTTP answer at all: connection refused or reset, TLS failure, timeout.

    `possibly_sent` is False only when the request surely never reached the
    server (no connection could be made); otherwise a write may have been
    carried out although its answer was lost (the server died or the
    connection broke after the request went out), and the caller must find
    out before acting as if it had not.
    """

    def __init__(self, message: str, *, possibly_sent: bool = True) -> None:
        super().__init__(message)
        self.possibly_sent = possibly_sent


# Answers worth the same request again later: throttling, a server-side failure, and
# 403, which an API server that has just started gives until its RBAC caches are filled
# (kopf retries 403 for the same reason).
TRANSIENT_STATUSES = frozenset({403, 429, 500, 502, 503, 504})


def is_transient(error: ApiError | ApiTransportError) -> bool:
    """Whether repeating the request later may succeed: no answer, or a transient status."""
    return isinstance(error, ApiTransportError) or error.status in TRANSIENT_STATUSES


def error_from_response(status: int, body: bytes, *, method: str, path: str) -> ApiError:
    """The typed error of a non-2xx answer (its body is usually a Status object)."""
    try:
        decoded = json.loads(body) if body else None
    except ValueError:
        decoded = None
    text = body.decode("utf-8", errors="replace")
    decoded = {"message": text, **decoded} if isinstance(decoded, dict) else {"message": text}
    return error_from_status(decoded, status=status, method=method, path=path)


def error_from_status(
    status_object: Mapping[str, Any], *, status: int | None = None, method: str, path: str
) -> ApiError:
    """The typed error a Status object describes (an error answer, or a watch's ERROR event)."""
    code = status if status is not None else int(status_object.get("code") or 500)
    reason = str(status_object.get("reason", ""))
    message = str(status_object.get("message", ""))
    if code == 401:
        return Unauthorized(
            code,
            reason or "Unauthorized",
            f"the API server rejected Berth's credentials ({message or 'no message'})",
            method=method,
            path=path,
        )
    return ApiError(code, reason, message, method=method, path=path)


class ApiSession:
    """A keep-alive aiohttp session bound to one API server and one identity.

    Create it inside the event loop that will use it (aiohttp's rule); use it
    as `async with` or call `close()`.
    """

    def __init__(
        self,
        server: str,
        *,
        ssl_context: ssl.SSLContext | bool,
        headers: Mapping[str, str] | None = None,
        token_file: Path | None = None,
        connection_limit: int = DEFAULT_CONNECTION_LIMIT,
        request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,  # None: no limit
    ) -> None:
        self.server = server.rstrip("/")
        self._headers = {"Accept": "application/json", **(headers or {})}
        self._token_file = token_file
        self._timeout = aiohttp.ClientTimeout(total=request_timeout, sock_connect=10)
        self._session = aiohttp.ClientSession(
            base_url=self.server,
            connector=aiohttp.TCPConnector(ssl=ssl_context, limit=connection_limit),
            timeout=self._timeout,
            # We decode JSON ourselves from bytes; no charset sniffing.
            auto_decompress=True,
        )

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def from_connection_info(
        cls,
        info: kopf.ConnectionInfo,
        *,
        token_file: Path | None = None,
        connection_limit: int = DEFAULT_CONNECTION_LIMIT,
        request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
    ) -> Self:
        """Reuse kopf's login result: same server, CA, client certificate and token."""
        return cls(
            info.server,
            ssl_context=info.as_ssl_context(),
            headers=info.as_http_headers(),
            token_file=token_file,
            connection_limit=connection_limit,
            request_timeout=request_timeout,
        )

    @classmethod
    def from_kubeconfig(
        cls,
        path: str | os.PathLike[str],
        context: str | None = None,
        *,
        connection_limit: int = DEFAULT_CONNECTION_LIMIT,
        request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
    ) -> Self:
        info, token_file = connection_info_from_kubeconfig(Path(path), context)
        return cls.from_connection_info(
            info,
            token_file=token_file,
            connection_limit=connection_limit,
            request_timeout=request_timeout,
        )

    async def close(self) -> None:
        await self._session.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def closed(self) -> bool:
        return self._session.closed

    # -- requests -------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        """One call; the decoded JSON answer (None if empty), or ApiError / ApiTransportError."""
        data = None if body is None else orjson.dumps(body)
        status, raw = await self._send(method, path, data, params, content_type)
        if status == 401 and self._reload_token():
            status, raw = await self._send(method, path, data, params, content_type)
        if status >= 300:
            raise error_from_response(status, raw, method=method, path=path)
        if not raw:
            return None
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as error:
            raise ApiError(status, "BadResponse", f"undecodable answer: {error}") from None

    async def _send(
        self,
        method: str,
        path: str,
        data: bytes | None,
        params: Mapping[str, str] | None,
        content_type: str,
    ) -> tuple[int, bytes]:
        headers = self._headers
        if data is not None:
            headers = {**headers, "Content-Type": content_type}
        try:
            async with self._session.request(
                method, path, data=data, params=params, headers=headers
            ) as response:
                return response.status, await response.read()
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            raise ApiTransportError(
                f"{method} {path}: {type(error).__name__}: {error}",
                possibly_sent=not isinstance(error, _NOT_SENT),
            ) from error

    def _reload_token(self) -> bool:
        """Re-read a rotated token file; True if the token changed (worth one retry)."""
        if self._token_file is None:
            return False
        try:
            token = self._token_file.read_text(encoding="utf-8").strip()
        except OSError:
            return False
        header = f"Bearer {token}"
        if not token or self._headers.get("Authorization") == header:
            return False
        self._headers = {**self._headers, "Authorization": header}
        return True

    async def get_json(self, path: str, *, params: Mapping[str, str] | None = None) -> JsonObject:
        result: JsonObject = await self.request("GET", path, params=params)
        return result

    async def post_json(
        self, path: str, body: Any, *, params: Mapping[str, str] | None = None
    ) -> JsonObject:
        result: JsonObject = await self.request("POST", path, body=body, params=params)
        return result

    async def patch_json(
        self, path: str, body: Any, *, content_type: PatchType = "merge"
    ) -> JsonObject:
        result: JsonObject = await self.request(
            "PATCH", path, body=body, content_type=_PATCH_CONTENT_TYPES[content_type]
        )
        return result

    async def delete_json(self, path: str, *, params: Mapping[str, str] | None = None) -> Any:
        return await self.request("DELETE", path, params=params)

    async def list_json(
        self, path: str, *, params: Mapping[str, str] | None = None, page_size: int = 500
    ) -> tuple[list[JsonObject], str]:
        """All items of a collection, paginated; also the list's resourceVersion."""
        items: list[JsonObject] = []
        version = ""
        async for page, page_version in self.list_pages(path, params=params, page_size=page_size):
            items.extend(page)
            version = page_version  # the last page's is the list's
        return items, version

    async def list_pages(
        self, path: str, *, params: Mapping[str, str] | None = None, page_size: int = 500
    ) -> AsyncIterator[tuple[list[JsonObject], str]]:
        """A collection page by page, each with the list's resourceVersion (final on the last).

        A caller that converts each page before asking for the next never holds the whole
        collection's JSON at once (10,000 pods are a few hundred MiB of Python objects).
        """
        query = {**(params or {}), "limit": str(page_size)}
        while True:
            page = await self.get_json(path, params=query)
            metadata = page.get("metadata") or {}
            yield page.get("items") or [], str(metadata.get("resourceVersion", ""))
            continue_token = metadata.get("continue")
            if not continue_token:
                return
            query["continue"] = continue_token

    async def watch(
        self,
        path: str,
        *,
        resource_version: str,
        params: Mapping[str, str] | None = None,
        timeout_seconds: int = 60,
    ) -> AsyncIterator[JsonObject]:
        """Watch events ({"type", "object"}) from `resource_version` until the server ends them.

        An ERROR event (410 Gone: the version is too old, re-list) raises its ApiError.
        The stream has no total time limit; the server closes it after `timeout_seconds`.
        """
        query = {
            **(params or {}),
            "watch": "1",
            "resourceVersion": resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(timeout_seconds),
        }
        try:
            async with self._session.get(
                path,
                params=query,
                headers=self._headers,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
                read_bufsize=WATCH_LINE_BUFFER,
            ) as response:
                if response.status >= 300:
                    raise error_from_response(
                        response.status, await response.read(), method="WATCH", path=path
                    )
                async for line in response.content:
                    if not line.strip():
                        continue
                    event: JsonObject = orjson.loads(line)
                    if event.get("type") == "ERROR":
                        raise error_from_status(
                            event.get("object") or {}, method="WATCH", path=path
                        )
                    yield event
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            raise ApiTransportError(f"WATCH {path}: {type(error).__name__}: {error}") from error


# -- kubeconfig ---------------------------------------------------------------------------


def connection_info_from_kubeconfig(
    path: Path, context: str | None = None
) -> tuple[kopf.ConnectionInfo, Path | None]:
    """The named (or current) context of a kubeconfig as kopf's ConnectionInfo.

    Supports what Berth's deployments and tests use: server, CA file or data,
    insecure-skip-tls-verify, client certificate/key files or data, token or
    tokenFile. Relative file paths are relative to the kubeconfig. The second
    value is the token file, if any, so the session can re-read it on a 401.
    """
    document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    name = context or document.get("current-context")
    if not name:
        raise ValueError(f"{path}: no context given and no current-context")

    def entry(section: str, wanted: str) -> dict[str, Any]:
        for item in document.get(section) or []:
            if item.get("name") == wanted:
                found: dict[str, Any] = item.get(section[:-1]) or {}
                return found
        raise ValueError(f"{path}: no {section[:-1]} named {wanted!r}")

    ctx = entry("contexts", name)
    cluster = entry("clusters", ctx["cluster"])
    user = entry("users", ctx["user"]) if ctx.get("user") else {}

    def file(value: str | None) -> str | None:
        return None if not value else str((path.parent / value).resolve())

    def data(value: str | None) -> str | None:
        return value or None  # base64 PEM; kopf decodes it

    token_file = file(user.get("tokenFile"))
    token = user.get("token")
    if token is None and token_file is not None:
        token = Path(token_file).read_text(encoding="utf-8").strip()
    info = kopf.ConnectionInfo(
        server=cluster["server"],
        ca_path=file(cluster.get("certificate-authority")),
        ca_data=data(cluster.get("certificate-authority-data")),
        insecure=bool(cluster.get("insecure-skip-tls-verify", False)),
        certificate_path=file(user.get("client-certificate")),
        certificate_data=data(user.get("client-certificate-data")),
        private_key_path=file(user.get("client-key")),
        private_key_data=data(user.get("client-key-data")),
        token=token,
        username=user.get("username"),
        password=user.get("password"),
        default_namespace=ctx.get("namespace"),
    )
    return info, (Path(token_file) if token_file else None)
