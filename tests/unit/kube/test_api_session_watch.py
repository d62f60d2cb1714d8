"""ApiSession.watch against a local aiohttp stub: events line by line, ERROR events and refusals
as the same typed errors as any other call (the test client and the benchmarks rely on this)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from berth.kube.api import ApiError, ApiSession, Unauthorized, error_from_status
from tests.unit.kube.fakes import http_stub

POD = {"metadata": {"name": "web", "resourceVersion": "7"}}
GONE = {
    "kind": "Status",
    "status": "Failure",
    "reason": "Expired",
    "message": "too old resource version: 1 (5)",
    "code": 410,
}


class WatchStub:
    def __init__(self) -> None:
        self.queries: list[dict[str, str]] = []

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.queries.append(dict(request.query))
        if request.path == "/forbidden":
            return web.json_response(
                {"kind": "Status", "reason": "Forbidden", "message": "no", "code": 403}, status=403
            )
        response = web.StreamResponse()
        await response.prepare(request)
        events: list[dict[str, Any]] = [
            {"type": "ADDED", "object": POD},
            {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "8"}}},
        ]
        if request.path == "/expired":
            events.append({"type": "ERROR", "object": GONE})
        for event in events:
            await response.write(json.dumps(event).encode() + b"\n\n")
        await response.write_eof()
        return response


@pytest.fixture
async def stub() -> AsyncIterator[tuple[WatchStub, str]]:
    handler = WatchStub()
    async with http_stub(handler.handle) as url:
        yield handler, url


async def test_events_arrive_in_order_until_the_server_ends_the_stream(
    stub: tuple[WatchStub, str],
) -> None:
    handler, url = stub
    async with ApiSession(url, ssl_context=False) as api:
        events = [
            event
            async for event in api.watch(
                "/pods", resource_version="5", params={"labelSelector": "a=b"}, timeout_seconds=9
            )
        ]
    assert [event["type"] for event in events] == ["ADDED", "BOOKMARK"]
    assert events[0]["object"] == POD
    assert handler.queries == [
        {
            "labelSelector": "a=b",
            "watch": "1",
            "resourceVersion": "5",
            "allowWatchBookmarks": "true",
            "timeoutSeconds": "9",
        }
    ]


async def test_an_error_event_raises_its_status(stub: tuple[WatchStub, str]) -> None:
    _, url = stub
    seen: list[str] = []
    async with ApiSession(url, ssl_context=False) as api:
        with pytest.raises(ApiError) as raised:
            async for event in api.watch("/expired", resource_version="1"):
                seen.append(event["type"])
    assert seen == ["ADDED", "BOOKMARK"]  # what came before the error is not lost
    assert (raised.value.status, raised.value.reason) == (410, "Expired")
    assert str(raised.value) == (
        "WATCH /expired: HTTP 410 Expired: too old resource version: 1 (5)"
    )


async def test_a_refused_watch_raises_like_any_call(stub: tuple[WatchStub, str]) -> None:
    _, url = stub
    async with ApiSession(url, ssl_context=False) as api:
        with pytest.raises(ApiError) as raised:
            async for _ in api.watch("/forbidden", resource_version="1"):
                pass
    assert (raised.value.status, raised.value.reason, raised.value.message) == (
        403,
        "Forbidden",
        "no",
    )


def test_a_401_status_is_unauthorized_wherever_it_comes_from() -> None:
    error = error_from_status({"code": 401, "message": "token expired"}, method="WATCH", path="/p")
    assert isinstance(error, Unauthorized)
    assert error.reason == "Unauthorized"
    assert "token expired" in error.message
