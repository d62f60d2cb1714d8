"""The scheduler's `ExtenderCalls` port over HTTP: one kept-alive client per extender, timed.

kube-scheduler builds one HTTP client per configured extender when it starts and
keeps its connections open. Berth's profiles come and go at run time, so clients
are made on first use and kept per extender configuration: a profile swapped for a
new version with the same extender keeps its connections. Every call is timed and
every failure counted, per extender and verb, under `berth_` (kube-scheduler has
no per-extender metrics to copy).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from prometheus_client import CollectorRegistry, Counter, Histogram

from berth.engine.errors import FieldError
from berth.engine.extended_decision import ExtenderFailed
from berth.engine.extenders import ExtenderConfig, FilterResult, HostPriority
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.kube.extender_client import Answered, ExtenderClient, ExtenderError
from berth.kube.metrics import exponential_buckets

__all__ = ["ExtenderMetrics", "HttpExtenders"]

T = TypeVar("T")


class ExtenderMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.duration = Histogram(
            "berth_extender_request_duration_seconds",
            "Duration of calls to scheduler extenders in seconds, by extender (its urlPrefix), "
            "verb and result ('success' or 'error').",
            ["extender", "verb", "result"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=registry,
        )
        self.errors = Counter(
            "berth_extender_errors",
            "Failed calls to scheduler extenders, by extender, verb and kind of failure "
            "(transport, timeout, http-status, bad-reply, error-field).",
            ["extender", "verb", "kind"],
            registry=registry,
        )


def _source(obj: Pod | Node) -> Mapping[str, Any]:
    if obj.source is None:
        # Only objects read from the API (or a simulate input) can be sent; nothing else
        # reaches a decision, so this is a bug, and it costs that one attempt.
        raise ValueError(f"{type(obj).__name__} {obj.name} has no source object to send")
    return obj.source


class HttpExtenders:
    """Implements berth.scheduling.ports.ExtenderCalls; `close()` when done."""

    def __init__(self, metrics: ExtenderMetrics | None = None) -> None:
        self._metrics = metrics
        self._clients: dict[ExtenderConfig, ExtenderClient] = {}

    def _client(self, extender: ExtenderConfig) -> ExtenderClient | ExtenderFailed:
        client = self._clients.get(extender)
        if client is None:
            try:
                client = ExtenderClient(extender)
            except FieldError as bad:
                # `berth run` checks TLS material when it reads the configuration; a file
                # that became unreadable since (or a simulated profile) costs the call.
                return ExtenderFailed(f"extender {extender.name}: {bad}")
            self._clients[extender] = client
        return client

    async def close(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()

    def _observe(self, extender: ExtenderConfig, verb: str, started: float, reply: object) -> None:
        metrics = self._metrics
        if metrics is None:
            return
        failed = isinstance(reply, ExtenderError)
        metrics.duration.labels(extender.name, verb, "error" if failed else "success").observe(
            time.monotonic() - started
        )
        if isinstance(reply, ExtenderError):
            metrics.errors.labels(extender.name, verb, reply.kind.value).inc()

    async def filter(
        self, extender: ExtenderConfig, pod: Pod, nodes: Sequence[Node]
    ) -> FilterResult | ExtenderFailed:
        client = self._client(extender)
        if isinstance(client, ExtenderFailed):
            return client
        started = time.monotonic()
        reply = await client.filter(pod=_source(pod), nodes=[_source(node) for node in nodes])
        self._observe(extender, "filter", started, reply)
        return _answer(reply)

    async def prioritize(
        self, extender: ExtenderConfig, pod: Pod, nodes: Sequence[Node]
    ) -> tuple[HostPriority, ...] | ExtenderFailed:
        client = self._client(extender)
        if isinstance(client, ExtenderFailed):
            return client
        started = time.monotonic()
        reply = await client.prioritize(pod=_source(pod), nodes=[_source(node) for node in nodes])
        self._observe(extender, "prioritize", started, reply)
        return _answer(reply)

    async def bind(
        self, extender: ExtenderConfig, pod: Pod, node_name: str
    ) -> ExtenderFailed | None:
        client = self._client(extender)
        if isinstance(client, ExtenderFailed):
            return client
        started = time.monotonic()
        reply = await client.bind(
            namespace=pod.namespace, name=pod.name, uid=pod.uid, node=node_name
        )
        self._observe(extender, "bind", started, reply)
        return ExtenderFailed(reply.message) if isinstance(reply, ExtenderError) else None


def _answer(reply: Answered[T] | ExtenderError) -> T | ExtenderFailed:
    if isinstance(reply, ExtenderError):
        return ExtenderFailed(reply.message)
    return reply.value
