"""ApiBinder: the Binding body kube-scheduler posts, and how each answer is classified."""

from __future__ import annotations

from typing import Any

import pytest

from berth.kube.api import ApiTransportError
from berth.kube.binder import ApiBinder, binding_body, binding_path
from berth.kube.metrics import SchedulerMetrics
from berth.scheduling.ports import BindOutcome
from tests.builders import make_pod
from tests.unit.kube.fakes import Call, FakeClock, FakeSession, api_error


def test_binding_carries_name_namespace_uid_and_target_node() -> None:
    pod = make_pod("web", "shop").uid("1234-abcd").build()

    assert binding_path(pod) == "/api/v1/namespaces/shop/pods/web/binding"
    assert binding_body(pod, "node-3") == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "web", "namespace": "shop", "uid": "1234-abcd"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "node-3"},
    }


@pytest.mark.parametrize(
    ("failure", "outcome", "message"),
    [
        (None, BindOutcome.BOUND, ""),
        (
            api_error(409, "Conflict", 'pod web is already assigned to node "n1"'),
            BindOutcome.CONFLICT,
            'pod web is already assigned to node "n1"',
        ),
        (
            api_error(404, "NotFound", 'pods "web" not found'),
            BindOutcome.GONE,
            'pods "web" not found',
        ),
        (api_error(500, "InternalError", "etcd timeout"), BindOutcome.FAILED, "etcd timeout"),
        (
            api_error(403, "Forbidden", "cannot create pods/binding"),
            BindOutcome.FAILED,
            "cannot create pods/binding",
        ),
        (
            ApiTransportError("POST ...: ClientConnectorError: refused"),
            BindOutcome.FAILED,
            "POST ...: ClientConnectorError: refused",
        ),
    ],
    ids=["created", "conflict", "gone", "server-error", "forbidden", "network"],
)
async def test_answers_map_to_outcomes_and_never_raise(
    failure: Exception | None, outcome: BindOutcome, message: str
) -> None:
    def responder(call: Call) -> Any:
        if failure is not None:
            raise failure
        return {"kind": "Status", "status": "Success", "code": 201}

    session = FakeSession(responder=responder)
    binder = ApiBinder(session)  # type: ignore[arg-type]

    result = await binder.bind(make_pod("web", "shop").build(), "n1")

    assert (result.outcome, result.message) == (outcome, message)
    [call] = session.calls
    assert call.path == "/api/v1/namespaces/shop/pods/web/binding"


async def test_binding_duration_and_in_flight_are_recorded() -> None:
    clock = FakeClock()
    metrics = SchedulerMetrics()

    def responder(call: Call) -> Any:
        assert metrics.registry.get_sample_value("berth_bindings_in_flight") == 1
        clock.advance(0.003)
        raise api_error(409, "Conflict", "already assigned")

    binder = ApiBinder(FakeSession(responder=responder), metrics=metrics, clock=clock)  # type: ignore[arg-type]
    await binder.bind(make_pod("web").build(), "n1")

    sample = metrics.registry.get_sample_value
    assert sample("berth_bindings_in_flight") == 0
    assert sample("berth_binding_duration_seconds_count", {"result": "conflict"}) == 1
    assert (
        sample("berth_binding_duration_seconds_bucket", {"result": "conflict", "le": "0.004"}) == 1
    )
    assert (
        sample("berth_binding_duration_seconds_bucket", {"result": "conflict", "le": "0.002"}) == 0
    )
