"""Fakes for the kube layer's unit tests: a scripted API session and a settable clock."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from berth.kube.api import ApiError


@dataclass
class FakeClock:
    value: float = 1000.0

    def now(self) -> float:
        return self.value

    def advance(self, seconds: float) -> None:
        self.value += seconds


@dataclass
class FakeWallClock:
    """Wall time that moves with a FakeClock (same offsets)."""

    clock: FakeClock
    origin: datetime = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.origin + timedelta(seconds=self.clock.value - 1000.0)


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

    def of(self, method: str, fragment: str = "") -> list[Call]:
        return [c for c in self.calls if c.method == method and fragment in c.path]


def api_error(status: int, reason: str = "", message: str = "") -> ApiError:
    return ApiError(status, reason, message)
