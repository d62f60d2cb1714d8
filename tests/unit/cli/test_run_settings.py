"""`berth run` settings: defaults < config file < environment < flags, validated with named fields.

The config file is decoded strictly (kube-scheduler's "unknown field"): an
unknown key or a wrongly typed value is refused, naming the key, with exit
code 2 and one line on stderr.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from berth.cli.main import get_parser, main
from berth.cli.run import resolve_settings
from berth.kube.settings import SettingsError


def _args(*argv: str):  # type: ignore[no-untyped-def]
    return get_parser().parse_args(["run", *argv])


def test_precedence_file_then_environment_then_flags(tmp_path: Path) -> None:
    config = tmp_path / "berth.yaml"
    config.write_text(
        yaml.safe_dump({"parallelBinds": 8, "metricsPort": 9000, "podMaxBackoffSeconds": 20})
    )
    settings = resolve_settings(
        _args("--config", str(config), "--metrics-port", "9100"),
        {"BERTH_PARALLEL_BINDS": "16"},
    )
    assert settings.parallel_binds == 16  # environment beats the file
    assert settings.metrics_port == 9100  # the flag beats everything
    assert settings.pod_max_backoff_seconds == 20.0  # the file beats the default


def test_the_config_flag_beats_the_config_variable(tmp_path: Path) -> None:
    flagged, named = tmp_path / "flagged.yaml", tmp_path / "named.yaml"
    flagged.write_text("parallelBinds: 5\n")
    named.write_text("parallelBinds: 6\nseed: 7\n")
    settings = resolve_settings(_args("--config", str(flagged)), {"BERTH_CONFIG": str(named)})
    assert (settings.parallel_binds, settings.seed) == (5, None)
    assert resolve_settings(_args(), {"BERTH_CONFIG": str(named)}).seed == 7


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"parallelBinds": 0}, "parallelBinds: must be between 1 and 10000, got 0"),
        (
            {"percentageOfNodesToScore": 120},
            "percentageOfNodesToScore: must be between 0 and 100, got 120",
        ),
        (
            {"podMaxBackoffSeconds": 0.5},
            "podMaxBackoffSeconds: must not be less than podInitialBackoffSeconds (default)",
        ),
        ({"podInitialBackoffSeconds": 0}, "podInitialBackoffSeconds: must be positive, got 0.0"),
        (
            {"parallelBindz": 3},
            'unknown field "parallelBindz" (known: kubeconfig, leaseDurationSeconds',
        ),
        ({"peering": "berth"}, 'unknown field "peering"'),  # the flag's name, not the key
        ({"metricsPort": "lots"}, "metricsPort: expected int, got 'lots'"),
        ({"metricsPort": "9000"}, "metricsPort: expected int, got '9000'"),
        ({"parallelBinds": 7.5}, "parallelBinds: expected int, got 7.5"),
        ({"parallelBinds": True}, "parallelBinds: expected int, got True"),
        ({"standalone": "yes"}, "standalone: expected true or false, got 'yes'"),
        ({"podMaxBackoffSeconds": "20s"}, "podMaxBackoffSeconds: expected number, got '20s'"),
        ({"metricsHost": 8080}, "metricsHost: expected string, got 8080"),
        ({"seed": "x"}, "seed: expected int or null, got 'x'"),
    ],
    ids=[
        "binds-range",
        "percentage-range",
        "backoff-order",
        "backoff-positive",
        "unknown-key",
        "flag-name-is-not-a-key",
        "word-for-int",
        "quoted-int",
        "float-for-int",
        "bool-for-int",
        "word-for-bool",
        "unit-for-number",
        "int-for-string",
        "word-for-optional-int",
    ],
)
def test_bad_settings_name_the_setting(
    tmp_path: Path, document: dict[str, object], problem: str
) -> None:
    config = tmp_path / "berth.yaml"
    config.write_text(yaml.safe_dump(document))
    with pytest.raises(SettingsError) as raised:
        resolve_settings(_args("--config", str(config)), {})
    assert f"{config}: {problem}" in str(raised.value)


def test_a_bad_flag_value_is_named_by_its_flag() -> None:
    with pytest.raises(SettingsError, match=r"^--parallel-binds: must be between 1 and 10000"):
        resolve_settings(_args("--parallel-binds", "0"), {})


def test_null_keeps_an_optional_setting_unset(tmp_path: Path) -> None:
    config = tmp_path / "berth.yaml"
    config.write_text("seed: null\npriority: 9\npodMaxBackoffSeconds: 12\n")
    settings = resolve_settings(_args("--config", str(config)), {})
    assert (settings.seed, settings.priority, settings.pod_max_backoff_seconds) == (None, 9, 12.0)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("parallelBindz: 3\n", 'unknown field "parallelBindz"'),
        ("metricsPort: [1, 2]\n", "metricsPort: expected int, got [1, 2]"),
        ("parallelBinds: [\n", "not valid YAML: "),
        ("- parallelBinds\n", "expected a mapping of settings, got list"),
    ],
    ids=["unknown-key", "wrong-type", "broken-yaml", "not-a-mapping"],
)
def test_berth_run_refuses_a_bad_config_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, problem: str
) -> None:
    config = tmp_path / "berth.yaml"
    config.write_text(content)
    assert main(["run", "--config", str(config)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"berth run: {config}: {problem}")
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err


def test_a_missing_config_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "absent.yaml"
    assert main(["run", "--config", str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"berth run: {missing}: cannot read: No such file or directory\n"
    )


def test_write_config_to_round_trips(tmp_path: Path) -> None:
    written = tmp_path / "effective.yaml"
    assert main(["run", "--parallel-binds", "32", "--write-config-to", str(written)]) == 0
    document = yaml.safe_load(written.read_text())
    assert document["parallelBinds"] == 32
    assert "seed" not in document  # unset optional settings are left out, not written as null
    again = resolve_settings(_args("--config", str(written)), {})
    assert again == resolve_settings(_args("--parallel-binds", "32"), {})


def test_lease_settings_from_flags_environment_and_the_pods_namespace() -> None:
    settings = resolve_settings(
        _args("--lease-name", "berth-2", "--lease-renew-deadline-seconds", "8"),
        {"BERTH_LEASE_RETRY_PERIOD_SECONDS": "1.5", "POD_NAMESPACE": "schedulers"},
    )
    assert settings.lease_timing().problems() == []
    assert (settings.lease_name, settings.lease_namespace) == ("berth-2", "schedulers")
    assert (settings.lease_duration_seconds, settings.lease_renew_deadline_seconds) == (15, 8.0)
    assert settings.lease_retry_period_seconds == 1.5


def test_a_renew_deadline_not_shorter_than_the_lease_is_refused_by_name() -> None:
    with pytest.raises(SettingsError, match="leaseDurationSeconds \\(10\\) must be greater than"):
        resolve_settings(_args("--lease-duration-seconds", "10"), {})
