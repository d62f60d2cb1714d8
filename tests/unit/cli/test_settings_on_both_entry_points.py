"""Every BERTH_* variable takes effect the same way under `berth run` and `kopf run -m berth.kube.handlers`.

Both entry points are driven up to the point where kopf would start peering:
`berth run` through its CLI (kopf.run replaced by a recorder), `kopf run` as
kopf's own CLI leaves the settings before Berth's startup handler, which then
configures both.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kopf
import pytest

from berth.cli.main import main
from berth.kube import wiring
from berth.kube.settings import SETTINGS, Settings

README = Path(__file__).resolve().parents[3] / "README.md"

EntryPoint = Callable[..., tuple[Settings, kopf.OperatorSettings]]


def via_berth_run(
    monkeypatch: pytest.MonkeyPatch, environ: dict[str, str]
) -> tuple[Settings, kopf.OperatorSettings]:
    """`berth run`, then the startup handler's configuration with what it handed to kopf."""
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    handed: dict[str, Any] = {}

    def record(*, clusterwide: bool, memo: kopf.Memo) -> None:
        # Keyword-only and nothing else: peering must not be configured here as well.
        handed.update(clusterwide=clusterwide, memo=memo)

    monkeypatch.setattr(kopf, "run", record)
    assert main(["run"]) == 0
    kopf_settings = kopf.OperatorSettings()
    kopf_settings.peering.clusterwide = handed["clusterwide"]
    return wiring.configure(kopf_settings, handed["memo"]), kopf_settings


def via_kopf_run(
    monkeypatch: pytest.MonkeyPatch,
    environ: dict[str, str],
    *,
    standalone: bool | None = None,
    peering: str | None = None,
    priority: int | None = None,
) -> tuple[Settings, kopf.OperatorSettings]:
    """`kopf run -A [--standalone] [--peering NAME] [--priority N] -m berth.kube.handlers`."""
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    kopf_settings = kopf.OperatorSettings()
    # What kopf's `run` does with its command-line options before any startup handler.
    kopf_settings.peering.clusterwide = True
    if peering is not None:
        kopf_settings.peering.mandatory = True
        kopf_settings.peering.name = peering
    if standalone is not None:
        kopf_settings.peering.standalone = standalone
    if priority is not None:
        kopf_settings.peering.priority = priority
    return wiring.configure(kopf_settings, kopf.Memo()), kopf_settings


ENTRY_POINTS = [
    pytest.param(via_berth_run, id="berth-run"),
    pytest.param(via_kopf_run, id="kopf-run"),
]


# variable -> (its text, what the process then does: an observation, and the value expected)
EFFECTS: dict[str, tuple[str, Callable[[Settings, kopf.OperatorSettings], object], object]] = {
    "BERTH_KUBECONFIG": (
        "/etc/berth/kubeconfig",
        lambda s, k: s.kubeconfig,
        "/etc/berth/kubeconfig",
    ),
    "BERTH_METRICS_HOST": ("127.0.0.9", lambda s, k: s.metrics_host, "127.0.0.9"),
    "BERTH_METRICS_PORT": ("9999", lambda s, k: s.metrics_port, 9999),
    "BERTH_PARALLEL_BINDS": ("7", lambda s, k: s.parallel_binds, 7),
    "BERTH_POD_INITIAL_BACKOFF_SECONDS": ("0.5", lambda s, k: s.pod_initial_backoff_seconds, 0.5),
    "BERTH_POD_MAX_BACKOFF_SECONDS": ("12.5", lambda s, k: s.pod_max_backoff_seconds, 12.5),
    "BERTH_POD_MAX_IN_UNSCHEDULABLE_SECONDS": (
        "60",
        lambda s, k: s.pod_max_in_unschedulable_seconds,
        60.0,
    ),
    "BERTH_PERCENTAGE_OF_NODES_TO_SCORE": ("42", lambda s, k: s.percentage_of_nodes_to_score, 42),
    "BERTH_PEERING": ("elsewhere", lambda s, k: k.peering.name, "elsewhere"),
    "BERTH_PEERING_LIFETIME_SECONDS": ("30", lambda s, k: k.peering.lifetime, 30),
    "BERTH_STANDALONE": (
        "true",
        lambda s, k: (k.peering.standalone, k.peering.mandatory),
        (True, False),
    ),
    "BERTH_PRIORITY": ("7", lambda s, k: k.peering.priority, 7),
    "BERTH_LEASE_NAME": ("berth-2", lambda s, k: s.lease_name, "berth-2"),
    "BERTH_LEASE_NAMESPACE": ("schedulers", lambda s, k: s.lease_namespace, "schedulers"),
    "BERTH_LEASE_DURATION_SECONDS": (
        "20",
        lambda s, k: s.lease_timing().lease_duration,
        20,
    ),
    "BERTH_LEASE_RENEW_DEADLINE_SECONDS": (
        "12",
        lambda s, k: s.lease_timing().renew_deadline,
        12.0,
    ),
    "BERTH_LEASE_RETRY_PERIOD_SECONDS": (
        "3",
        lambda s, k: s.lease_timing().retry_period,
        3.0,
    ),
    "BERTH_SEED": ("1234", lambda s, k: s.seed, 1234),
}


def test_every_setting_has_a_flag_a_variable_and_an_effect_to_check() -> None:
    # `extenders` is a list read from the config file only: no flag or variable can hold it.
    assert {spec.field for spec in SETTINGS} | {"extenders"} == set(Settings.__dataclass_fields__)
    assert set(EFFECTS) == {spec.env for spec in SETTINGS}


def test_the_readme_documents_exactly_the_variables_berth_reads() -> None:
    documented = set(re.findall(r"`(BERTH_[A-Z_]+)`", README.read_text(encoding="utf-8")))
    assert documented == {spec.env for spec in SETTINGS} | {"BERTH_CONFIG"}


@pytest.mark.parametrize("entry_point", ENTRY_POINTS)
@pytest.mark.parametrize("variable", sorted(EFFECTS))
def test_each_variable_takes_effect(
    monkeypatch: pytest.MonkeyPatch, entry_point: EntryPoint, variable: str
) -> None:
    text, observe, expected = EFFECTS[variable]
    settings, kopf_settings = entry_point(monkeypatch, {variable: text})
    assert observe(settings, kopf_settings) == expected
    # ... and nothing else moved from its default.
    others = {
        spec.field: getattr(Settings(), spec.field) for spec in SETTINGS if spec.env != variable
    }
    assert {field: getattr(settings, field) for field in others} == others


@pytest.mark.parametrize("entry_point", ENTRY_POINTS)
def test_both_entry_points_agree_on_everything(
    monkeypatch: pytest.MonkeyPatch, entry_point: EntryPoint, tmp_path: Path
) -> None:
    config = tmp_path / "berth.yaml"
    config.write_text("parallelBinds: 3\nseed: 99\n")
    environ = {variable: text for variable, (text, _, _) in EFFECTS.items()}
    environ["BERTH_CONFIG"] = str(config)
    settings, kopf_settings = entry_point(monkeypatch, environ)
    for variable, (_, observe, expected) in EFFECTS.items():
        assert observe(settings, kopf_settings) == expected, variable


@pytest.mark.parametrize("entry_point", ENTRY_POINTS)
def test_kubeconfig_variable_is_below_berth_kubeconfig(
    monkeypatch: pytest.MonkeyPatch, entry_point: EntryPoint
) -> None:
    settings, _ = entry_point(monkeypatch, {"KUBECONFIG": "/home/dev/.kube/config"})
    assert settings.kubeconfig == "/home/dev/.kube/config"
    settings, _ = entry_point(
        monkeypatch, {"KUBECONFIG": "/home/dev/.kube/config", "BERTH_KUBECONFIG": "/etc/k"}
    )
    assert settings.kubeconfig == "/etc/k"


@pytest.mark.parametrize("entry_point", ENTRY_POINTS)
def test_without_a_priority_replicas_get_distinct_ones_from_their_pod_ip(
    monkeypatch: pytest.MonkeyPatch, entry_point: EntryPoint
) -> None:
    _, first = entry_point(monkeypatch, {"POD_IP": "10.0.0.7"})
    _, second = entry_point(monkeypatch, {"POD_IP": "10.0.0.8"})
    assert (first.peering.priority, second.peering.priority) == (0x0A000007, 0x0A000008)
    assert first.peering.mandatory and first.peering.clusterwide


BAD_VARIABLES = [
    pytest.param("BERTH_PARALLEL_BINDS", "x", "expected int, got 'x'", id="not-int"),
    pytest.param("BERTH_STANDALONE", "maybe", "expected true or false, got 'maybe'", id="not-bool"),
    pytest.param("BERTH_POD_MAX_BACKOFF_SECONDS", "nan", "expected number, got 'nan'", id="nan"),
    pytest.param(
        "BERTH_PERCENTAGE_OF_NODES_TO_SCORE",
        "101",
        "must be between 0 and 100, got 101",
        id="out-of-range",
    ),
]


@pytest.mark.parametrize(("variable", "text", "problem"), BAD_VARIABLES)
def test_a_bad_variable_stops_kopf_run_naming_it(
    monkeypatch: pytest.MonkeyPatch, variable: str, text: str, problem: str
) -> None:
    with pytest.raises(kopf.PermanentError) as stopped:
        via_kopf_run(monkeypatch, {variable: text})
    assert str(stopped.value) == f"Berth cannot start: {variable}: {problem}"


@pytest.mark.parametrize(("variable", "text", "problem"), BAD_VARIABLES)
def test_a_bad_variable_stops_berth_run_naming_it(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    text: str,
    problem: str,
) -> None:
    monkeypatch.setenv(variable, text)
    assert main(["run"]) == 2
    assert capsys.readouterr().err == f"berth run: {variable}: {problem}\n"


def test_kopf_runs_own_peering_options_are_its_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    environ = {"BERTH_PEERING": "from-env", "BERTH_PRIORITY": "3"}
    _, kopf_settings = via_kopf_run(monkeypatch, environ, peering="from-flag", priority=5)
    assert (kopf_settings.peering.name, kopf_settings.peering.priority) == ("from-flag", 5)
    settings, kopf_settings = via_kopf_run(monkeypatch, environ, standalone=True)
    assert settings.standalone and kopf_settings.peering.standalone


def test_an_empty_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    settings, _ = via_kopf_run(monkeypatch, {"BERTH_SEED": "", "BERTH_METRICS_PORT": ""})
    assert (settings.seed, settings.metrics_port) == (None, Settings().metrics_port)
