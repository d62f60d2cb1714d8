"""The watch-event path skips work whose result nobody reads (issue 13), and stays correct."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import kopf
import pytest

from berth.engine.model.pod import Pod
from berth.kube import wiring
from berth.kube.app import BerthApp, Settings
from berth.kube.binder import ApiBinder
from berth.kube.reporting import ApiReporter
from tests.unit.kube.fakes import FakeClock, FakeSession


def raw_pod(*, version: str, node: str = "node-a") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "uid": "uid-1",
            "resourceVersion": version,
        },
        "spec": {
            "schedulerName": "default-scheduler",
            "nodeName": node,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
        },
        "status": {"phase": "Pending"},
    }


@pytest.fixture
def app() -> BerthApp:
    session = FakeSession()
    return BerthApp(
        settings=Settings(),
        session=session,  # type: ignore[arg-type]
        binder=ApiBinder(session),  # type: ignore[arg-type]
        reporter=ApiReporter(session, clock=FakeClock(), instance="me"),  # type: ignore[arg-type]
    )


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The resourceVersions Berth parsed a pod at."""
    seen: list[str] = []
    parse = Pod.from_dict

    def counting(raw: dict[str, Any], **options: bool) -> Pod:
        seen.append(raw["metadata"]["resourceVersion"])
        return parse(raw, **options)

    monkeypatch.setattr(Pod, "from_dict", staticmethod(counting))
    return seen


def test_a_pod_seen_again_at_the_same_version_is_not_parsed_again(
    app: BerthApp, parses: list[str]
) -> None:
    app.on_pod_event(None, raw_pod(version="7"))  # kopf's listing
    app.on_pod_event("MODIFIED", raw_pod(version="7"))  # the same state again
    app.on_pod_event("MODIFIED", raw_pod(version="8", node="node-b"))

    assert parses == ["7", "8"]
    held = app.scheduler.cache.cluster.pod("uid-1")
    assert held is not None and held.node_name == "node-b"


def test_a_deletion_at_the_held_version_still_removes_the_pod(
    app: BerthApp, parses: list[str]
) -> None:
    app.on_pod_event("ADDED", raw_pod(version="7"))
    app.on_pod_event("DELETED", raw_pod(version="7"))

    assert app.scheduler.cache.cluster.pod("uid-1") is None


def body(api_version: str, kind: str) -> kopf.Body:
    return kopf.Body(
        {
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {"name": "x", "labels": {"a": "b"}},
            "spec": {"big": ["x"] * 100},
        }
    )


def test_objects_berth_does_not_own_get_no_diff_base() -> None:
    storage = wiring.OwnKindsDiffBase()

    assert storage.build(body=body("v1", "Pod")) == {}
    assert storage.fetch(body=body("v1", "Node")) is None


def test_berth_s_own_kinds_keep_kopf_s_diff_base() -> None:
    storage = wiring.OwnKindsDiffBase()

    essence = storage.build(body=body("berth.dev/v1alpha1", "SchedulerProfile"))

    assert essence == kopf.AnnotationsDiffBaseStorage().build(
        body=body("berth.dev/v1alpha1", "SchedulerProfile")
    )
    assert essence["spec"]["big"] == ["x"] * 100


def test_configure_installs_the_diff_base_storage() -> None:
    kopf_settings = kopf.OperatorSettings()
    wiring.configure(kopf_settings, kopf.Memo(settings=Settings(standalone=True)))

    assert isinstance(kopf_settings.persistence.diffbase_storage, wiring.OwnKindsDiffBase)


@pytest.fixture
def collector() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("collector")
def test_the_collector_is_tuned_once_started() -> None:
    wiring.tune_garbage_collector()

    assert gc.get_threshold() == wiring.GC_THRESHOLDS
    assert gc.get_freeze_count() > 0


async def test_a_listing_does_not_take_an_assumed_pod_for_the_stored_one(
    app: BerthApp,
) -> None:
    # Berth assumed the pod on node-a; the listing (after an outage) still shows it pending
    # at the same version: the bind is not known to have landed, so it stays assumed.
    pending = raw_pod(version="7", node="")
    app.scheduler.cache.assume(Pod.from_dict(pending), "node-a")
    session: FakeSession = app.session  # type: ignore[assignment]
    session.responder = lambda call: [pending] if call.path == "/api/v1/pods" else []

    await app._reconcile_from_api()

    assert app.scheduler.cache.is_assumed("uid-1")
