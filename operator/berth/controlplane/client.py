"""The REST client of tests, benchmarks and the demo: Berth's own API session, set up for bulk work.

There is one HTTP client in Berth, `berth.kube.api.ApiSession` (kubeconfig
reading, keep-alive connections, typed errors, pagination, watches). Tests and
benchmarks create thousands of objects over it; what they need on top is a
bound on requests in flight (the connection limit, 64 by default: more would
flood the apiserver on a 2-core machine), no total time limit per request
(a bulk create may queue behind others), and kubectl-like verbs, which read
well in test code.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from berth.kube.api import ApiError, ApiSession, JsonObject, PatchType

__all__ = ["DEFAULT_CONCURRENCY", "ApiError", "JsonObject", "KubeClient"]

DEFAULT_CONCURRENCY = 64


class KubeClient(ApiSession):
    """An ApiSession for one kubeconfig; use as `async with KubeClient.open(path) as client:`."""

    @classmethod
    def open(cls, kubeconfig: Path, *, concurrency: int = DEFAULT_CONCURRENCY) -> KubeClient:
        """Create it inside the event loop that uses it (aiohttp's rule)."""
        return cls.from_kubeconfig(kubeconfig, connection_limit=concurrency, request_timeout=None)

    async def get(self, path: str, *, params: Mapping[str, str] | None = None) -> JsonObject:
        return await self.get_json(path, params=params)

    async def create(self, path: str, body: JsonObject) -> JsonObject:
        return await self.post_json(path, body)

    async def patch(self, path: str, body: Any, *, patch_type: PatchType = "merge") -> JsonObject:
        return await self.patch_json(path, body, content_type=patch_type)

    async def delete(self, path: str, *, grace_period_seconds: int | None = None) -> Any:
        params = None
        if grace_period_seconds is not None:
            params = {"gracePeriodSeconds": str(grace_period_seconds)}
        return await self.delete_json(path, params=params)

    async def list(
        self, path: str, *, params: Mapping[str, str] | None = None, page_size: int = 1000
    ) -> tuple[list[JsonObject], str]:
        """All items of a collection, paginated; also the list's resourceVersion for watching."""
        return await self.list_json(path, params=params, page_size=page_size)
