"""The HTTP endpoints kube-scheduler serves, for probes, Prometheus and humans.

`/healthz` and `/livez` answer as long as the event loop runs (the handler
running is the proof). `/readyz` reflects `ready()`: caches synced, whether
or not this replica leads — a paused standby with synced caches is ready, as
a standby kube-scheduler is. `/metrics` is the Prometheus text format of
Berth's own registry; `/configz` dumps the live profiles as JSON.
Plain HTTP: it runs next to the pod's probes, behind the metrics Service.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from berth.kube.metrics import CONTENT_TYPE_LATEST, SchedulerMetrics

__all__ = ["HealthServer"]


class HealthServer:
    """`/metrics`, `/healthz`, `/livez`, `/readyz`, `/configz` on one aiohttp site."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        metrics: SchedulerMetrics,
        ready: Callable[[], bool],
        configz: Callable[[], dict[str, Any]],
        not_ready_reason: Callable[[], str] | None = None,
    ) -> None:
        self.host = host
        self._requested_port = port
        self._metrics = metrics
        self._ready = ready
        self._configz = configz
        self._not_ready_reason = not_ready_reason
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None

    def build_app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/livez", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/metrics", self._metrics_page)
        app.router.add_get("/configz", self._configz_page)
        return app

    async def start(self) -> None:
        runner = web.AppRunner(self.build_app(), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self._requested_port)
        await site.start()
        self._runner, self._site = runner, site

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        self._runner = self._site = None

    @property
    def port(self) -> int:
        """The bound port (useful when constructed with port 0)."""
        if self._runner is None:
            return self._requested_port
        for address in self._runner.addresses:
            if isinstance(address, tuple) and len(address) >= 2:
                return int(address[1])
        return self._requested_port

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _readyz(self, request: web.Request) -> web.Response:
        if self._ready():
            return web.Response(text="ok")
        reason = self._not_ready_reason() if self._not_ready_reason else "caches not synced"
        return web.Response(status=503, text=f"not ready: {reason}")

    async def _metrics_page(self, request: web.Request) -> web.Response:
        response = web.Response(body=self._metrics.render())
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response

    async def _configz_page(self, request: web.Request) -> web.Response:
        return web.Response(
            text=json.dumps(self._configz(), indent=2, sort_keys=True, default=str),
            content_type="application/json",
        )
