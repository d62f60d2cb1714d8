"""Plugins installed as packages: found through `berth.plugins` entry points, refused when unusable,
and named in profiles like in-tree ones (with errors that say which names exist)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from berth.engine.errors import InvalidObjectError, PluginPackageError
from berth.engine.registry import Registry
from berth.profiles import load_profile, plugin_registry
from tests.exploding_plugin import NAME, Exploding
from tests.plugin_packages import install_distribution

FACTORY = "tests.exploding_plugin:new_plugin"


def _install(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str = "berth-test-exploding",
    **plugins: str,
) -> None:
    install_distribution(
        tmp_path / name, monkeypatch, name=name, entry_points=plugins or {NAME: FACTORY}
    )


def _registry(announced: list[str] | None = None) -> Registry:
    return plugin_registry(announce=(announced if announced is not None else []).append)


def _profile(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": "plugged"},
        "spec": {"schedulerName": "plugged", **spec},
    }


def _naming_exploding(args: dict[str, Any]) -> dict[str, Any]:
    return _profile(
        plugins={"multiPoint": {"enabled": [{"name": NAME}]}},
        pluginConfig=[{"name": NAME, "args": args}],
    )


def test_an_installed_plugin_is_loaded_under_its_entry_point_name_and_announced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch)
    announced: list[str] = []
    registry = _registry(announced)
    assert "loaded plugin Exploding from distribution berth-test-exploding version 1.0" in announced
    loaded = load_profile(_naming_exploding({"at": "filter"}), registry=registry)
    plugin = loaded.framework.plugins[NAME]
    assert isinstance(plugin, Exploding) and plugin.at == "filter"
    assert NAME in loaded.framework.plugin_names("filter")
    assert NAME in loaded.framework.plugin_names("score")


def test_the_in_tree_plugins_stay_in_the_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch)
    assert Registry.in_tree().names() < _registry().names()


@pytest.mark.parametrize(
    ("entry_points", "problem"),
    [
        (
            {"NodeName": FACTORY},
            "berth.plugins entry point 'NodeName = tests.exploding_plugin:new_plugin' of "
            "distribution berth-test-exploding 1.0: the name 'NodeName' is an in-tree plugin's; "
            "an installed plugin needs a name of its own",
        ),
        (
            {"Ghost": "tests.no_such_module:new_plugin"},
            "berth.plugins entry point 'Ghost = tests.no_such_module:new_plugin' of distribution "
            "berth-test-exploding 1.0: cannot be imported: ModuleNotFoundError: No module named "
            "'tests.no_such_module'",
        ),
        (
            {"Answer": "tests.exploding_plugin:NOT_A_FACTORY"},
            "berth.plugins entry point 'Answer = tests.exploding_plugin:NOT_A_FACTORY' of "
            "distribution berth-test-exploding 1.0: is a int, not a plugin factory (a callable "
            "new_plugin(args, handle))",
        ),
        (
            {"Lonely": "tests.exploding_plugin:new_plugin_without_handle"},
            "berth.plugins entry point 'Lonely = tests.exploding_plugin:new_plugin_without_handle' "
            "of distribution berth-test-exploding 1.0: the factory cannot be called as "
            "new_plugin(args, handle)",
        ),
    ],
    ids=["clashes-with-in-tree", "cannot-be-imported", "not-callable", "wrong-signature"],
)
def test_an_unusable_entry_point_is_refused_naming_it_and_its_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry_points: dict[str, str], problem: str
) -> None:
    _install(tmp_path, monkeypatch, **entry_points)
    with pytest.raises(PluginPackageError) as refused:
        _registry()
    assert str(refused.value) == problem


def test_a_name_two_distributions_declare_is_refused_naming_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch, "berth-test-a", Twin=FACTORY)
    _install(tmp_path, monkeypatch, "berth-test-b", Twin=FACTORY)
    with pytest.raises(PluginPackageError) as refused:
        _registry()
    assert str(refused.value) == (
        "berth.plugins entry point 'Twin = tests.exploding_plugin:new_plugin' of distribution "
        "berth-test-b 1.0: the name 'Twin' is already declared by distribution berth-test-a 1.0"
    )


def test_a_profile_naming_an_unknown_plugin_lists_the_names_that_exist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch)
    registry = _registry()
    with pytest.raises(InvalidObjectError) as refused:
        load_profile(
            _profile(plugins={"multiPoint": {"enabled": [{"name": "Exploded"}]}}),
            registry=registry,
        )
    assert refused.value.field == "spec.plugins.multiPoint.enabled[0].name"
    listed = ", ".join(sorted(registry.names()))
    assert refused.value.problem == f"unknown plugin 'Exploded'; the plugins that exist: {listed}"
    assert "Exploding, ImageLocality" in listed


@pytest.mark.parametrize(
    ("args", "field", "problem"),
    [
        (
            {"at": "nowhere"},
            "spec.pluginConfig[0].args.at",
            "must be one of eventsToRegister, preEnqueue, preFilter",
        ),
        (
            {"crash": True},
            "spec.pluginConfig[0].args",
            "plugin 'Exploding' cannot be built: KeyError: 'crash'",
        ),
    ],
    ids=["invalid-plugin-args-error", "factory-crashes"],
)
def test_a_factory_that_refuses_its_args_makes_the_profile_invalid_at_them(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: dict[str, Any],
    field: str,
    problem: str,
) -> None:
    _install(tmp_path, monkeypatch)
    with pytest.raises(InvalidObjectError) as refused:
        load_profile(_naming_exploding(args), registry=_registry())
    assert refused.value.field == field
    assert refused.value.problem.startswith(problem)


def test_a_factory_that_builds_a_plugin_of_another_name_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, monkeypatch, Alias=FACTORY)
    with pytest.raises(InvalidObjectError) as refused:
        load_profile(
            _profile(
                plugins={"multiPoint": {"enabled": [{"name": "Alias"}]}},
                pluginConfig=[{"name": "Alias", "args": {"at": "filter"}}],
            ),
            registry=_registry(),
        )
    assert refused.value.field == "spec.plugins.multiPoint.enabled[0].name"
    assert refused.value.problem == "the factory of plugin 'Alias' built a plugin named 'Exploding'"


def test_a_plugin_that_cannot_say_which_events_help_makes_the_profile_invalid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Asked once at build: raising later would break every cluster event of the profile.
    _install(tmp_path, monkeypatch)
    with pytest.raises(InvalidObjectError) as refused:
        load_profile(_naming_exploding({"at": "eventsToRegister"}), registry=_registry())
    assert refused.value.field == "spec.plugins.multiPoint.enabled[0].name"
    assert refused.value.problem == (
        "plugin 'Exploding' cannot register its events: Exploded: Exploding blew up at "
        "eventsToRegister"
    )
