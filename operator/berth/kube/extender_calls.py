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
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from prometheus_client import CollectorRegistry, Counter, Histogram

from berth.engine.errors import FieldError
from berth.engine.extended_decision import CandidateVictims, ExtenderFailed
from berth.engine.extenders import (
    ExtenderConfig,
    FilterResult,
    HostPriority,
    MetaVictims,
    Victims,
)
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.kube.api import ApiError, ApiSession, ApiTransportError
from berth.kube.extender_client import Answered, ExtenderClient, ExtenderError
from berth.kube.metrics import exponential_buckets

__all__ = ["ExtenderMetrics", "HttpExtenders", "api_pod_reader"]

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


# Reads a pod from the API server (namespace, name); None when it is gone.
PodReader = Callable[[str, str], Awaitable[Mapping[str, Any] | None]]


def api_pod_reader(session: ApiSession) -> PodReader:
    """Reads pods from the API server; a pod it cannot read (gone, or no answer) is None."""

    async def read(namespace: str, name: str) -> Mapping[str, Any] | None:
        try:
            return await session.get_json(f"/api/v1/namespaces/{namespace}/pods/{name}")
        except (ApiError, ApiTransportError):
            return None

    return read


class HttpExtenders:
    """Implements berth.scheduling.ports.ExtenderCalls; `close()` when done.

    An extender without a node cache is sent preemption victims whole. Berth keeps
    the object as read only for pods not yet assigned (the many assigned pods keep
    no copy), so victims are read from the API server with `read_pod`.
    """

    def __init__(
        self, metrics: ExtenderMetrics | None = None, *, read_pod: PodReader | None = None
    ) -> None:
        self._metrics = metrics
        self._read_pod = read_pod
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

    async def _timed(
        self,
        extender: ExtenderConfig,
        verb: str,
        call: Callable[[ExtenderClient], Awaitable[Answered[T] | ExtenderError]],
    ) -> T | ExtenderFailed:
        client = self._client(extender)
        if isinstance(client, ExtenderFailed):
            return client
        started = time.monotonic()
        reply = await call(client)
        self._observe(extender, verb, started, reply)
        return _answer(reply)

    async def filter(
        self, extender: ExtenderConfig, pod: Pod, nodes: Sequence[Node]
    ) -> FilterResult | ExtenderFailed:
        sent = [_source(node) for node in nodes]
        return await self._timed(
            extender, "filter", lambda client: client.filter(pod=_source(pod), nodes=sent)
        )

    async def prioritize(
        self, extender: ExtenderConfig, pod: Pod, nodes: Sequence[Node]
    ) -> tuple[HostPriority, ...] | ExtenderFailed:
        sent = [_source(node) for node in nodes]
        return await self._timed(
            extender, "prioritize", lambda client: client.prioritize(pod=_source(pod), nodes=sent)
        )

    async def bind(
        self, extender: ExtenderConfig, pod: Pod, node_name: str
    ) -> ExtenderFailed | None:
        bound = await self._timed(
            extender,
            "bind",
            lambda client: client.bind(
                namespace=pod.namespace, name=pod.name, uid=pod.uid, node=node_name
            ),
        )
        return bound if isinstance(bound, ExtenderFailed) else None

    async def preempt(
        self, extender: ExtenderConfig, pod: Pod, victims: Mapping[str, CandidateVictims]
    ) -> dict[str, MetaVictims] | ExtenderFailed:
        sent: dict[str, Victims] = {}
        for node_name, found in victims.items():
            pods = []
            for victim in found.pods:
                whole = await self._whole(victim, extender.node_cache_capable)
                if isinstance(whole, ExtenderFailed):
                    return whole
                pods.append(whole)
            sent[node_name] = Victims(tuple(pods), found.pdb_violations)
        return await self._timed(
            extender, "preempt", lambda client: client.preempt(pod=_source(pod), victims=sent)
        )

    async def _whole(self, victim: Pod, by_uid: bool) -> Mapping[str, Any] | ExtenderFailed:
        if by_uid:
            return {"metadata": {"uid": victim.uid}}  # all a node-caching extender is sent
        if victim.source is not None:
            return victim.source
        read = await self._read_pod(victim.namespace, victim.name) if self._read_pod else None
        if read is None:
            return ExtenderFailed(f"cannot read preemption victim {victim.key} to send it")
        return read


def _answer(reply: Answered[T] | ExtenderError) -> T | ExtenderFailed:
    if isinstance(reply, ExtenderError):
        return ExtenderFailed(reply.message)
    return reply.value
