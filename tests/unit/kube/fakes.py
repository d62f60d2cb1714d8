"""Fakes for the kube layer's unit tests: a scripted API session, a settable clock, a Lease
store, and a local HTTP stub standing in for the API server where the session's own HTTP is
under test."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

from berth.kube.api import ApiError
from berth.kube.app import BerthApp, Settings
from berth.kube.lease_store import LeaseConflict, LeaseRecord, LeaseSnapshot, LeaseUnavailable
from tests.fakes import FakeBinder, FakeClock, FakeReporter

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

    async def request(self, method: str, path: str, *, body: Any = None, **_: Any) -> Any:
        return self._answer(Call(method, path, body))

    async def delete_json(self, path: str, **_: Any) -> Any:
        return self._answer(Call("DELETE", path, None))

    async def post_json(self, path: str, body: Any, **_: Any) -> Any:
        return self._answer(Call("POST", path, body))

    async def patch_json(self, path: str, body: Any, *, content_type: str = "merge") -> Any:
        return self._answer(Call("PATCH", path, body, content_type))

    async def list_json(self, path: str, *, params: Any = None, **_: Any) -> tuple[list[Any], str]:
        """The responder's answer is the list of items (default: none)."""
        items = self._answer(Call("LIST", path, params))
        return list(items or []), "1"

    async def list_pages(
        self, path: str, *, params: Any = None, **_: Any
    ) -> AsyncIterator[tuple[list[Any], str]]:
        """The same list as `list_json`, as a single page."""
        yield await self.list_json(path, params=params)

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


@dataclass
class FakeLease:
    """The API server's side of one Lease: its record, resourceVersion and write history."""

    record: LeaseRecord | None = None
    version: int = 0
    writes: list[LeaseRecord] = field(default_factory=list)


@dataclass
class FakeLeaseStore:
    """One replica's `LeaseStore` onto a shared `FakeLease`; `cut_off` simulates a partition."""

    lease: FakeLease
    cut_off: bool = False
    writes_held: asyncio.Event | None = None  # while set and not yet fired, writes wait for it

    async def _reach(self) -> None:
        await asyncio.sleep(0)  # a request is a suspension point: lets racing replicas interleave
        if self.cut_off:
            raise LeaseUnavailable("cut off from the API server")

    async def _reach_for_write(self) -> None:
        await self._reach()
        if self.writes_held is not None:
            await self.writes_held.wait()

    async def get(self) -> LeaseSnapshot | None:
        await self._reach()
        if self.lease.record is None:
            return None
        return LeaseSnapshot(self.lease.record, str(self.lease.version))

    async def create(self, record: LeaseRecord) -> str:
        await self._reach_for_write()
        if self.lease.record is not None:
            raise LeaseConflict("already exists")
        return self._store(record)

    async def update(self, record: LeaseRecord, *, resource_version: str) -> str:
        await self._reach_for_write()
        if self.lease.record is None or resource_version != str(self.lease.version):
            raise LeaseConflict(f"version {resource_version} is not {self.lease.version}")
        return self._store(record)

    def _store(self, record: LeaseRecord) -> str:
        self.lease.record = record
        self.lease.version += 1
        self.lease.writes.append(record)
        return str(self.lease.version)


def make_app(session: FakeSession | None = None) -> BerthApp:
    """A BerthApp over a fake session, binder and reporter."""
    return BerthApp(
        settings=Settings(),
        session=session or FakeSession(),  # type: ignore[arg-type]
        binder=FakeBinder(),
        reporter=FakeReporter(),
    )
