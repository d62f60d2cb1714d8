"""Building a Framework from a typed profile: expansion, weights, and where in the profile a fault is."""

from __future__ import annotations

import random
from typing import Any

import pytest

from berth.engine.algorithm import Scheduled, SearchState, schedule_one
from berth.engine.cluster import ClusterState
from berth.engine.errors import FieldError, ProfileError, ProfileField
from berth.engine.framework import names
from berth.engine.framework.building import STATE_NEEDED
from berth.engine.framework.runtime import build_framework
from berth.engine.profile import PluginRef, PluginSet, ProfileConfig
from berth.engine.registry import Registry
from berth.profiles import with_defaults
from tests.builders import make_node, make_pod
from tests.unit.engine.fakes import FakeBindPlugin, FakeSort, build_exactly, fake_plugins_registry


def test_multi_point_plugins_land_on_every_point_they_implement() -> None:
    framework = build_exactly(
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
    framework = build_exactly(
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
    framework = build_exactly(
        {
            "plugins": {
                "multiPoint": {"enabled": [{"name": n} for n in ("Sort", "Bind", "F1", "F2")]},
                "filter": {"enabled": [{"name": "F2"}], "disabled": [{"name": "*"}]},
            }
        }
    )
    assert framework.plugin_names("filter") == ["F2"]


def _typed(**points: PluginSet) -> ProfileConfig:
    base = {
        "queueSort": PluginSet((PluginRef("Sort"),)),
        "bind": PluginSet((PluginRef("Bind"),)),
    }
    return ProfileConfig(scheduler_name="t", plugins={**base, **points})


@pytest.mark.parametrize(
    ("config", "at", "problem"),
    [
        (
            _typed(filter=PluginSet((PluginRef("Nope"),))),
            ProfileField.listing("filter", "Nope"),
            "unknown plugin 'Nope'",
        ),
        (
            _typed(score=PluginSet((PluginRef("F1"),))),
            ProfileField.listing("score", "F1"),
            "plugin 'F1' does not extend score",
        ),
        (_typed(bind=PluginSet()), ProfileField.of_point("bind"), "at least one bind plugin"),
        (
            ProfileConfig(
                scheduler_name="t",
                plugins={"multiPoint": PluginSet((PluginRef("Sort"), PluginRef("Bind")))},
                plugin_args={"Ghost": {}},
            ),
            ProfileField.config_of("Ghost"),
            "unknown plugin 'Ghost'",
        ),
    ],
    ids=["unknown-plugin", "wrong-point", "no-binder", "config-for-unknown"],
)
def test_faults_are_placed_in_the_typed_profile(
    config: ProfileConfig, at: ProfileField, problem: str
) -> None:
    with pytest.raises(ProfileError) as raised:
        build_framework(config, fake_plugins_registry())
    assert raised.value.at == at
    assert problem in raised.value.problem


def test_a_factory_field_error_is_placed_in_the_plugin_args() -> None:
    def refuse(_args: object, _handle: object) -> Any:
        raise FieldError("shape[0].score", "must be at most 10")

    registry = Registry(
        {
            "Sort": lambda _a, _h: FakeSort("Sort"),
            "Bind": lambda _a, _h: FakeBindPlugin("Bind"),
            "Odd": refuse,
        }
    )
    config = ProfileConfig(
        scheduler_name="t",
        plugins={"multiPoint": PluginSet((PluginRef("Sort"), PluginRef("Bind"), PluginRef("Odd")))},
    )
    with pytest.raises(ProfileError) as raised:
        build_framework(config, registry)
    assert raised.value.at == ProfileField.args_of("Odd", "shape[0].score")


# ------------------------------------------------------------------ state read across points

_NEEDERS = [
    (name, point, needed) for name, needs in STATE_NEEDED.items() for point, needed in needs
]


@pytest.mark.parametrize(
    ("name", "point", "needed"), _NEEDERS, ids=[f"{n}-{p}" for n, p, _ in _NEEDERS]
)
def test_a_plugin_kept_where_it_reads_state_of_a_disabled_point_is_refused(
    name: str, point: str, needed: str
) -> None:
    config = with_defaults(
        ProfileConfig(scheduler_name="t", plugins={needed: PluginSet(disabled=(name,))})
    )
    with pytest.raises(ProfileError) as raised:
        build_framework(config)
    assert raised.value.at == ProfileField.listing(needed, name, listed="disabled")
    assert f"runs at {point} but not at {needed}" in raised.value.problem


def test_enabling_only_the_reading_point_names_that_entry() -> None:
    config = with_defaults(
        ProfileConfig(
            scheduler_name="t",
            plugins={
                "multiPoint": PluginSet(disabled=(names.INTER_POD_AFFINITY,)),
                "score": PluginSet((PluginRef(names.INTER_POD_AFFINITY),)),
            },
        )
    )
    with pytest.raises(ProfileError) as raised:
        build_framework(config)
    assert raised.value.at == ProfileField.listing("score", names.INTER_POD_AFFINITY)


def test_disabling_both_points_of_a_plugin_is_fine() -> None:
    config = with_defaults(
        ProfileConfig(
            scheduler_name="t",
            plugins={
                "preScore": PluginSet(disabled=(names.TAINT_TOLERATION,)),
                "score": PluginSet(disabled=(names.TAINT_TOLERATION,)),
            },
        )
    )
    assert names.TAINT_TOLERATION not in build_framework(config).plugin_names("score")


def test_every_plugin_not_listed_schedules_without_its_pre_points() -> None:
    """The plugins STATE_NEEDED leaves out really cope when PreFilter and PreScore never ran."""
    needers = tuple(STATE_NEEDED)
    config = with_defaults(
        ProfileConfig(
            scheduler_name="t",
            plugins={
                "preFilter": PluginSet(disabled=("*",)),
                "preScore": PluginSet(disabled=("*",)),
                "filter": PluginSet(disabled=needers),
                "score": PluginSet(disabled=needers),
            },
        )
    )
    framework = build_framework(config)
    assert framework.plugin_names("preFilter") == []
    assert framework.plugin_names("score")
    cluster = ClusterState()
    cluster.upsert_node(
        make_node("a").capacity(cpu="4", memory="8Gi", pods=10).label("disk", "ssd").build()
    )
    cluster.upsert_node(make_node("b").capacity(cpu="4", memory="8Gi", pods=10).build())
    pod = (
        make_pod("p")
        .req(cpu="1", memory="1Gi")
        .host_port(8080)
        .image("nginx")
        .preferred_node_term(
            5, {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}
        )
        .build()
    )
    decision = schedule_one(framework, cluster, pod, search=SearchState(), rng=random.Random(1))
    assert isinstance(decision, Scheduled)
    assert decision.node_name == "a"
