"""The scheduler's `ExtenderCalls` port over HTTP: one kept-alive client per extender, timed.

kube-scheduler builds one HTTP client per configured extender when it starts and
keeps its connections open. Berth's profiles come and go at run time, so clients
are made on first use and kept per extender configuration: a profile swapped for a
new version with the same extender keeps its connections. Every call is timed and
every failure counted, per extender and verb, under `berth_` (kube-scheduler has
no per-extender metrics to copy).
"""

from __future__ import annotations

import asyncio
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

__all__ = ["ExtenderMetrics", "HttpExtenders", "ObjectReader", "api_object_reader"]

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


# Reads one object from the API server by its path; None when it is gone or unreadable.
ObjectReader = Callable[[str], Awaitable[Mapping[str, Any] | None]]


def api_object_reader(session: ApiSession) -> ObjectReader:
    """Reads objects from the API server; one it cannot read (gone, or no answer) is None."""

    async def read(path: str) -> Mapping[str, Any] | None:
        try:
            return await session.get_json(path)
        except (ApiError, ApiTransportError):
            return None

    return read


def _path_of(obj: Pod | Node) -> str:
    if isinstance(obj, Pod):
        return f"/api/v1/namespaces/{obj.namespace}/pods/{obj.name}"
    return f"/api/v1/nodes/{obj.name}"


def _by_name(node: Node) -> Mapping[str, Any]:
    # All a node-caching extender is sent of a node (encode_extender_args reads the name).
    return {"metadata": {"name": node.name}}


class HttpExtenders:
    """Implements berth.scheduling.ports.ExtenderCalls; `close()` when done.

    Objects are sent as read. `berth run` keeps that copy only where an extender needs
    it (berth.scheduling.source_retention): never for assigned pods (preemption victims
    sent whole), and not for objects parsed before a profile that needs them was
    added. Those are read from the API server with `read`, and remembered when the
    read is the version held, as kube-scheduler sends its informer's copy.
    """

    def __init__(
        self, metrics: ExtenderMetrics | None = None, *, read: ObjectReader | None = None
    ) -> None:
        self._metrics = metrics
        self._read = read
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
        sent = await self._sources(pod, nodes, by_name=extender.node_cache_capable)
        if isinstance(sent, ExtenderFailed):
            return sent
        whole_pod, whole_nodes = sent
        return await self._timed(
            extender, "filter", lambda client: client.filter(pod=whole_pod, nodes=whole_nodes)
        )

    async def prioritize(
        self, extender: ExtenderConfig, pod: Pod, nodes: Sequence[Node]
    ) -> tuple[HostPriority, ...] | ExtenderFailed:
        sent = await self._sources(pod, nodes, by_name=extender.node_cache_capable)
        if isinstance(sent, ExtenderFailed):
            return sent
        whole_pod, whole_nodes = sent
        return await self._timed(
            extender,
            "prioritize",
            lambda client: client.prioritize(pod=whole_pod, nodes=whole_nodes),
        )

    async def _sources(
        self, pod: Pod, nodes: Sequence[Node], *, by_name: bool
    ) -> tuple[Mapping[str, Any], list[Mapping[str, Any]]] | ExtenderFailed:
        whole_pod = await self._whole(pod)
        if isinstance(whole_pod, ExtenderFailed):
            return whole_pod
        if by_name:
            return whole_pod, [_by_name(node) for node in nodes]
        missing = [node for node in nodes if node.source is None]
        read: dict[str, Mapping[str, Any]] = {}
        for node, whole in zip(
            missing, await asyncio.gather(*(self._whole(node) for node in missing)), strict=True
        ):
            if isinstance(whole, ExtenderFailed):
                return whole
            read[node.name] = whole
        return whole_pod, [
            read[node.name] if node.source is None else node.source for node in nodes
        ]

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
        whole_pod = await self._whole(pod)
        if isinstance(whole_pod, ExtenderFailed):
            return whole_pod
        sent: dict[str, Victims] = {}
        for node_name, found in victims.items():
            pods = []
            for victim in found.pods:
                # All a node-caching extender is sent of a victim is its UID.
                whole = (
                    {"metadata": {"uid": victim.uid}}
                    if extender.node_cache_capable
                    else await self._whole(victim)
                )
                if isinstance(whole, ExtenderFailed):
                    return whole
                pods.append(whole)
            sent[node_name] = Victims(tuple(pods), found.pdb_violations)
        return await self._timed(
            extender, "preempt", lambda client: client.preempt(pod=whole_pod, victims=sent)
        )

    async def _whole(self, obj: Pod | Node) -> Mapping[str, Any] | ExtenderFailed:
        """`obj` as read: the copy it keeps, else read again (and kept if the same version)."""
        if obj.source is not None:
            return obj.source
        read = await self._read(_path_of(obj)) if self._read is not None else None
        if read is None:
            kind = type(obj).__name__.lower()
            return ExtenderFailed(f"cannot read {kind} {_key_of(obj)} to send it")
        obj.remember_source(read)
        return read


def _key_of(obj: Pod | Node) -> str:
    return obj.key if isinstance(obj, Pod) else obj.name


def _answer(reply: Answered[T] | ExtenderError) -> T | ExtenderFailed:
    if isinstance(reply, ExtenderError):
        return ExtenderFailed(reply.message)
    return reply.value
