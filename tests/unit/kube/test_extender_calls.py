"""HttpExtenders, the scheduler's extender port over HTTP: one kept-alive client per extender,
the objects sent as they were read, and every call timed and every failure counted."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry

from berth.engine.extended_decision import ExtenderFailed
from berth.engine.extenders import ExtenderConfig, FilterResult, HostPriority
from berth.kube.extender_calls import ExtenderMetrics, HttpExtenders
from tests.builders import make_node, make_pod
from tests.extender_server import ExtenderScript, ExtenderServer, VerbScript

NODES = [make_node(name).build() for name in ("a", "b")]


@pytest.fixture
def server() -> Iterator[ExtenderServer]:
    with ExtenderServer(ExtenderScript(failed={"a": "no"}, scores={"b": 7})) as running:
        yield running


def _sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    value = registry.get_sample_value(name, labels)
    return value or 0.0


async def test_calls_reuse_one_connection_and_are_timed(server: ExtenderServer) -> None:
    registry = CollectorRegistry()
    calls = HttpExtenders(ExtenderMetrics(registry))
    extender = ExtenderConfig(
        url_prefix=server.url, filter_verb="filter", prioritize_verb="prioritize", weight=1
    )
    pod = make_pod("p").build()
    try:
        filtered = await calls.filter(extender, pod, NODES)
        scored = await calls.prioritize(extender, pod, NODES)
        again = await calls.filter(extender, pod, NODES)
    finally:
        await calls.close()
    assert isinstance(filtered, FilterResult) and filtered.node_names == ("b",)
    assert filtered == again
    assert scored == (HostPriority("a", 0), HostPriority("b", 7))
    assert server.connections == 1
    # The pod and the nodes went out as they were read (informer shape: no kind).
    (body, _) = server.bodies("filter")
    assert body["Pod"]["metadata"]["name"] == "p" and "kind" not in body["Pod"]
    assert [node["metadata"]["name"] for node in body["Nodes"]["items"]] == ["a", "b"]
    labels = {"extender": server.url, "result": "success"}
    count = "berth_extender_request_duration_seconds_count"
    assert _sample(registry, count, verb="filter", **labels) == 2
    assert _sample(registry, count, verb="prioritize", **labels) == 1


async def test_a_failure_is_answered_in_kube_schedulers_words_and_counted(
    server: ExtenderServer,
) -> None:
    registry = CollectorRegistry()
    calls = HttpExtenders(ExtenderMetrics(registry))
    server.script.verbs["bind"] = VerbScript(status=500)
    extender = ExtenderConfig(url_prefix=server.url, bind_verb="bind")
    try:
        failed = await calls.bind(extender, make_pod("p").build(), "a")
    finally:
        await calls.close()
    assert failed == ExtenderFailed(f"failed bind with extender at URL {server.url}/bind, code 500")
    errors = "berth_extender_errors_total"
    assert _sample(registry, errors, extender=server.url, verb="bind", kind="http-status") == 1
