"""ApiReporter: the events and the PodScheduled condition kube-scheduler writes, aggregated.

Driven with a fake clock and a fake session: `drain()` sends whatever is due
"now", so each step of a series can be observed without sleeping.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from berth.engine.model.pod import Pod
from berth.kube.api import ApiTransportError
from berth.kube.reporting import (
    NOTE_LENGTH_LIMIT,
    ApiReporter,
    TokenBucket,
    condition_patch,
    truncate_note,
)
from berth.scheduling.ports import SchedulingReason
from tests.builders import make_pod
from tests.unit.kube.fakes import Call, FakeClock, FakeSession, FakeWallClock, api_error

UNSCHEDULABLE = SchedulingReason.UNSCHEDULABLE
MESSAGE = "0/3 nodes are available: 3 Insufficient cpu."
EVENTS = "/apis/events.k8s.io/v1/namespaces/ns/events"


def make_reporter(session: FakeSession, clock: FakeClock, **options: Any) -> ApiReporter:
    return ApiReporter(
        session,  # type: ignore[arg-type]
        clock=clock,
        instance="berth-host-1",
        wall_clock=FakeWallClock(clock),
        qps=None,
        **options,
    )


def pod(name: str = "web", *, generation: int = 0) -> Pod:
    builder = make_pod(name, "ns").uid(f"uid-{name}")
    if generation:
        builder.set("metadata.generation", generation)
    return builder.build()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def session() -> FakeSession:
    return FakeSession()


# -- what is written --------------------------------------------------------------------------


async def test_failure_posts_a_warning_event_and_a_pod_scheduled_false_condition(
    session: FakeSession, clock: FakeClock
) -> None:
    reporter = make_reporter(session, clock)

    reporter.failed(pod(generation=3), MESSAGE, reason=UNSCHEDULABLE, profile="berth")
    assert session.calls == [], "recording must not send on the caller's stack"
    await reporter.drain()

    [event] = session.of("POST", EVENTS)
    body = event.body
    assert body["metadata"]["name"].startswith("web.")
    assert body["metadata"]["namespace"] == "ns"
    assert {k: body[k] for k in ("type", "reason", "action", "note")} == {
        "type": "Warning",
        "reason": "FailedScheduling",
        "action": "Scheduling",
        "note": MESSAGE,
    }
    assert body["reportingController"] == "berth"
    assert body["reportingInstance"] == "berth-host-1"
    assert body["eventTime"] == "2026-05-01T12:00:00.000000Z"
    assert body["regarding"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "namespace": "ns",
        "name": "web",
        "uid": "uid-web",
    }
    assert "series" not in body
    [status] = session.of("PATCH", "/pods/web/status")
    assert status.path == "/api/v1/namespaces/ns/pods/web/status"
    assert status.content_type == "strategic"
    assert status.body == {
        "status": {
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": MESSAGE,
                    "lastProbeTime": None,
                    "lastTransitionTime": "2026-05-01T12:00:00Z",
                    "observedGeneration": 3,
                }
            ]
        }
    }


async def test_scheduled_posts_a_normal_binding_event(
    session: FakeSession, clock: FakeClock
) -> None:
    reporter = make_reporter(session, clock)

    reporter.scheduled(pod(), "node-7", profile="default-scheduler")
    await reporter.drain()

    [event] = session.calls
    assert event.path == EVENTS
    assert (event.body["type"], event.body["reason"], event.body["action"]) == (
        "Normal",
        "Scheduled",
        "Binding",
    )
    assert event.body["note"] == "Successfully assigned ns/web to node-7"
    assert event.body["reportingController"] == "default-scheduler"


async def test_a_plugin_event_is_posted_by_the_profile_and_aggregated(
    session: FakeSession, clock: FakeClock
) -> None:
    # What DynamicResources records through its handle while binding conditions are pending.
    reporter = make_reporter(session, clock)
    note = "waiting for binding conditions for device on node node-7"
    for _ in range(2):
        reporter.record(
            pod(),
            profile="gpu-scheduler",
            event_type="Normal",
            reason="BindingConditionsPending",
            action="Scheduling",
            note=note,
        )
        await reporter.drain()
        clock.advance(1)

    [created] = session.of("POST", EVENTS)
    assert {k: created.body[k] for k in ("type", "reason", "action", "note")} == {
        "type": "Normal",
        "reason": "BindingConditionsPending",
        "action": "Scheduling",
        "note": note,
    }
    assert created.body["reportingController"] == "gpu-scheduler"
    assert created.body["reportingInstance"] == "berth-host-1"
    assert created.body["regarding"]["uid"] == "uid-web"
    [repeat] = session.of("PATCH", "/events/")
    assert repeat.body["series"]["count"] == 2
    assert session.of("PATCH", "/status") == [], "a plugin event leaves the condition alone"


def test_scheduler_error_reason_and_no_generation() -> None:
    patch = condition_patch(
        SchedulingReason.SCHEDULER_ERROR, "boom", generation=0, transition_time=None
    )
    [condition] = patch["status"]["conditions"]
    assert condition["reason"] == "SchedulerError"
    assert "observedGeneration" not in condition
    assert "lastTransitionTime" not in condition, "None keeps the server's transition time"


@pytest.mark.parametrize(
    ("message", "expected_length", "suffix"),
    [
        ("short", 5, "short"),
        ("x" * NOTE_LENGTH_LIMIT, NOTE_LENGTH_LIMIT, "xxxx"),
        ("x" * (NOTE_LENGTH_LIMIT + 1), NOTE_LENGTH_LIMIT, " ..."),
        ("x" + "é" * 1000, NOTE_LENGTH_LIMIT - 1, " ..."),  # never split a 2-byte char
    ],
    ids=["short", "exactly-the-limit", "one-over", "multibyte"],
)
def test_note_is_truncated_to_1024_bytes_like_upstream(
    message: str, expected_length: int, suffix: str
) -> None:
    note = truncate_note(message)
    assert len(note.encode()) == expected_length
    assert note.endswith(suffix)


async def test_long_message_truncates_the_note_but_not_the_condition(
    session: FakeSession, clock: FakeClock
) -> None:
    reporter = make_reporter(session, clock)
    message = "0/5000 nodes are available: " + ", ".join(f"{i} reason-{i}" for i in range(300))

    reporter.failed(pod(), message, reason=UNSCHEDULABLE, profile="berth")
    await reporter.drain()

    [event] = session.of("POST")
    [status] = session.of("PATCH")
    assert event.body["note"] == message[: NOTE_LENGTH_LIMIT - 4] + " ..."
    assert status.body["status"]["conditions"][0]["message"] == message


# -- series aggregation -----------------------------------------------------------------------


async def test_repeated_failures_become_one_event_with_a_series_count(
    session: FakeSession, clock: FakeClock
) -> None:
    reporter = make_reporter(session, clock, series_flush_interval=30.0)
    the_pod = pod()

    reporter.failed(the_pod, MESSAGE, reason=UNSCHEDULABLE, profile="berth")
    await reporter.drain()
    [created] = session.of("POST")
    name = created.body["metadata"]["name"]

    clock.advance(1)
    reporter.failed(the_pod, MESSAGE, reason=UNSCHEDULABLE, profile="berth")
    await reporter.drain()
    [second] = session.of("PATCH", "/events/")
    assert second.path == f"{EVENTS}/{name}"
    assert second.content_type == "strategic"
    assert second.body == {
        "series": {"count": 2, "lastObservedTime": "2026-05-01T12:00:01.000000Z"}
    }

    for _ in range(3):  # counted in memory, not sent one by one
        clock.advance(2)
        reporter.failed(the_pod, MESSAGE, reason=UNSCHEDULABLE, profile="berth")
        await reporter.drain()
    assert len(session.of("PATCH", "/events/")) == 1

    clock.advance(30)
    await reporter.drain()
    patches = session.of("PATCH", "/events/")
    assert [p.body["series"]["count"] for p in patches] == [2, 5]
    assert patches[-1].body["series"]["lastObservedTime"] == "2026-05-01T12:00:07.000000Z"
    assert len(session.of("POST")) == 1
    assert len(session.of("PATCH", "/status")) == 1, "unchanged condition is not re-patched"


async def test_a_quiet_series_ends_and_the_next_occurrence_is_a_new_event(
    session: FakeSession, clock: FakeClock
) -> None:
    reporter = make_reporter(session, clock)
    the_pod = pod()
    reporter.failed(the_pod, MESSAGE, reason=UNSCHEDULABLE, profile="berth")
    await reporter.drain()

    clock.advance(6 * 60 + 1)
    await reporter.drain()  # the sweep forgets the finished series
    reporter.failed(the_pod, MESSAGE, reason=UNSCHEDULABLE, profile="berth")
    await reporter.drain()

    posts = session.of("POST")
    assert len(posts) == 2
    assert posts[0].body["metadata"]["name"] != posts[1].body["metadata"]["name"]
    assert session.of("PATCH", "/events/") == []


async def test_occurrences_before_the_create_is_sent_are_created_with_their_count(
    session: FakeSession, clock: FakeClock
) -> None:
    reporter = make_reporter(session, clock)
    the_pod = pod()
    for _ in range(3):
        reporter.failed(the_pod, MESSAGE, reason=UNSCHEDULABLE, profile="berth")
        clock.advance(1)
    await reporter.drain()

    [created] = session.of("POST")
    assert created.body["series"] == {
        "count": 3,
        "lastObservedTime": "2026-05-01T12:00:02.000000Z",
    }
    assert session.of("PATCH", "/events/") == []


async def test_an_expired_event_is_created_again_with_its_series(
    session: FakeSession, clock: FakeClock
) -> None:
    def responder(call: Call) -> Any:
        if call.method == "PATCH" and "/events/" in call.path:
            raise api_error(404, "NotFound", "events.events.k8s.io not found")
        return {}

    reporter = make_reporter(session, clock)
    the_pod = pod()
    reporter.failed(the_pod, MESSAGE, reason=UNSCHEDULABLE, profile="berth")
    await reporter.drain()
    session.responder = responder
    reporter.failed(the_pod, MESSAGE, reason=UNSCHEDULABLE, profile="berth")
    await reporter.drain()

    first, second = session.of("POST")
    assert second.body["metadata"]["name"] == first.body["metadata"]["name"]
    assert second.body["series"]["count"] == 2


# -- coalescing -------------------------------------------------------------------------------


async def test_latest_message_wins_while_a_send_is_pending(
    session: FakeSession, clock: FakeClock
) -> None:
    reporter = make_reporter(session, clock)
    the_pod = pod()
    for nodes in (3, 4, 5):
        reporter.failed(
            the_pod, f"0/{nodes} nodes are available.", reason=UNSCHEDULABLE, profile="berth"
        )
    await reporter.drain()

    assert [c.body["note"] for c in session.of("POST")] == ["0/5 nodes are available."]
    [status] = session.of("PATCH", "/status")
    assert status.body["status"]["conditions"][0]["message"] == "0/5 nodes are available."


async def test_a_changed_message_after_sending_starts_a_new_event_and_repatches(
    session: FakeSession, clock: FakeClock
) -> None:
    reporter = make_reporter(session, clock)
    the_pod = pod()
    reporter.failed(the_pod, "0/3 nodes are available.", reason=UNSCHEDULABLE, profile="berth")
    await reporter.drain()
    clock.advance(5)
    reporter.failed(the_pod, "0/4 nodes are available.", reason=UNSCHEDULABLE, profile="berth")
    await reporter.drain()

    assert [c.body["note"] for c in session.of("POST")] == [
        "0/3 nodes are available.",
        "0/4 nodes are available.",
    ]
    first, second = (c.body["status"]["conditions"][0] for c in session.of("PATCH", "/status"))
    assert second["message"] == "0/4 nodes are available."
    assert "lastTransitionTime" in first
    assert "lastTransitionTime" not in second, "False -> False keeps the transition time"


async def test_scheduled_drops_an_unsent_false_condition(
    session: FakeSession, clock: FakeClock
) -> None:
    reporter = make_reporter(session, clock)
    the_pod = pod()
    reporter.failed(the_pod, MESSAGE, reason=UNSCHEDULABLE, profile="berth")
    reporter.scheduled(the_pod, "node-1", profile="berth")
    await reporter.drain()

    assert session.of("PATCH", "/status") == []
    assert [c.body["reason"] for c in session.of("POST")] == ["FailedScheduling", "Scheduled"]


async def test_after_being_bound_a_new_failure_patches_the_condition_again(
    session: FakeSession, clock: FakeClock
) -> None:
    reporter = make_reporter(session, clock)
    the_pod = pod()
    reporter.failed(the_pod, MESSAGE, reason=UNSCHEDULABLE, profile="berth")
    await reporter.drain()
    reporter.scheduled(the_pod, "node-1", profile="berth")
    reporter.failed(the_pod, MESSAGE, reason=UNSCHEDULABLE, profile="berth")
    await reporter.drain()

    patches = session.of("PATCH", "/status")
    assert len(patches) == 2
    assert "lastTransitionTime" in patches[1].body["status"]["conditions"][0]


async def test_thousands_of_unschedulable_pods_cost_one_create_and_one_patch_each(
    session: FakeSession, clock: FakeClock
) -> None:
    reporter = make_reporter(session, clock, max_in_flight=64)
    pods = [pod(f"p{i}") for i in range(2000)]
    for attempt in range(5):  # five failures each before anything is sent...
        for p in pods:
            reporter.failed(p, f"0/{attempt} nodes", reason=UNSCHEDULABLE, profile="berth")
    await reporter.drain()
    assert len(session.of("POST")) == 2000
    assert len(session.of("PATCH")) == 2000

    for _ in range(10):  # ...then the same message again and again
        clock.advance(1)
        for p in pods:
            reporter.failed(p, "0/4 nodes", reason=UNSCHEDULABLE, profile="berth")
        await reporter.drain()
    assert len(session.of("POST")) == 2000
    assert len(session.of("PATCH", "/events/")) == 2000  # the count=2 patch only
    assert len(session.of("PATCH", "/status")) == 2000


# -- failures ---------------------------------------------------------------------------------


async def test_transient_failures_retry_with_a_delay_and_client_errors_are_dropped(
    session: FakeSession, clock: FakeClock
) -> None:
    failures = {"POST": 2}

    def responder(call: Call) -> Any:
        if call.method == "POST" and failures["POST"]:
            failures["POST"] -= 1
            raise ApiTransportError("connection reset")
        if call.method == "PATCH":
            raise api_error(422, "Invalid", "bad patch")
        return {}

    session.responder = responder
    reporter = make_reporter(session, clock)
    reporter.failed(pod(), MESSAGE, reason=UNSCHEDULABLE, profile="berth")
    await reporter.drain()
    assert len(session.of("POST")) == 1
    assert len(session.of("PATCH")) == 1

    clock.advance(1)
    await reporter.drain()
    clock.advance(2)
    await reporter.drain()
    clock.advance(60)
    await reporter.drain()

    assert len(session.of("POST")) == 3, "two transport failures, then success"
    assert len(session.of("PATCH")) == 1, "a 422 is not retried"
    assert reporter.pending_writes == 0


async def test_transport_failures_are_retried_for_as_long_as_an_apiserver_restart_takes(
    session: FakeSession, clock: FakeClock
) -> None:
    """A Scheduled event must survive an API server that is away for a minute."""
    back_at = clock.now() + 60.0
    created: list[Call] = []

    def responder(call: Call) -> Any:
        if clock.now() < back_at:
            raise ApiTransportError("POST ...: ClientConnectorError: refused", possibly_sent=False)
        created.append(call)
        return {}

    session.responder = responder
    reporter = make_reporter(session, clock)
    reporter.scheduled(pod(), "n1", profile="berth")
    for _ in range(120):
        await reporter.drain()
        clock.advance(1)

    assert [call.body["reason"] for call in created] == ["Scheduled"]
    assert len(session.of("POST")) <= 12, "retries are bounded"
    assert reporter.pending_writes == 0


async def test_a_condition_patch_in_flight_when_the_pod_is_bound_is_not_retried(
    session: FakeSession, clock: FakeClock
) -> None:
    reporter = make_reporter(session, clock)
    bound_meanwhile = pod()

    def responder(call: Call) -> Any:
        if call.path.endswith("/status"):
            reporter.scheduled(bound_meanwhile, "n1", profile="berth")  # the binding lands
            raise ApiTransportError("PATCH ...: ServerDisconnectedError")
        return {}

    session.responder = responder
    reporter.failed(bound_meanwhile, MESSAGE, reason=UNSCHEDULABLE, profile="berth")
    await reporter.drain()
    clock.advance(100)
    await reporter.drain()

    assert len(session.of("PATCH", "/status")) == 1, "a False condition after the binding is wrong"
    assert reporter.pending_writes == 0


async def test_a_vanished_pod_drops_its_condition_patch(
    session: FakeSession, clock: FakeClock
) -> None:
    def responder(call: Call) -> Any:
        if call.path.endswith("/status"):
            raise api_error(404, "NotFound", 'pods "web" not found')
        return {}

    session.responder = responder
    reporter = make_reporter(session, clock)
    reporter.failed(pod(), MESSAGE, reason=UNSCHEDULABLE, profile="berth")
    await reporter.drain()
    clock.advance(100)
    await reporter.drain()

    assert len(session.of("PATCH", "/status")) == 1
    assert reporter.pending_writes == 0


# -- background sending and rate limit ---------------------------------------------------------


async def test_background_task_sends_without_drain_and_stop_flushes() -> None:
    from berth.scheduling.ports import MonotonicClock

    session = FakeSession()
    reporter = ApiReporter(
        session,  # type: ignore[arg-type]
        clock=MonotonicClock(),
        instance="i",
        qps=1000.0,
        burst=10,
    )
    reporter.start()
    try:
        reporter.failed(pod(), MESSAGE, reason=UNSCHEDULABLE, profile="berth")
        for _ in range(200):
            if len(session.calls) == 2:
                break
            await asyncio.sleep(0.005)  # wait-ok: polling a background task, bounded
        assert len(session.calls) == 2
        for i in range(20):
            reporter.scheduled(pod(f"s{i}"), "n", profile="berth")
    finally:
        await reporter.stop()
    assert len(session.of("POST")) == 21


def test_token_bucket_allows_a_burst_then_the_rate() -> None:
    clock = FakeClock()
    bucket = TokenBucket(rate=10.0, burst=3, clock=clock)

    assert [bucket.take() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take() == pytest.approx(0.1)
    clock.advance(0.1)
    assert bucket.take() == 0.0
    clock.advance(10)
    assert [bucket.take() for _ in range(4)][:3] == [0.0, 0.0, 0.0]
