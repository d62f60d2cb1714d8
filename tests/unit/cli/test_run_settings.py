"""`berth run` settings: defaults < config file < environment < flags, validated with named fields."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from berth.cli.main import get_parser, main
from berth.cli.run import ConfigError, resolve_settings


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
            "podMaxBackoffSeconds: must not be less than podInitialBackoffSeconds",
        ),
        ({"parallelBindz": 3}, "unknown setting 'parallelBindz'"),
        ({"metricsPort": "lots"}, "metricsPort: expected int, got 'lots'"),
    ],
    ids=["binds-range", "percentage-range", "backoff-order", "unknown-key", "wrong-type"],
)
def test_bad_settings_name_the_setting(
    tmp_path: Path, document: dict[str, object], problem: str
) -> None:
    config = tmp_path / "berth.yaml"
    config.write_text(yaml.safe_dump(document))
    with pytest.raises(ConfigError) as raised:
        resolve_settings(_args("--config", str(config)), {})
    assert problem in str(raised.value)


def test_write_config_to_round_trips(tmp_path: Path) -> None:
    written = tmp_path / "effective.yaml"
    assert main(["run", "--parallel-binds", "32", "--write-config-to", str(written)]) == 0
    document = yaml.safe_load(written.read_text())
    assert document["parallelBinds"] == 32
    again = resolve_settings(_args("--config", str(written)), {})
    assert again.parallel_binds == 32


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
    with pytest.raises(ConfigError, match="leaseDurationSeconds \\(10\\) must be greater than"):
        resolve_settings(_args("--lease-duration-seconds", "10"), {})
