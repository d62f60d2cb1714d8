"""HealthServer: /healthz, /livez, /readyz, /metrics and /configz over real HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from berth.kube.metrics import SchedulerMetrics
from berth.kube.server import HealthServer


class State:
    ready = False
    profiles: dict[str, Any] = {"profiles": [{"schedulerName": "berth"}]}


@pytest.fixture
async def client() -> AsyncIterator[tuple[TestClient[Any, Any], State, SchedulerMetrics]]:
    state = State()
    metrics = SchedulerMetrics()
    server = HealthServer(
        "127.0.0.1",
        0,
        metrics=metrics,
        ready=lambda: state.ready,
        configz=lambda: state.profiles,
        not_ready_reason=lambda: "informers not synced",
    )
    async with TestClient(TestServer(server.build_app())) as test_client:
        yield test_client, state, metrics


async def test_healthz_and_livez_answer_ok(client: Any) -> None:
    test_client, _, _ = client
    for path in ("/healthz", "/livez"):
        response = await test_client.get(path)
        assert (response.status, await response.text()) == (200, "ok")


async def test_readyz_follows_ready_with_a_reason(client: Any) -> None:
    test_client, state, _ = client
    response = await test_client.get("/readyz")
    assert (response.status, await response.text()) == (503, "not ready: informers not synced")

    state.ready = True  # e.g. a paused standby whose caches are synced
    response = await test_client.get("/readyz")
    assert (response.status, await response.text()) == (200, "ok")


async def test_metrics_is_prometheus_text(client: Any) -> None:
    test_client, _, metrics = client
    metrics.observe_attempt("unschedulable", "berth", 0.01)

    response = await test_client.get("/metrics")

    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    text = await response.text()
    assert 'scheduler_schedule_attempts_total{profile="berth",result="unschedulable"} 1.0' in text


async def test_configz_dumps_the_live_profiles(client: Any) -> None:
    test_client, state, _ = client
    state.profiles = {"profiles": [{"schedulerName": "berth"}, {"schedulerName": "batch"}]}

    response = await test_client.get("/configz")

    assert response.status == 200
    assert await response.json() == state.profiles


async def test_start_binds_a_real_port_and_stop_releases_it() -> None:
    server = HealthServer(
        "127.0.0.1", 0, metrics=SchedulerMetrics(), ready=lambda: True, configz=dict
    )
    await server.start()
    try:
        assert server.port > 0
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{server.port}/readyz") as response,
        ):
            assert response.status == 200
    finally:
        await server.stop()
