"""Profiles: kube-scheduler's merge of user plugin sets into the defaults, expansion, weights, errors."""

from __future__ import annotations

from typing import Any

import pytest

from berth.engine.framework import names
from berth.engine.framework.runtime import ProfileError, build_framework
from berth.engine.profile import DEFAULT_MULTI_POINT, parse_profile_spec, with_defaults
from berth.engine.registry import Registry
from tests.unit.engine.fakes import FakeBindPlugin, FakeFilter, FakeScore, FakeSort


def _registry() -> Registry:
    plugins: list[Any] = [
        FakeSort("Sort"),
        FakeBindPlugin("Bind"),
        FakeFilter("F1"),
        FakeFilter("F2"),
        FakeScore("S1"),
        FakeScore("S2"),
    ]
    return Registry({p.name: (lambda _args, _handle, p=p: p) for p in plugins})


def _build(spec: dict[str, Any]) -> Any:
    config = parse_profile_spec({"schedulerName": "t", **spec})
    return build_framework(config, _registry())


def test_multi_point_plugins_land_on_every_point_they_implement() -> None:
    framework = _build(
        {
            "plugins": {
                "multiPoint": {"enabled": [{"name": n} for n in ("Sort", "Bind", "F1", "S1")]}
            }
        }
    )
    assert framework.plugin_names("filter") == ["F1"]
    assert framework.plugin_names("score") == ["S1"]
    assert framework.score_weights == {"S1": 1}


def test_point_specific_entry_overrides_multi_point_and_goes_first() -> None:
    framework = _build(
        {
            "plugins": {
                "multiPoint": {
                    "enabled": [{"name": n} for n in ("Sort", "Bind", "F1", "F2", "S1", "S2")]
                },
                "filter": {"enabled": [{"name": "F2"}]},
                "score": {"enabled": [{"name": "S2", "weight": 5}], "disabled": [{"name": "S1"}]},
            }
        }
    )
    assert framework.plugin_names("filter") == ["F2", "F1"]
    assert framework.plugin_names("score") == ["S2"]
    assert framework.score_weights == {"S2": 5}


def test_disabling_star_keeps_only_point_specific_plugins() -> None:
    framework = _build(
        {
            "plugins": {
                "multiPoint": {"enabled": [{"name": n} for n in ("Sort", "Bind", "F1", "F2")]},
                "filter": {"enabled": [{"name": "F2"}], "disabled": [{"name": "*"}]},
            }
        }
    )
    assert framework.plugin_names("filter") == ["F2"]


def test_user_multi_point_merges_into_defaults_in_place() -> None:
    merged = with_defaults(
        parse_profile_spec(
            {
                "schedulerName": "t",
                "plugins": {
                    "multiPoint": {
                        "enabled": [{"name": "Extra"}, {"name": names.NODE_AFFINITY, "weight": 7}],
                        "disabled": [{"name": names.IMAGE_LOCALITY}],
                    }
                },
            }
        )
    )
    enabled = merged.point("multiPoint").enabled
    default_names = [r.name for r in DEFAULT_MULTI_POINT.enabled if r.name != names.IMAGE_LOCALITY]
    assert [r.name for r in enabled] == [*default_names, "Extra"]
    assert next(r for r in enabled if r.name == names.NODE_AFFINITY).weight == 7


@pytest.mark.parametrize(
    ("spec", "field", "problem"),
    [
        (
            {"plugins": {"filter": {"enabled": [{"name": "Nope"}]}}},
            "spec.plugins.filter.enabled[0].name",
            "unknown plugin 'Nope'",
        ),
        (
            {"plugins": {"score": {"enabled": [{"name": "F1"}]}}},
            "spec.plugins.score.enabled[0].name",
            "plugin 'F1' does not extend score",
        ),
        (
            {
                "plugins": {
                    "queueSort": {"enabled": [{"name": "Sort"}]},
                    "bind": {"enabled": [{"name": "Bind"}]},
                    "multiPoint": {"enabled": [{"name": "S1", "weight": 101}]},
                }
            },
            "spec.plugins.multiPoint.enabled[0].weight",
            "must be an integer from 1 to 100, got 101",
        ),
        (
            {"plugins": {"filter": {"enabled": [{"name": "F1"}, {"name": "F1"}]}}},
            "spec.plugins.filter.enabled[1].name",
            "plugin 'F1' is listed twice",
        ),
        (
            {"plugins": {"bind": {"enabled": [{"name": "Bind"}]}}},
            "spec.plugins.queueSort",
            "exactly one queue sort plugin is required, got 0",
        ),
        (
            {"plugins": {"queueSort": {"enabled": [{"name": "Sort"}]}}},
            "spec.plugins.bind",
            "at least one bind plugin is required",
        ),
        (
            {"percentageOfNodesToScore": 120},
            "spec.percentageOfNodesToScore",
            "must be an integer from 0 to 100, got 120",
        ),
        ({"plugins": {"preFlight": {}}}, "spec.plugins.preFlight", "unknown extension point"),
        (
            {
                "pluginConfig": [{"name": "Ghost", "args": {}}],
                "plugins": {
                    "queueSort": {"enabled": [{"name": "Sort"}]},
                    "bind": {"enabled": [{"name": "Bind"}]},
                },
            },
            "spec.pluginConfig[0].name",
            "unknown plugin 'Ghost'",
        ),
    ],
    ids=[
        "unknown-plugin",
        "wrong-point",
        "weight-range",
        "duplicate",
        "no-queue-sort",
        "no-binder",
        "percentage",
        "unknown-point",
        "config-for-unknown",
    ],
)
def test_invalid_profiles_name_the_field(spec: dict[str, Any], field: str, problem: str) -> None:
    with pytest.raises((ProfileError, ValueError)) as raised:
        _build(spec)
    assert getattr(raised.value, "field", None) == field
    assert problem in str(raised.value)
