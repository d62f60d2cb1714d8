"""ApiSession against a local aiohttp stub: JSON in and out, patch types, typed errors,
token re-read on 401, and kubeconfig parsing into kopf's ConnectionInfo."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from berth.kube.api import (
    ApiError,
    ApiSession,
    ApiTransportError,
    Unauthorized,
    connection_info_from_kubeconfig,
)
from tests.unit.kube.fakes import http_stub


class Stub:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str, Any, str]] = []
        self.valid_token = "good"

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json() if request.can_read_body else None
        self.seen.append(
            (
                request.method,
                request.path_qs,
                request.headers.get("Content-Type", ""),
                body,
                request.headers.get("Authorization", ""),
            )
        )
        if request.headers.get("Authorization") != f"Bearer {self.valid_token}":
            return _status(401, "Unauthorized", "Unauthorized")
        if request.path.endswith("/conflict"):
            return _status(409, "Conflict", "pod web is already assigned to node n1")
        if request.path == "/api/v1/pods":
            if "continue" in request.query:
                items, meta = [{"n": 3}], {"resourceVersion": "42"}
            else:
                items, meta = [{"n": 1}, {"n": 2}], {"resourceVersion": "41", "continue": "abc"}
            return web.json_response({"items": items, "metadata": meta})
        return web.json_response({"echo": body})


def _status(code: int, reason: str, message: str) -> web.Response:
    return web.json_response(
        {"kind": "Status", "status": "Failure", "reason": reason, "message": message, "code": code},
        status=code,
    )


@pytest.fixture
async def stub() -> AsyncIterator[tuple[Stub, str]]:
    handler = Stub()
    async with http_stub(handler.handle) as url:
        yield handler, url


async def test_json_round_trip_and_patch_content_types(stub: tuple[Stub, str]) -> None:
    handler, url = stub
    async with ApiSession(url, ssl_context=False, headers={"Authorization": "Bearer good"}) as api:
        assert await api.post_json("/x", {"a": 1}) == {"echo": {"a": 1}}
        for kind, content_type in [
            ("merge", "application/merge-patch+json"),
            ("strategic", "application/strategic-merge-patch+json"),
            ("json-patch", "application/json-patch+json"),
        ]:
            await api.patch_json("/x", {"b": 2}, content_type=kind)  # type: ignore[arg-type]
            assert handler.seen[-1][2] == content_type
        assert await api.get_json("/x") == {"echo": None}


async def test_list_follows_continue_tokens(stub: tuple[Stub, str]) -> None:
    _, url = stub
    async with ApiSession(url, ssl_context=False, headers={"Authorization": "Bearer good"}) as api:
        items, resource_version = await api.list_json("/api/v1/pods", page_size=2)
    assert items == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert resource_version == "42"


async def test_errors_are_typed_with_status_reason_and_message(stub: tuple[Stub, str]) -> None:
    _, url = stub
    async with ApiSession(url, ssl_context=False, headers={"Authorization": "Bearer good"}) as api:
        with pytest.raises(ApiError) as raised:
            await api.post_json("/pods/web/conflict", {})
    error = raised.value
    assert (error.status, error.reason) == (409, "Conflict")
    assert error.message == "pod web is already assigned to node n1"


async def test_401_is_unauthorized_and_says_so(stub: tuple[Stub, str]) -> None:
    _, url = stub
    async with ApiSession(url, ssl_context=False, headers={"Authorization": "Bearer bad"}) as api:
        with pytest.raises(Unauthorized, match="rejected Berth's credentials"):
            await api.get_json("/x")


async def test_a_rotated_token_file_is_reread_once_on_401(
    stub: tuple[Stub, str], tmp_path: Path
) -> None:
    handler, url = stub
    token_file = tmp_path / "token"
    token_file.write_text("good\n")
    async with ApiSession(
        url, ssl_context=False, headers={"Authorization": "Bearer old"}, token_file=token_file
    ) as api:
        assert await api.get_json("/x") == {"echo": None}
    assert [seen[4] for seen in handler.seen] == ["Bearer old", "Bearer good"]


async def test_refused_connection_is_a_transport_error_of_a_request_never_sent() -> None:
    async with ApiSession("http://127.0.0.1:9", ssl_context=False, request_timeout=5) as api:
        with pytest.raises(ApiTransportError) as raised:
            await api.get_json("/x")
    assert raised.value.possibly_sent is False


async def test_a_server_dying_after_the_request_leaves_its_effect_unknown() -> None:
    """Read the whole request, then close without answering: a SIGKILLed API server."""
    received = asyncio.Event()

    async def die_after_reading(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        received.set()
        writer.close()

    server = await asyncio.start_server(die_after_reading, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with ApiSession(
            f"http://127.0.0.1:{port}", ssl_context=False, request_timeout=5
        ) as api:
            with pytest.raises(ApiTransportError) as raised:
                await api.post_json("/binding", {"a": 1})
    finally:
        server.close()
        await server.wait_closed()
    assert received.is_set()
    assert raised.value.possibly_sent is True


def test_kubeconfig_context_becomes_connection_info(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_text("x")
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "one",
        "clusters": [
            {
                "name": "c1",
                "cluster": {"server": "https://a:6443", "certificate-authority": "ca.crt"},
            },
            {
                "name": "c2",
                "cluster": {
                    "server": "https://b:6443",
                    "insecure-skip-tls-verify": True,
                    "certificate-authority-data": "Q0E=",
                },
            },
        ],
        "users": [
            {"name": "u1", "user": {"client-certificate": "u.crt", "client-key": "u.key"}},
            {"name": "u2", "user": {"tokenFile": "tok"}},
        ],
        "contexts": [
            {"name": "one", "context": {"cluster": "c1", "user": "u1", "namespace": "ns1"}},
            {"name": "two", "context": {"cluster": "c2", "user": "u2"}},
        ],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(document))
    (tmp_path / "tok").write_text("secret\n")

    current, no_token_file = connection_info_from_kubeconfig(path)
    other, token_file = connection_info_from_kubeconfig(path, "two")

    assert current.server == "https://a:6443"
    assert current.ca_path == str(tmp_path / "ca.crt")
    assert current.certificate_path == str(tmp_path / "u.crt")
    assert current.private_key_path == str(tmp_path / "u.key")
    assert current.default_namespace == "ns1"
    assert no_token_file is None
    assert (other.server, other.insecure, other.ca_data, other.token) == (
        "https://b:6443",
        True,
        "Q0E=",
        "secret",
    )
    assert token_file == tmp_path / "tok"
    with pytest.raises(ValueError, match="no context named 'three'"):
        connection_info_from_kubeconfig(path, "three")
