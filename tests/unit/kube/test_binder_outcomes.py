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
            ApiTransportError("POST ...: ClientConnectorError: refused", possibly_sent=False),
            BindOutcome.FAILED,
            "POST ...: ClientConnectorError: refused",
        ),
    ],
    ids=["created", "gone", "server-error", "forbidden", "never-sent"],
)
async def test_answers_map_to_outcomes_and_never_raise(
    failure: Exception | None, outcome: BindOutcome, message: str
) -> None:
    def responder(call: Call) -> Any:
        if call.method == "GET":
            return live_pod("")  # read back after a 5xx: not bound
        if failure is not None:
            raise failure
        return {"kind": "Status", "status": "Success", "code": 201}

    session = FakeSession(responder=responder)
    binder = ApiBinder(session, retry_delays=())  # type: ignore[arg-type]

    result = await binder.bind(make_pod("web", "shop").uid("uid-web").build(), "n1")

    assert (result.outcome, result.message) == (outcome, message)
    [call] = session.of("POST")
    assert call.path == "/api/v1/namespaces/shop/pods/web/binding"


LOST = ApiTransportError("POST ...: ServerDisconnectedError: Server disconnected")
CONFLICT = api_error(409, "Conflict", 'pod web is already assigned to node "n1"')
DOWN = ApiTransportError("GET ...: ClientConnectorError: refused", possibly_sent=False)


def live_pod(node: str = "", uid: str = "uid-web") -> dict[str, Any]:
    return {"metadata": {"name": "web", "uid": uid}, "spec": {"nodeName": node}}


@pytest.mark.parametrize(
    ("post_failure", "reads", "outcome", "message"),
    [
        (LOST, [DOWN, DOWN, live_pod("n1")], BindOutcome.BOUND, ""),
        (LOST, [live_pod("")], BindOutcome.FAILED, str(LOST)),
        (LOST, [live_pod("n2")], BindOutcome.CONFLICT, str(LOST)),
        (LOST, [live_pod("n1", uid="uid-other")], BindOutcome.GONE, str(LOST)),
        (LOST, [api_error(404, "NotFound", "gone")], BindOutcome.GONE, "gone"),
        (LOST, [DOWN] * 4, BindOutcome.FAILED, str(LOST)),
        (
            LOST,
            [api_error(503, "ServiceUnavailable", "starting"), live_pod("n1")],
            BindOutcome.BOUND,
            "",
        ),
        (LOST, [api_error(403, "Forbidden", "rbac"), live_pod("n1")], BindOutcome.BOUND, ""),
        (LOST, [api_error(401, "Unauthorized", "who")], BindOutcome.FAILED, str(LOST)),
        (CONFLICT, [live_pod("n1")], BindOutcome.BOUND, ""),
        (CONFLICT, [live_pod("n2")], BindOutcome.CONFLICT, CONFLICT.message),
        (CONFLICT, [live_pod("")], BindOutcome.CONFLICT, CONFLICT.message),
        (CONFLICT, [live_pod("", uid="uid-other")], BindOutcome.GONE, CONFLICT.message),
        (CONFLICT, [DOWN], BindOutcome.CONFLICT, CONFLICT.message),
    ],
    ids=[
        "lost-answer-had-landed",
        "lost-answer-had-not-landed",
        "lost-answer-bound-elsewhere",
        "lost-answer-pod-recreated",
        "lost-answer-pod-deleted",
        "api-never-answers",
        "api-starting-then-answers",
        "api-rbac-not-ready-then-answers",
        "read-unauthorized",
        "conflict-is-our-earlier-binding",
        "conflict-with-another-binding",
        "conflict-not-bound",
        "conflict-pod-recreated",
        "conflict-unverifiable",
    ],
)
async def test_a_binding_that_may_have_landed_is_checked_on_the_pod(
    post_failure: Exception, reads: list[Any], outcome: BindOutcome, message: str
) -> None:
    """A lost answer is read back (again while the API is away); a 409 is read back once."""
    answers = iter(reads)

    def responder(call: Call) -> Any:
        if call.method == "POST":
            raise post_failure
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    session = FakeSession(responder=responder)
    binder = ApiBinder(session, retry_delays=(0.0, 0.0, 0.0))  # type: ignore[arg-type]

    result = await binder.bind(make_pod("web", "shop").uid("uid-web").build(), "n1")

    assert (result.outcome, result.message) == (outcome, message)
    gets = session.of("GET")
    assert {call.path for call in gets} == {"/api/v1/namespaces/shop/pods/web"}
    assert len(gets) == len(reads), "reads stop at the first answer, or when delays run out"


async def test_binding_duration_and_in_flight_are_recorded() -> None:
    clock = FakeClock()
    metrics = SchedulerMetrics()

    def responder(call: Call) -> Any:
        assert metrics.registry.get_sample_value("berth_bindings_in_flight") == 1
        if call.method == "GET":
            return live_pod("n2")
        clock.advance(0.003)
        raise api_error(409, "Conflict", "already assigned")

    binder = ApiBinder(FakeSession(responder=responder), metrics=metrics, clock=clock)  # type: ignore[arg-type]
    await binder.bind(make_pod("web").uid("uid-web").build(), "n1")

    sample = metrics.registry.get_sample_value
    assert sample("berth_bindings_in_flight") == 0
    assert sample("berth_binding_duration_seconds_count", {"result": "conflict"}) == 1
    assert (
        sample("berth_binding_duration_seconds_bucket", {"result": "conflict", "le": "0.004"}) == 1
    )
    assert (
        sample("berth_binding_duration_seconds_bucket", {"result": "conflict", "le": "0.002"}) == 0
    )


RBAC_NOT_READY = api_error(403, "Forbidden", "cannot create resource pods/binding")


@pytest.mark.parametrize(
    ("refusal", "refusals", "outcome", "posts"),
    [
        (DOWN, 2, BindOutcome.BOUND, 3),
        (DOWN, 10, BindOutcome.FAILED, 4),
        (RBAC_NOT_READY, 1, BindOutcome.BOUND, 2),
        (api_error(429, "TooManyRequests", "slow down"), 1, BindOutcome.BOUND, 2),
    ],
    ids=["api-back-in-time", "api-away-too-long", "rbac-not-ready-yet", "throttled"],
)
async def test_a_binding_refused_before_it_was_carried_out_is_posted_again(
    refusal: Exception, refusals: int, outcome: BindOutcome, posts: int
) -> None:
    """It surely had no effect, so it is repeated while the API server is away; no reads."""
    left = {"refusals": refusals}

    def responder(call: Call) -> Any:
        if left["refusals"]:
            left["refusals"] -= 1
            raise refusal
        return {"kind": "Status", "status": "Success", "code": 201}

    session = FakeSession(responder=responder)
    binder = ApiBinder(session, retry_delays=(0.0, 0.0, 0.0))  # type: ignore[arg-type]

    result = await binder.bind(make_pod("web", "shop").uid("uid-web").build(), "n1")

    assert result.outcome is outcome
    assert len(session.of("POST")) == posts
    assert session.of("GET") == []
