"""Berth's own kopf watch handlers, run in-process against the real API server.

The watch tests register Berth's handlers for a family of kinds on a private registry and
run kopf with the app as its memo, so a test reads the app's cache directly while the
objects arrive exactly as the API server serves them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import kopf

from berth.kube.app import BerthApp

__all__ = ["api_ready", "eventually", "kopf_watching", "until"]

T = TypeVar("T")

POLL_SECONDS = 0.05  # between two looks at a condition; only the deadline fails a test


async def eventually(
    probe: Callable[[], Awaitable[T | None]], what: str, timeout: float = 30.0
) -> T:
    """What `probe` answers once it answers something; fail naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while (value := await probe()) is None:
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(POLL_SECONDS)
    return value


async def until(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Wait until `check` (of in-process state) holds; fail naming `what` after `timeout` s."""

    async def held() -> bool | None:
        return True if check() else None

    await eventually(held, what, timeout)


def api_ready(raw: dict[str, Any]) -> dict[str, Any]:
    """What the API server accepts on create: no resourceVersion, uid or status."""
    metadata = {k: v for k, v in raw["metadata"].items() if k not in ("resourceVersion", "uid")}
    return {k: v for k, v in {**raw, "metadata": metadata}.items() if k != "status"}


@asynccontextmanager
async def kopf_watching(
    app: BerthApp,
    *,
    info: kopf.ConnectionInfo,
    register: Callable[[kopf.OperatorRegistry], object],
) -> AsyncIterator[None]:
    """kopf runs the handlers `register` puts on a fresh registry until the block ends."""
    registry = kopf.OperatorRegistry()
    register(registry)

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        return info

    stop = asyncio.Event()
    operator = asyncio.create_task(
        kopf.operator(
            registry=registry,
            memo=kopf.Memo(berth=app),
            clusterwide=True,
            standalone=True,
            stop_flag=stop,
        )
    )
    try:
        yield
    finally:
        stop.set()
        await asyncio.wait_for(operator, timeout=30)
