"""SchedulerProfile documents: strict reading, kube-scheduler's defaults merge, and field paths.

Every refusal names the document's field path, including problems the engine finds
while building (which it places in the typed profile) and bad plugin args.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from berth.cli.simulate import InputError, load_profiles
from berth.engine.errors import MAX_PROBLEM_LENGTH, FieldError, InvalidObjectError
from berth.engine.framework import names
from berth.profiles import (
    DEFAULT_MULTI_POINT,
    load_profile,
    parse_profile_spec,
    with_defaults,
)
from tests.unit.engine.fakes import build_exactly


def _document(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": "p", "generation": 1},
        "spec": {"schedulerName": "s", **spec},
    }


def _refusal(document: dict[str, Any]) -> InvalidObjectError:
    with pytest.raises(InvalidObjectError) as raised:
        load_profile(document)
    return raised.value


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
    with pytest.raises(FieldError) as raised:
        build_exactly(spec)
    assert raised.value.field == field
    assert problem in str(raised.value)


def test_an_unknown_plugin_in_multi_point_is_named_where_the_user_wrote_it() -> None:
    # After the merge it sits behind the 15 defaults; the user wrote it first.
    refusal = _refusal(
        _document(plugins={"multiPoint": {"enabled": [{"name": "Typo"}, {"name": "Other"}]}})
    )
    assert refusal.field == "spec.plugins.multiPoint.enabled[0].name"
    assert refusal.problem.startswith("unknown plugin 'Typo'; the plugins that exist: ")


# ------------------------------------------------------------------ strict decoding


@pytest.mark.parametrize(
    ("document", "field"),
    [
        (_document(extender=[{"urlPrefix": "http://x"}]), "spec.extender"),
        (_document(extenders=[{"urlPrefix": "http://x", "verb": "f"}]), "spec.extenders[0].verb"),
        (_document(percentageOfNodeToScore=50), "spec.percentageOfNodeToScore"),
        (
            _document(plugins={"score": {"enable": [{"name": names.IMAGE_LOCALITY}]}}),
            "spec.plugins.score.enable",
        ),
        (
            _document(plugins={"score": {"enabled": [{"name": "ImageLocality", "wieght": 2}]}}),
            "spec.plugins.score.enabled[0].wieght",
        ),
        (_document(pluginConfig=[{"name": "NodeAffinity", "arg": {}}]), "spec.pluginConfig[0].arg"),
        ({**_document(), "specs": {}}, "specs"),
        (
            _document(
                pluginConfig=[
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"typ": "x"}}}
                ]
            ),
            "spec.pluginConfig[0].args.scoringStrategy.typ",
        ),
        (
            _document(pluginConfig=[{"name": "VolumeBinding", "args": {"bindTimeout": 5}}]),
            "spec.pluginConfig[0].args.bindTimeout",
        ),
    ],
    ids=[
        "misspelt-extenders",
        "extender",
        "misspelt-percentage",
        "plugin-set",
        "plugin",
        "plugin-config",
        "top-level",
        "fit-args",
        "volume-binding-args",
    ],
)
def test_unknown_fields_are_refused_by_name(document: dict[str, Any], field: str) -> None:
    refusal = _refusal(document)
    assert refusal.field == field
    assert "unknown field" in refusal.problem


def test_a_profile_file_with_an_unknown_field_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(_document(percentageOfNodeToScore=50)))
    with pytest.raises(InputError) as raised:
        load_profiles(path)
    assert "SchedulerProfile p: spec.percentageOfNodeToScore: unknown field" in str(raised.value)


# ------------------------------------------------------------------ robustness


@pytest.mark.parametrize(
    ("enabled", "problem"),
    [(5, "expected a list, got 5"), ({"name": "ImageLocality"}, "expected a list, got {")],
    ids=["number", "object"],
)
def test_enabled_that_is_not_a_list_is_refused(enabled: object, problem: str) -> None:
    refusal = _refusal(_document(plugins={"score": {"enabled": enabled}}))
    assert refusal.field == "spec.plugins.score.enabled"
    assert refusal.problem.startswith(problem)


@pytest.mark.parametrize(
    ("plugin_config", "field", "problem"),
    [
        (
            "{name: InterPodAffinity, args: {1: a, b: c}}",
            "spec.pluginConfig[0].args",
            "field names must be strings, got 1",
        ),
        (
            "{name: VolumeBinding, args: {bindTimeoutSeconds: 2024-01-01}}",
            "spec.pluginConfig[0].args.bindTimeoutSeconds",
            "expected a JSON value, got date",
        ),
    ],
    ids=["mixed-key-types", "date"],
)
def test_args_json_cannot_hold_are_refused(plugin_config: str, field: str, problem: str) -> None:
    # Written as YAML, because YAML is how such keys and values reach Berth.
    document = _document(pluginConfig=[yaml.safe_load(plugin_config)])
    refusal = _refusal(document)
    assert (refusal.field, refusal.problem) == (field, problem)


def test_deeply_nested_args_are_refused_with_a_short_message() -> None:
    deep: Any = "bottom"
    for _ in range(5000):
        deep = [deep]
    refusal = _refusal(
        _document(pluginConfig=[{"name": "NodeResourcesFit", "args": {"scoringStrategy": deep}}])
    )
    assert refusal.field.startswith("spec.pluginConfig[0].args.scoringStrategy[0]")
    assert refusal.problem == "nested more than 32 levels deep"
    assert len(str(refusal)) < 500


@pytest.mark.parametrize(
    "value",
    ["x" * 200_000, list(range(200_000)), {f"k{i}": i for i in range(50_000)}],
    ids=["string", "list", "object"],
)
def test_huge_values_do_not_make_huge_messages(value: object) -> None:
    refusal = _refusal(
        _document(
            pluginConfig=[
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": value}}}
            ]
        )
    )
    assert refusal.field == "spec.pluginConfig[0].args.scoringStrategy.type"
    assert len(refusal.problem) <= MAX_PROBLEM_LENGTH


def test_a_huge_unknown_plugin_name_stays_short() -> None:
    refusal = _refusal(_document(plugins={"filter": {"enabled": [{"name": "N" * 100_000}]}}))
    assert refusal.field == "spec.plugins.filter.enabled[0].name"
    assert "N" * 100 not in refusal.problem  # abbreviated; the names that exist follow it
    assert len(refusal.problem) <= MAX_PROBLEM_LENGTH


# ------------------------------------------------------------------ state read across points


@pytest.mark.parametrize(
    ("plugins", "field"),
    [
        (
            {"preScore": {"disabled": [{"name": names.INTER_POD_AFFINITY}]}},
            "spec.plugins.preScore.disabled[0].name",
        ),
        (
            {
                "preFilter": {
                    "disabled": [{"name": names.NODE_AFFINITY}, {"name": names.POD_TOPOLOGY_SPREAD}]
                }
            },
            "spec.plugins.preFilter.disabled[1].name",
        ),
        ({"preScore": {"disabled": [{"name": "*"}]}}, "spec.plugins.preScore.disabled[0].name"),
    ],
    ids=["inter-pod-affinity-pre-score", "topology-spread-pre-filter", "all-pre-score"],
)
def test_a_profile_that_cannot_schedule_is_refused(plugins: dict[str, Any], field: str) -> None:
    refusal = _refusal(_document(plugins=plugins))
    assert refusal.field == field
    assert "every pod would fail" in refusal.problem


def test_disabling_a_pre_score_kube_scheduler_recomputes_is_fine() -> None:
    # NodeAffinity's Score (upstream and here) computes what its PreScore would have.
    loaded = load_profile(
        _document(plugins={"preScore": {"disabled": [{"name": names.NODE_AFFINITY}]}})
    )
    assert names.NODE_AFFINITY in loaded.framework.plugin_names("score")
    assert names.NODE_AFFINITY not in loaded.framework.plugin_names("preScore")


def test_the_crd_keeps_unknown_fields_only_in_plugin_args() -> None:
    # Everything else is pruned or, with kubectl's strict field validation, refused at apply time.
    from tests.unit.test_manifests import PROFILE_CRD, crd_schema, walk_schema

    spec = crd_schema(PROFILE_CRD)["properties"]["spec"]
    preserving = [
        path
        for path, node in walk_schema(spec, "spec")
        if node.get("x-kubernetes-preserve-unknown-fields")
    ]
    assert preserving == ["spec.pluginConfig[].args"]
