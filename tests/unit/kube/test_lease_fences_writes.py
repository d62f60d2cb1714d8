"""The Lease fence on the writes only the active replica may make, and the Lease's API store.

A refused binding must look to the scheduling loop like a pod to forget (GONE:
no requeue, no failure report), and no request may leave the process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from berth.kube.api import ApiTransportError
from berth.kube.binder import NOT_HOLDING_LEASE, ApiBinder
from berth.kube.lease_store import ApiLeaseStore, LeaseConflict, LeaseRecord, LeaseUnavailable
from berth.kube.metrics import SchedulerMetrics
from berth.kube.preemption import ApiPreemptor
from berth.scheduling.ports import BindOutcome
from tests.builders import make_pod
from tests.unit.kube.fakes import Call, FakeSession, api_error


@dataclass
class SwitchFence:
    """A fence whose answer the test sets; it records what was asked."""

    holding: bool = True
    asked: list[str] = field(default_factory=list)

    def permits(self, write: str) -> bool:
        self.asked.append(write)
        return self.holding


async def test_a_binding_without_the_lease_is_not_posted_and_is_forgotten() -> None:
    session = FakeSession()
    fence = SwitchFence(holding=False)
    binder = ApiBinder(session, fence=fence)  # type: ignore[arg-type]

    result = await binder.bind(make_pod("web", "shop").build(), "n1")

    assert (result.outcome, result.message) == (BindOutcome.GONE, NOT_HOLDING_LEASE)
    assert session.calls == []
    assert fence.asked == ["binding"]


async def test_a_binding_with_the_lease_is_posted() -> None:
    session = FakeSession()
    binder = ApiBinder(session, fence=SwitchFence(holding=True))  # type: ignore[arg-type]

    result = await binder.bind(make_pod("web", "shop").build(), "n1")

    assert result.outcome is BindOutcome.BOUND
    assert [call.method for call in session.calls] == ["POST"]


@pytest.mark.parametrize("holding", [True, False], ids=["holding", "lost"])
async def test_preemption_writes_are_each_fenced(holding: bool) -> None:
    session = FakeSession()
    fence = SwitchFence(holding=holding)
    preemptor = ApiPreemptor(session, instance="a", fence=fence)  # type: ignore[arg-type]
    victim = make_pod("low", "shop").build()

    preemptor.preempt(make_pod("high", "shop").build(), "n1", [victim], profile="berth")
    await preemptor.drain()

    writes = [(call.method, call.path.rsplit("/", 1)[-1]) for call in session.calls]
    if holding:
        assert writes == [
            ("PATCH", "status"),  # nominatedNodeName of the preemptor
            ("PATCH", "status"),  # DisruptionTarget of the victim
            ("DELETE", "low"),
            ("POST", "events"),
        ]
        assert fence.asked == ["nomination", "disruption-condition", "eviction"]
    else:
        assert writes == []
        assert fence.asked == ["nomination", "disruption-condition"]


async def test_a_lost_lease_between_the_disruption_patch_and_the_delete_stops_the_delete() -> None:
    fence = SwitchFence(holding=True)

    def responder(call: Call) -> Any:
        if call.method == "PATCH" and "/low/" in call.path:
            fence.holding = False  # the deadline passes while the patch is in flight
        return {}

    session = FakeSession(responder=responder)
    preemptor = ApiPreemptor(session, instance="a", fence=fence)  # type: ignore[arg-type]
    preemptor.preempt(
        make_pod("high", "shop").build(), "n1", [make_pod("low", "shop").build()], profile="b"
    )
    await preemptor.drain()

    assert not session.of("DELETE")


def test_refused_writes_are_counted_by_kind() -> None:
    metrics = SchedulerMetrics()
    metrics.count_lease_refused("binding")
    metrics.count_lease_refused("binding")

    sample = metrics.registry.get_sample_value
    assert sample("berth_lease_refused_writes_total", {"write": "binding"}) == 2
    assert sample("berth_lease_refused_writes_total", {"write": "eviction"}) == 0


# --- ApiLeaseStore -------------------------------------------------------------------------------

LEASES = "/apis/coordination.k8s.io/v1/namespaces/berth-system/leases"
RECORD = LeaseRecord(
    holder="a",
    lease_duration_seconds=15,
    acquire_time="2026-05-01T12:00:00.000000Z",
    renew_time="2026-05-01T12:00:02.000000Z",
    transitions=3,
)


def stored(version: str, **metadata: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "berth", "namespace": "berth-system", "resourceVersion": version}
        | metadata,
        "spec": RECORD.to_spec(),
    }


async def test_store_reads_the_record_and_its_version() -> None:
    session = FakeSession(responder=lambda call: stored("41"))
    store = ApiLeaseStore(session, namespace="berth-system", name="berth")  # type: ignore[arg-type]

    snapshot = await store.get()

    assert snapshot is not None
    assert (snapshot.record, snapshot.resource_version) == (RECORD, "41")
    assert session.calls[0].path == f"{LEASES}/berth"


async def test_store_update_is_a_put_guarded_by_the_version_keeping_labels() -> None:
    answers = iter([stored("41", labels={"team": "x"}), stored("42")])
    session = FakeSession(responder=lambda call: next(answers))
    store = ApiLeaseStore(session, namespace="berth-system", name="berth")  # type: ignore[arg-type]
    await store.get()

    version = await store.update(RECORD, resource_version="41")

    put = session.calls[-1]
    assert (put.method, put.path, version) == ("PUT", f"{LEASES}/berth", "42")
    assert put.body["metadata"]["resourceVersion"] == "41"
    assert put.body["metadata"]["labels"] == {"team": "x"}
    assert put.body["spec"] == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": "2026-05-01T12:00:00.000000Z",
        "renewTime": "2026-05-01T12:00:02.000000Z",
        "leaseTransitions": 3,
    }


@pytest.mark.parametrize(
    ("failure", "raised"),
    [
        (api_error(409, "Conflict", "the object has been modified"), LeaseConflict),
        (api_error(403, "Forbidden", "cannot update leases"), LeaseUnavailable),
        (ApiTransportError("PUT ...: ServerDisconnectedError"), LeaseUnavailable),
    ],
    ids=["conflict", "forbidden", "network"],
)
async def test_store_classifies_write_failures(failure: Exception, raised: type) -> None:
    def responder(call: Call) -> Any:
        raise failure

    store = ApiLeaseStore(FakeSession(responder=responder), namespace="n", name="l")  # type: ignore[arg-type]

    with pytest.raises(raised):
        await store.update(RECORD, resource_version="1")


async def test_store_reports_a_missing_lease_as_none() -> None:
    def responder(call: Call) -> Any:
        raise api_error(404, "NotFound", 'leases "berth" not found')

    store = ApiLeaseStore(FakeSession(responder=responder), namespace="n", name="berth")  # type: ignore[arg-type]

    assert await store.get() is None
