"""PodDisruptionBudgets reach preemption: watched, parsed once, re-listed on activation.

The kopf handler feeds `BerthApp.on_pdb_event`, which keeps the scheduler cache's
budgets in step with the API; a leadership resume converges them to a full
listing, since a resumed watch never reports a budget deleted during the gap.
"""

from __future__ import annotations

import logging
from typing import Any

import kopf
import pytest

from berth.kube import handlers
from berth.kube.app import BerthApp, Settings
from berth.scheduling.loop import Scheduler
from tests.fakes import FakeBinder, FakeReporter
from tests.unit.kube.fakes import Call, FakeSession

PDB_LIST = "/apis/policy/v1/poddisruptionbudgets"


def pdb(name: str, allowed: int, *, namespace: str = "ns", app: str = "web") -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"namespace": namespace, "name": name},
        "spec": {"selector": {"matchLabels": {"app": app}}},
        "status": {"disruptionsAllowed": allowed, "disruptedPods": {}},
    }


def make_app(session: FakeSession) -> BerthApp:
    return BerthApp(
        settings=Settings(), session=session, binder=FakeBinder(), reporter=FakeReporter()
    )


def budgets(scheduler: Scheduler) -> dict[str, int]:
    """namespace/name -> disruptions allowed, as preemption will read them."""
    return {pdb.key: pdb.disruptions_allowed for pdb in scheduler.cache.cluster.pdbs()}


async def deliver(app: BerthApp, event_type: str | None, raw: dict[str, Any]) -> None:
    """Through the registered kopf handler, as kopf would call it."""
    await handlers.pdb_event(event={"type": event_type, "object": raw}, memo=kopf.Memo(berth=app))


async def test_watch_events_add_update_and_delete_budgets() -> None:
    app = make_app(FakeSession())

    await deliver(app, None, pdb("listed", 0))  # kopf's initial listing has no type
    await deliver(app, "ADDED", pdb("web", 0))
    await deliver(app, "MODIFIED", pdb("web", 2))
    assert budgets(app.scheduler) == {"ns/listed": 0, "ns/web": 2}

    await deliver(app, "DELETED", pdb("web", 2))
    assert budgets(app.scheduler) == {"ns/listed": 0}


def test_budgets_are_parsed_once_into_the_model() -> None:
    app = make_app(FakeSession())
    raw = pdb("web", 1)
    raw["status"]["disruptedPods"] = {"web-0": "2026-05-01T12:00:00Z"}

    app.on_pdb_event("ADDED", raw)

    (budget,) = app.scheduler.cache.cluster.pdbs()
    assert budget.disrupted_pods == frozenset({"web-0"})
    assert budget.covers("ns", {"app": "web"})
    assert not budget.covers("other", {"app": "web"})


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("disruptionsAllowed", "1"),
        ("disruptedPods", ["web-0"]),
    ],
    ids=["allowed-not-an-integer", "disrupted-pods-not-a-map"],
)
def test_a_malformed_budget_is_logged_and_skipped(
    field: str, value: object, caplog: pytest.LogCaptureFixture
) -> None:
    app = make_app(FakeSession())
    app.on_pdb_event("ADDED", pdb("good", 0))
    app.on_pdb_event("ADDED", pdb("bad", 0))
    broken = pdb("bad", 0)
    broken["status"][field] = value

    with caplog.at_level(logging.WARNING):
        app.on_pdb_event("MODIFIED", broken)
        app.on_pdb_event("ADDED", {**broken, "metadata": {"namespace": "ns", "name": "new"}})

    # The last readable version of "bad" stays; "new" was never readable; "good" is untouched.
    assert budgets(app.scheduler) == {"ns/good": 0, "ns/bad": 0}
    messages = [record.getMessage() for record in caplog.records]
    assert any("PodDisruptionBudget ns/bad" in m and f"status.{field}" in m for m in messages)
    assert any("PodDisruptionBudget ns/new" in m for m in messages)


async def test_activation_relists_budgets_and_drops_ghosts() -> None:
    listed = [pdb("kept", 1), pdb("changed", 3), pdb("also-bad", 0)]
    listed[2]["status"]["disruptionsAllowed"] = "zero"

    def respond(call: Call) -> Any:
        return listed if call.path == PDB_LIST else []

    app = make_app(FakeSession(responder=respond))
    for name, allowed in (("kept", 1), ("changed", 0), ("deleted-while-paused", 0)):
        app.on_pdb_event(None, pdb(name, allowed))

    await app._reconcile_from_api()

    assert budgets(app.scheduler) == {"ns/kept": 1, "ns/changed": 3}


async def test_the_watch_wins_over_a_listing_taken_meanwhile() -> None:
    app = make_app(FakeSession())

    def respond(call: Call) -> Any:
        if call.path != PDB_LIST:
            return []
        # While the listing is in flight the watch reports newer states: one budget
        # changed, one created after the listing's snapshot, one deleted.
        app.on_pdb_event("MODIFIED", pdb("raised", 5))
        app.on_pdb_event("ADDED", pdb("created", 0))
        app.on_pdb_event("DELETED", pdb("deleted", 0))
        return [pdb("raised", 1), pdb("deleted", 0)]

    app.session = FakeSession(responder=respond)  # type: ignore[assignment]
    app.on_pdb_event(None, pdb("deleted", 0))

    await app._reconcile_from_api()

    assert budgets(app.scheduler) == {"ns/raised": 5, "ns/created": 0}

    # Once the listing is applied, watch events no longer count as "during the listing".
    app.on_pdb_event("DELETED", pdb("raised", 5))
    assert budgets(app.scheduler) == {"ns/created": 0}
