"""`extenders:` lists: strict reading, kube-scheduler's defaults and validation, field paths.

The same list is read in a SchedulerProfile's `spec.extenders` and in the
global `extenders:` of `berth run --config`; until the cycles call extenders,
both are refused with one message instead of scheduling as if they were absent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from berth.cli.simulate import load_profiles
from berth.engine.errors import FieldError, InvalidObjectError
from berth.engine.extenders import (
    DEFAULT_HTTP_TIMEOUT_SECONDS,
    ExtenderConfig,
    ExtenderTLSConfig,
    ManagedResource,
)
from berth.profiles import load_profile, parse_profile_spec
from berth.profiles.extenders import (
    extender_document,
    parse_extenders,
    parse_go_duration,
)
from tests.builders import FAKE_PEM, extender_with_every_field


def test_every_field_is_read() -> None:
    (extender,) = parse_extenders([extender_with_every_field()], "extenders")
    assert extender == ExtenderConfig(
        url_prefix="https://licences.example:8443/scheduler",
        filter_verb="filter",
        prioritize_verb="prioritize",
        preempt_verb="preempt",
        bind_verb="bind",
        weight=5,
        enable_https=True,
        tls=ExtenderTLSConfig(
            insecure=False,
            server_name="licences.example",
            cert_file="/etc/tls/client.crt",
            key_file="/etc/tls/client.key",
            ca_file="/etc/tls/ca.crt",
            cert_data=FAKE_PEM,
            key_data=b"key",
            ca_data=FAKE_PEM,
        ),
        http_timeout_seconds=90.0,
        node_cache_capable=True,
        managed_resources=(ManagedResource("example.com/licence", ignored_by_scheduler=True),),
        ignorable=True,
    )


def test_defaults_as_kube_scheduler() -> None:
    (extender,) = parse_extenders([{"urlPrefix": "http://127.0.0.1:8888"}], "extenders")
    assert extender == ExtenderConfig(url_prefix="http://127.0.0.1:8888")
    assert extender.http_timeout_seconds == DEFAULT_HTTP_TIMEOUT_SECONDS == 5.0
    assert not (extender.is_filter or extender.is_prioritizer or extender.is_binder)
    assert not extender.supports_preemption


def test_a_zero_timeout_means_the_default() -> None:
    (extender,) = parse_extenders([{"urlPrefix": "http://x", "httpTimeout": "0s"}], "e")
    assert extender.http_timeout_seconds == DEFAULT_HTTP_TIMEOUT_SECONDS


def test_the_document_shape_reads_back_unless_redacted() -> None:
    extenders = parse_extenders([extender_with_every_field()], "extenders")
    document = extender_document(extenders[0], redact=False)
    assert parse_extenders([document], "extenders") == extenders
    shown = extender_document(extenders[0])
    assert shown["tlsConfig"]["keyData"] == "<redacted>"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30s", 30.0),
        ("1m30s", 90.0),
        ("1.5h", 5400.0),
        ("500ms", 0.5),
        ("0", 0.0),
        ("+2s", 2.0),
        ("-1s", -1.0),
        ("1h2m3s4ms", 3723.004),
        (".5s", 0.5),
        ("30", None),
        ("", None),
        ("1 s", None),
        ("1d", None),
        ("s", None),
    ],
)
def test_go_durations(text: str, seconds: float | None) -> None:
    parsed = parse_go_duration(text)
    assert parsed == pytest.approx(seconds) if seconds is not None else parsed is None


@pytest.mark.parametrize(
    ("extenders", "field", "problem"),
    [
        ([{"urlPrefix": "http://x", "filterverb": "f"}], "e[0].filterverb", "unknown field"),
        ([{"urlPrefix": "http://x", "tlsConfig": {"ca": "x"}}], "e[0].tlsConfig.ca", "unknown"),
        (
            [{"urlPrefix": "http://x", "managedResources": [{"name": "a.b/c", "ignored": True}]}],
            "e[0].managedResources[0].ignored",
            "unknown field",
        ),
        ([{"filterVerb": "filter"}], "e[0].urlPrefix", "must be set"),
        (
            [{"urlPrefix": "http://x", "prioritizeVerb": "p"}],
            "e[0].weight",
            "Invalid value: 0: must have a positive weight applied to it",
        ),
        (
            [{"urlPrefix": "http://x", "prioritizeVerb": "p", "weight": -1}],
            "e[0].weight",
            "must have a positive weight",
        ),
        (
            [
                {"urlPrefix": "http://a", "bindVerb": "b"},
                {"urlPrefix": "http://b", "bindVerb": "b"},
            ],
            "e",
            "only one extender can implement bind",
        ),
        (
            [{"urlPrefix": "http://x", "managedResources": [{"name": "cpu"}]}],
            "e[0].managedResources[0].name",
            "is an invalid extended resource name",
        ),
        (
            [{"urlPrefix": "http://x", "managedResources": [{"name": "kubernetes.io/gpu"}]}],
            "e[0].managedResources[0].name",
            "is an invalid extended resource name",
        ),
        (
            [{"urlPrefix": "http://x", "managedResources": [{"name": "Example.com/gpu"}]}],
            "e[0].managedResources[0].name",
            "prefix part",
        ),
        (
            [
                {"urlPrefix": "http://a", "managedResources": [{"name": "example.com/gpu"}]},
                {"urlPrefix": "http://b", "managedResources": [{"name": "example.com/gpu"}]},
            ],
            "e[1].managedResources[0].name",
            "duplicate extender managed resource name",
        ),
        ([{"urlPrefix": "http://x", "httpTimeout": 30}], "e[0].httpTimeout", 'such as "30s"'),
        ([{"urlPrefix": "http://x", "httpTimeout": "30"}], "e[0].httpTimeout", 'such as "30s"'),
        ([{"urlPrefix": "http://x", "httpTimeout": "-1s"}], "e[0].httpTimeout", "negative"),
        ([{"urlPrefix": "http://x", "weight": "5"}], "e[0].weight", "expected an integer"),
        ([{"urlPrefix": "http://x", "weight": True}], "e[0].weight", "expected an integer"),
        ([{"urlPrefix": "http://x", "ignorable": "yes"}], "e[0].ignorable", "true or false"),
        ([{"urlPrefix": 5}], "e[0].urlPrefix", "expected a string"),
        (
            [{"urlPrefix": "http://x", "tlsConfig": {"caData": "not base64!"}}],
            "e[0].tlsConfig.caData",
            "base64",
        ),
        ([{"urlPrefix": "http://x", "managedResources": {}}], "e[0].managedResources", "a list"),
        ("http://x", "e", "expected a list of extenders"),
        (["http://x"], "e[0]", "expected an object"),
    ],
    ids=[
        "unknown-field",
        "unknown-tls-field",
        "unknown-managed-field",
        "no-url",
        "prioritize-without-weight",
        "negative-weight",
        "two-binders",
        "native-managed-resource",
        "kubernetes-io-managed-resource",
        "bad-managed-name",
        "managed-twice",
        "timeout-number",
        "timeout-unitless",
        "timeout-negative",
        "weight-string",
        "weight-bool",
        "ignorable-string",
        "url-number",
        "bad-pem",
        "managed-not-list",
        "not-a-list",
        "entry-not-object",
    ],
)
def test_bad_extenders_are_refused_by_field(extenders: Any, field: str, problem: str) -> None:
    with pytest.raises(FieldError) as raised:
        parse_extenders(extenders, "e")
    assert raised.value.field == field
    assert problem in raised.value.problem


def test_a_filter_only_extender_needs_no_weight() -> None:
    (extender,) = parse_extenders([{"urlPrefix": "http://x", "filterVerb": "f"}], "e")
    assert extender.weight == 0


def test_a_profile_carries_its_extenders_in_order() -> None:
    config = parse_profile_spec(
        {
            "schedulerName": "s",
            "extenders": [{"urlPrefix": "http://a"}, {"urlPrefix": "http://b", "ignorable": True}],
        }
    )
    assert [extender.url_prefix for extender in config.extenders] == ["http://a", "http://b"]


def test_a_bad_extender_in_a_profile_names_the_document_field() -> None:
    document = {
        "kind": "SchedulerProfile",
        "metadata": {"name": "p"},
        "spec": {"schedulerName": "s", "extenders": [{"urlPrefix": "http://a", "weight": "x"}]},
    }
    with pytest.raises(InvalidObjectError) as raised:
        load_profile(document)
    assert (
        str(raised.value)
        == "SchedulerProfile p: spec.extenders[0].weight: expected an integer, got 'x'"
    )


def _with_extenders() -> dict[str, Any]:
    return {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": "p"},
        "spec": {"schedulerName": "s", "extenders": [{"urlPrefix": "http://127.0.0.1:1"}]},
    }


def test_a_profile_runs_with_its_extenders_after_the_global_ones() -> None:
    own = ExtenderConfig(url_prefix="http://127.0.0.1:1")
    first = ExtenderConfig(url_prefix="http://global", ignorable=True)
    second = ExtenderConfig(url_prefix="http://global-2")
    framework = load_profile(_with_extenders(), extenders=(first, second)).framework
    # In call order: the non-ignorable first, each group as listed (global before own).
    assert framework.extenders == (second, own, first)


def test_global_and_profile_extenders_are_checked_as_one_list() -> None:
    document = _with_extenders()
    document["spec"]["extenders"] = [{"urlPrefix": "http://b", "bindVerb": "bind"}]
    binder = ExtenderConfig(url_prefix="http://a", bind_verb="bind")
    with pytest.raises(InvalidObjectError) as raised:
        load_profile(document, extenders=(binder,))
    assert raised.value.field == "spec.extenders"
    assert "only one extender can implement bind" in raised.value.problem


def test_resources_ignored_by_the_scheduler_replace_node_resources_fit_ignored_resources() -> None:
    document = _with_extenders()
    document["spec"]["extenders"][0]["managedResources"] = [
        {"name": "example.com/gpu", "ignoredByScheduler": True},
        {"name": "example.com/seen"},
    ]
    document["spec"]["pluginConfig"] = [
        {"name": "NodeResourcesFit", "args": {"ignoredResources": ["example.com/other"]}}
    ]
    framework = load_profile(document).framework
    assert framework.config.plugin_args["NodeResourcesFit"]["ignoredResources"] == [
        "example.com/gpu"
    ]


def test_simulate_reads_a_profile_with_extenders(tmp_path: Path) -> None:
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(_with_extenders()))
    (framework,) = load_profiles(path).values()
    assert [extender.url_prefix for extender in framework.extenders] == ["http://127.0.0.1:1"]


def test_an_empty_extender_list_is_no_extenders() -> None:
    document = _with_extenders()
    document["spec"]["extenders"] = []
    assert load_profile(document).scheduler_name == "s"
