"""The profile controller: valid profiles swap in whole, invalid edits keep the last good one."""

from __future__ import annotations

import base64
import random
from typing import Any

from berth.engine.extenders import ExtenderConfig
from berth.engine.registry import Registry
from berth.kube.profile_controller import ProfileController
from berth.scheduling.loop import Scheduler
from tests.fakes import FakeBinder, FakeClock, FakeReporter


def _profile(name: str, scheduler_name: str, generation: int = 1, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": name, "generation": generation},
        "spec": {"schedulerName": scheduler_name, **spec},
    }


def _controller() -> tuple[ProfileController, Scheduler]:
    scheduler = Scheduler(
        binder=FakeBinder(), reporter=FakeReporter(), clock=FakeClock(), rng=random.Random(1)
    )
    return ProfileController(scheduler, session=None, registry=Registry.in_tree()), scheduler


def test_valid_profile_serves_its_scheduler_name() -> None:
    controller, scheduler = _controller()
    verdict = controller.apply(_profile("binpack", "berth-binpack"))
    assert verdict.accepted and verdict.serving_generation == 1
    assert scheduler.profiles.names() == ["berth-binpack"]


def test_invalid_edit_keeps_the_last_good_version() -> None:
    controller, scheduler = _controller()
    controller.apply(_profile("p", "berth"))
    good = scheduler.profiles.get("berth")
    bad = _profile(
        "p",
        "berth",
        generation=2,
        pluginConfig=[
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Sideways"}}}
        ],
    )
    verdict = controller.apply(bad)
    assert not verdict.accepted
    assert verdict.reason == "Invalid"
    assert verdict.message.startswith("spec.pluginConfig[0].args.scoringStrategy.type:")
    assert verdict.serving_generation == 1
    assert scheduler.profiles.get("berth") is good


def test_two_resources_cannot_serve_one_scheduler_name() -> None:
    controller, _ = _controller()
    controller.apply(_profile("first", "berth"))
    verdict = controller.apply(_profile("second", "berth"))
    assert not verdict.accepted
    assert verdict.reason == "Conflict"
    assert "already served by SchedulerProfile first" in verdict.message


def test_deleting_retires_the_scheduler_name() -> None:
    controller, scheduler = _controller()
    controller.apply(_profile("p", "berth"))
    controller.delete("p")
    assert scheduler.profiles.names() == []


def test_a_profile_that_cannot_schedule_is_invalid_and_the_last_good_one_serves() -> None:
    controller, scheduler = _controller()
    controller.apply(_profile("p", "berth"))
    good = scheduler.profiles.get("berth")
    verdict = controller.apply(
        _profile(
            "p",
            "berth",
            generation=2,
            plugins={"preScore": {"disabled": [{"name": "PodTopologySpread"}]}},
        )
    )
    assert (verdict.accepted, verdict.reason) == (False, "Invalid")
    assert verdict.message.startswith("spec.plugins.preScore.disabled[0].name: ")
    assert "PodTopologySpread" in verdict.message
    assert verdict.serving_generation == 1
    assert scheduler.profiles.get("berth") is good


def test_args_that_crashed_the_parser_are_invalid() -> None:
    controller, _ = _controller()
    verdict = controller.apply(
        _profile("p", "berth", pluginConfig=[{"name": "InterPodAffinity", "args": {1: "a"}}])
    )
    assert (verdict.accepted, verdict.reason) == (False, "Invalid")
    assert verdict.message == "spec.pluginConfig[0].args: field names must be strings, got 1"


def test_any_failure_while_building_is_invalid_not_raised(monkeypatch: Any) -> None:
    import berth.kube.profile_controller as module

    def broken(_document: object, **_kwargs: object) -> None:
        raise RuntimeError("plugin exploded")

    controller, scheduler = _controller()
    controller.apply(_profile("p", "berth"))
    monkeypatch.setattr(module, "load_profile", broken)
    verdict = controller.apply(_profile("p", "berth", generation=2))
    assert (verdict.accepted, verdict.reason, verdict.serving_generation) == (False, "Invalid", 1)
    assert "RuntimeError: plugin exploded" in verdict.message
    assert scheduler.profiles.names() == ["berth"]


def test_an_unknown_field_is_invalid() -> None:
    controller, _ = _controller()
    verdict = controller.apply(_profile("p", "berth", percentageOfNodeToScore=10))
    assert (verdict.accepted, verdict.message) == (
        False,
        "spec.percentageOfNodeToScore: unknown field",
    )


def test_a_profile_serves_with_the_global_extenders_before_its_own() -> None:
    scheduler = Scheduler(
        binder=FakeBinder(), reporter=FakeReporter(), clock=FakeClock(), rng=random.Random(1)
    )
    global_extender = ExtenderConfig(url_prefix="http://global", filter_verb="filter")
    controller = ProfileController(
        scheduler, session=None, registry=Registry.in_tree(), extenders=(global_extender,)
    )
    own = {"urlPrefix": "http://own", "filterVerb": "filter"}
    assert controller.apply(_profile("p", "berth", extenders=[own])).accepted
    served = scheduler.profiles.get("berth")
    assert served is not None
    assert [e.url_prefix for e in served.extenders] == ["http://global", "http://own"]
    shown = controller.configz()["berth"]["extenders"]
    assert [entry["urlPrefix"] for entry in shown] == ["http://global", "http://own"]


def test_a_profile_whose_extender_tls_material_cannot_load_is_invalid() -> None:
    controller, scheduler = _controller()
    bad_ca = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nnot a certificate\n").decode()
    extender = {"urlPrefix": "https://x", "enableHTTPS": True, "tlsConfig": {"caData": bad_ca}}
    verdict = controller.apply(_profile("p", "berth", extenders=[extender]))
    assert not verdict.accepted
    assert verdict.message.startswith("spec.extenders[0].tlsConfig.caData: cannot load")
    assert scheduler.profiles.get("berth") is None


def test_a_redelivered_profile_is_not_built_again() -> None:
    controller, scheduler = _controller()
    first = controller.apply(_profile("p", "berth"))
    serving = scheduler.profiles.get("berth")
    again = _profile("p", "berth")
    again["status"] = {"observedGeneration": 1}  # e.g. the event of Berth's own status write
    assert controller.apply(again) == first
    assert scheduler.profiles.get("berth") is serving


def test_a_changed_spec_is_built_even_at_the_same_generation() -> None:
    controller, scheduler = _controller()
    controller.apply(_profile("p", "berth"))
    serving = scheduler.profiles.get("berth")
    verdict = controller.apply(_profile("p", "berth", percentageOfNodesToScore=50))
    assert verdict.accepted
    assert scheduler.profiles.get("berth") is not serving
    assert scheduler.profiles.get("berth").percentage_of_nodes_to_score == 50


def test_a_profile_deleted_and_created_again_is_built_again() -> None:
    controller, scheduler = _controller()
    controller.apply(_profile("p", "berth"))
    serving = scheduler.profiles.get("berth")
    controller.delete("p")
    controller.apply(_profile("p", "berth"))
    assert scheduler.profiles.get("berth") is not serving
