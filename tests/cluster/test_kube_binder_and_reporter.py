"""ApiBinder and ApiReporter against the real apiserver, as admin and as Berth's ServiceAccount.

The ServiceAccount is bound to exactly manifests/rbac.yaml, so these tests also
prove that the RBAC covers every write the binder and the reporter make.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from berth.controlplane import LocalControlPlane, PodTemplate, pod_manifest
from berth.controlplane.objects import unique_name
from berth.engine.model.pod import Pod
from berth.kube.api import ApiError, ApiSession
from berth.kube.binder import ApiBinder
from berth.kube.reporting import ApiReporter
from berth.scheduling.ports import BindOutcome, MonotonicClock, SchedulingReason

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
NOBODY = PodTemplate(scheduler_name="berth-test-nobody")  # no scheduler races our binds
MESSAGE = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."


@pytest.fixture(scope="module")
def berth_kubeconfig(control_plane: LocalControlPlane) -> Path:
    """A token for ServiceAccount berth-system/berth, bound to manifests/rbac.yaml."""
    path = control_plane.serviceaccount_kubeconfig("berth-system", "berth")
    control_plane.kubectl("apply", "-f", str(REPO / "manifests" / "rbac.yaml"))
    return path


@pytest.fixture(params=["admin", "berth-serviceaccount"])
def identity(request: pytest.FixtureRequest, control_plane: LocalControlPlane) -> Path:
    if request.param == "admin":
        return control_plane.admin_kubeconfig
    path: Path = request.getfixturevalue("berth_kubeconfig")
    return path


@pytest.fixture
def namespace(control_plane: LocalControlPlane) -> str:
    """A fresh namespace (conftest's would put the parameter's brackets in the name)."""
    name = unique_name("kube-binder-reporter")
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    control_plane.request("POST", "/api/v1/namespaces", body)
    return name


@pytest.fixture
async def session(identity: Path) -> AsyncIterator[ApiSession]:
    async with ApiSession.from_kubeconfig(identity) as api:
        yield api


@pytest.fixture
async def admin(control_plane: LocalControlPlane) -> AsyncIterator[ApiSession]:
    async with ApiSession.from_kubeconfig(control_plane.admin_kubeconfig) as api:
        yield api


async def create_pod(admin: ApiSession, namespace: str, name: str) -> Pod:
    raw = await admin.post_json(f"/api/v1/namespaces/{namespace}/pods", pod_manifest(name, NOBODY))
    return Pod.from_dict(raw)


def condition(pod: dict[str, Any], kind: str = "PodScheduled") -> dict[str, Any] | None:
    conditions = pod.get("status", {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == kind), None)


async def events_about(admin: ApiSession, namespace: str, pod: str) -> list[dict[str, Any]]:
    events, _ = await admin.list_json(
        f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
        params={"fieldSelector": f"regarding.name={pod}"},
    )
    return events


# -- binding --------------------------------------------------------------------------------


async def test_bind_sets_node_name_and_a_second_bind_conflicts(
    session: ApiSession, admin: ApiSession, namespace: str
) -> None:
    pod = await create_pod(admin, namespace, "web")
    binder = ApiBinder(session)

    first = await binder.bind(pod, "node-a")
    second = await binder.bind(pod, "node-b")

    assert first.outcome is BindOutcome.BOUND
    assert second.outcome is BindOutcome.CONFLICT
    assert "already assigned" in second.message
    live = await admin.get_json(f"/api/v1/namespaces/{namespace}/pods/web")
    assert live["spec"]["nodeName"] == "node-a"
    scheduled = condition(live)
    assert scheduled is not None
    assert scheduled["status"] == "True"


async def test_bind_with_a_stale_uid_is_gone_and_binds_nothing(
    session: ApiSession, admin: ApiSession, namespace: str
) -> None:
    """The 409 of the UID precondition: the pod decided for was deleted and recreated."""
    pod = await create_pod(admin, namespace, "web")
    stale = dataclasses.replace(pod, uid="00000000-0000-0000-0000-000000000000")

    result = await ApiBinder(session).bind(stale, "node-a")

    assert result.outcome is BindOutcome.GONE
    assert "UID" in result.message
    live = await admin.get_json(f"/api/v1/namespaces/{namespace}/pods/web")
    assert "nodeName" not in live["spec"]


async def test_bind_of_a_missing_pod_is_gone(session: ApiSession, namespace: str) -> None:
    ghost = Pod.from_dict(
        {
            **pod_manifest("ghost", NOBODY),
            "metadata": {"name": "ghost", "namespace": namespace, "uid": "u-1"},
        }
    )

    result = await ApiBinder(session).bind(ghost, "node-a")

    assert result.outcome is BindOutcome.GONE


# -- reporting ------------------------------------------------------------------------------


def make_reporter(session: ApiSession) -> ApiReporter:
    # Flush every series increment at once, so the test sees the final count.
    return ApiReporter(
        session, clock=MonotonicClock(), instance="berth-test", series_flush_interval=0.0
    )


async def test_failure_posts_an_event_and_the_condition_and_repeats_aggregate(
    session: ApiSession, admin: ApiSession, namespace: str
) -> None:
    pod = await create_pod(admin, namespace, "web")
    reporter = make_reporter(session)

    for _ in range(3):
        reporter.failed(pod, MESSAGE, reason=SchedulingReason.UNSCHEDULABLE, profile="berth")
        await reporter.drain()

    [event] = await events_about(admin, namespace, "web")
    assert (event["type"], event["reason"], event["action"]) == (
        "Warning",
        "FailedScheduling",
        "Scheduling",
    )
    assert event["note"] == MESSAGE
    assert event["reportingController"] == "berth"
    assert event["reportingInstance"] == "berth-test"
    assert event["regarding"]["uid"] == pod.uid
    assert event["series"]["count"] == 3
    live = await admin.get_json(f"/api/v1/namespaces/{namespace}/pods/web")
    scheduled = condition(live)
    assert scheduled is not None
    assert {k: scheduled.get(k) for k in ("status", "reason", "message")} == {
        "status": "False",
        "reason": "Unschedulable",
        "message": MESSAGE,
    }
    assert reporter.sent_requests == 4, "create + 2 series patches + 1 condition patch"


async def test_scheduled_event_after_a_bind(
    session: ApiSession, admin: ApiSession, namespace: str
) -> None:
    pod = await create_pod(admin, namespace, "web")
    reporter = make_reporter(session)
    reporter.failed(pod, MESSAGE, reason=SchedulingReason.SCHEDULER_ERROR, profile="berth")
    await reporter.drain()

    assert (await ApiBinder(session).bind(pod, "node-a")).outcome is BindOutcome.BOUND
    reporter.scheduled(pod, "node-a", profile="berth")
    await reporter.drain()

    events = await events_about(admin, namespace, "web")
    assert sorted((e["type"], e["reason"], e["note"][:30]) for e in events) == [
        ("Normal", "Scheduled", f"Successfully assigned {namespace}/web to node-a"[:30]),
        ("Warning", "FailedScheduling", MESSAGE[:30]),
    ]
    live = await admin.get_json(f"/api/v1/namespaces/{namespace}/pods/web")
    scheduled = condition(live)
    assert scheduled is not None
    assert scheduled["status"] == "True"


async def test_the_serviceaccount_is_really_restricted(
    berth_kubeconfig: Path, namespace: str
) -> None:
    """Guards the tests above: the berth identity cannot write core/v1 events or read secrets."""
    async with ApiSession.from_kubeconfig(berth_kubeconfig) as api:
        with pytest.raises(ApiError) as events:
            await api.post_json(f"/api/v1/namespaces/{namespace}/events", {})
        with pytest.raises(ApiError) as secrets:
            await api.get_json(f"/api/v1/namespaces/{namespace}/secrets")
    assert (events.value.status, secrets.value.status) == (403, 403)
