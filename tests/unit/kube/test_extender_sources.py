"""Objects as read are kept only for extenders that are sent them, and read again when missing.

`berth run` parses every pod and node; the object as read is kept beside the parsed
model only while a live profile has an extender it would go to (pending pods an
extender is interested in; nodes when an extender without a node cache filters or
prioritizes). An object parsed before such a profile came is read from the API
server when an extender needs it, and remembered if it is the version held.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from berth.engine.extended_decision import ExtenderFailed
from berth.engine.extenders import ExtenderConfig, FilterResult, ManagedResource
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.kube.app import BerthApp
from berth.kube.extender_calls import HttpExtenders
from tests.builders import make_node, make_pod, set_path
from tests.extender_server import ExtenderScript, ExtenderServer
from tests.unit.engine.fakes import framework_with
from tests.unit.kube.fakes import make_app

GPU = "example.com/gpu"
WHOLE_NODES = ExtenderConfig(url_prefix="http://x", filter_verb="filter")
CACHING = ExtenderConfig(url_prefix="http://x", filter_verb="filter", node_cache_capable=True)
GPU_ONLY = ExtenderConfig(
    url_prefix="http://x", filter_verb="filter", managed_resources=(ManagedResource(GPU),)
)
BINDING_ONLY = ExtenderConfig(url_prefix="http://x", bind_verb="bind")


def _versioned(raw: dict[str, Any], version: str = "7") -> dict[str, Any]:
    set_path(raw, "metadata.resourceVersion", version)
    return raw


def _raw_node(name: str = "a", version: str = "7") -> dict[str, Any]:
    return _versioned(make_node(name).obj(), version)


def _raw_pod(name: str = "p", *, gpu: bool = False, version: str = "7") -> dict[str, Any]:
    builder = make_pod(name).scheduler("test").uid(f"uid-{name}").req(cpu="1")
    if gpu:
        builder = builder.req(example_com__gpu=1)
    return _versioned(builder.obj(), version)


@pytest.fixture
def app() -> BerthApp:
    return make_app()


def _held(app: BerthApp) -> tuple[Node, Pod, Pod]:
    app.on_node_event("ADDED", _raw_node())
    app.on_pod_event("ADDED", _raw_pod("plain"))
    app.on_pod_event("ADDED", _raw_pod("gpu", gpu=True))
    node = app.scheduler.cache.cluster.node_named("a")
    plain, gpu = (app.scheduler.queue.get(f"uid-{name}") for name in ("plain", "gpu"))
    assert node is not None and plain is not None and gpu is not None
    return node, plain.pod, gpu.pod


@pytest.mark.parametrize(
    ("extenders", "node_kept", "plain_kept", "gpu_kept"),
    [
        ((), False, False, False),
        ((WHOLE_NODES,), True, True, True),
        ((CACHING,), False, True, True),
        ((GPU_ONLY,), True, False, True),
        ((BINDING_ONLY,), False, True, True),
    ],
    ids=["no-extender", "whole-nodes", "node-cache", "gpu-only", "binder-only"],
)
def test_the_object_as_read_is_kept_only_for_an_extender_that_is_sent_it(
    app: BerthApp,
    extenders: tuple[ExtenderConfig, ...],
    node_kept: bool,
    plain_kept: bool,
    gpu_kept: bool,
) -> None:
    app.scheduler.set_profile(framework_with(extenders=extenders))
    node, plain, gpu = _held(app)
    assert (node.source is not None, plain.source is not None, gpu.source is not None) == (
        node_kept,
        plain_kept,
        gpu_kept,
    )


def test_a_bound_pod_keeps_no_copy_even_for_extenders(app: BerthApp) -> None:
    app.scheduler.set_profile(framework_with(extenders=(WHOLE_NODES,)))
    raw = _raw_pod("bound")
    set_path(raw, "spec.nodeName", "a")
    app.on_pod_event("ADDED", raw)
    held = app.scheduler.cache.cluster.pod("uid-bound")
    assert held is not None and held.source is None


# ------------------------------------------------------------------ read again when missing


@pytest.fixture
def server() -> Iterator[ExtenderServer]:
    with ExtenderServer(ExtenderScript()) as running:
        yield running


class Api:
    """Objects by API path, as a reader sees them; every read is counted."""

    def __init__(self, objects: Mapping[str, dict[str, Any]]) -> None:
        self.objects = dict(objects)
        self.reads: list[str] = []

    async def read(self, path: str) -> Mapping[str, Any] | None:
        self.reads.append(path)
        return self.objects.get(path)


def _parsed_without_sources() -> tuple[Pod, list[Node]]:
    pod = Pod.from_dict(_raw_pod(), keep_source=False)
    nodes = [Node.from_dict(_raw_node(name), keep_source=False) for name in ("a", "b")]
    return pod, nodes


async def test_missing_objects_are_read_sent_and_remembered_at_the_held_version(
    server: ExtenderServer,
) -> None:
    pod, nodes = _parsed_without_sources()
    api = Api(
        {
            "/api/v1/namespaces/default/pods/p": _raw_pod(),
            "/api/v1/nodes/a": _raw_node("a"),
            "/api/v1/nodes/b": _raw_node("b", version="8"),  # changed since it was parsed
        }
    )
    calls = HttpExtenders(read=api.read)
    extender = ExtenderConfig(url_prefix=server.url, filter_verb="filter")
    try:
        first = await calls.filter(extender, pod, nodes)
        second = await calls.filter(extender, pod, nodes)
    finally:
        await calls.close()
    assert isinstance(first, FilterResult) and first.node_names == ("a", "b")
    assert first == second
    (body, _) = server.bodies("filter")
    assert body["Pod"]["metadata"]["name"] == "p"
    assert [node["metadata"]["resourceVersion"] for node in body["Nodes"]["items"]] == ["7", "8"]
    # The pod and node a are held now; node b, read at a newer version, is read again.
    assert pod.source is not None and nodes[0].source is not None and nodes[1].source is None
    assert api.reads == [
        "/api/v1/namespaces/default/pods/p",
        "/api/v1/nodes/a",
        "/api/v1/nodes/b",
        "/api/v1/nodes/b",
    ]


async def test_a_node_caching_extender_is_sent_names_without_reading_nodes(
    server: ExtenderServer,
) -> None:
    pod, nodes = _parsed_without_sources()
    api = Api({"/api/v1/namespaces/default/pods/p": _raw_pod()})
    calls = HttpExtenders(read=api.read)
    extender = ExtenderConfig(url_prefix=server.url, filter_verb="filter", node_cache_capable=True)
    try:
        filtered = await calls.filter(extender, pod, nodes)
    finally:
        await calls.close()
    assert isinstance(filtered, FilterResult) and filtered.node_names == ("a", "b")
    (body,) = server.bodies("filter")
    assert body["NodeNames"] == ["a", "b"]
    assert api.reads == ["/api/v1/namespaces/default/pods/p"]


async def test_an_object_that_cannot_be_read_fails_that_call_naming_it(
    server: ExtenderServer,
) -> None:
    pod, nodes = _parsed_without_sources()
    calls = HttpExtenders(read=Api({"/api/v1/namespaces/default/pods/p": _raw_pod()}).read)
    extender = ExtenderConfig(url_prefix=server.url, prioritize_verb="prioritize", weight=1)
    try:
        answer = await calls.prioritize(extender, pod, nodes)
    finally:
        await calls.close()
    assert answer == ExtenderFailed("cannot read node a to send it")
    assert server.bodies("prioritize") == []
