"""Fakes for the kube layer's unit tests: a scripted API session, a settable clock, and a local
HTTP stub standing in for the API server where the session's own HTTP is under test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

from berth.kube.api import ApiError
from tests.fakes import FakeClock

__all__ = ["Call", "FakeClock", "FakeSession", "FakeWallClock", "api_error"]


@dataclass
class FakeWallClock:
    """Wall time that moves with a FakeClock (same offsets)."""

    clock: FakeClock
    origin: datetime = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.origin + timedelta(seconds=self.clock.t - 1000.0)


@dataclass
class Call:
    method: str
    path: str
    body: Any
    content_type: str | None = None


@dataclass
class FakeSession:
    """Records calls; `responder(call)` may raise (ApiError, ApiTransportError) or return JSON."""

    calls: list[Call] = field(default_factory=list)
    responder: Callable[[Call], Any] | None = None

    def _answer(self, call: Call) -> Any:
        self.calls.append(call)
        if self.responder is not None:
            return self.responder(call)
        return {}

    async def get_json(self, path: str, **_: Any) -> Any:
        return self._answer(Call("GET", path, None))

    async def post_json(self, path: str, body: Any, **_: Any) -> Any:
        return self._answer(Call("POST", path, body))

    async def patch_json(self, path: str, body: Any, *, content_type: str = "merge") -> Any:
        return self._answer(Call("PATCH", path, body, content_type))

    async def list_json(self, path: str, *, params: Any = None, **_: Any) -> tuple[list[Any], str]:
        """The responder's answer is the list of items (default: none)."""
        items = self._answer(Call("LIST", path, params))
        return list(items or []), "1"

    def of(self, method: str, fragment: str = "") -> list[Call]:
        return [c for c in self.calls if c.method == method and fragment in c.path]


def api_error(status: int, reason: str = "", message: str = "") -> ApiError:
    return ApiError(status, reason, message)


@asynccontextmanager
async def http_stub(
    handle: Callable[[web.Request], Awaitable[web.StreamResponse]],
) -> AsyncIterator[str]:
    """A local HTTP server answering every request with `handle`; yields its base URL."""
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    async with TestServer(app) as server:
        yield str(server.make_url("")).rstrip("/")
