"""The global `extenders:` of `berth run --config`: KubeSchedulerConfiguration's shape, strictly read.

Preemption does not consult extenders yet, so an extender with a preemptVerb is
refused (exit 2, one line) rather than run as if the verb were absent; `berth
simulate --profile` refuses such a profile the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from berth.cli.main import main
from berth.engine.extenders import ExtenderConfig, ManagedResource
from berth.kube.settings import Settings, settings_document
from berth.profiles.extenders import parse_extenders
from tests.builders import make_node, make_pod


def _run(tmp_path: Path, document: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> str:
    config = tmp_path / "berth.yaml"
    config.write_text(yaml.safe_dump(document))
    assert main(["run", "--config", str(config)]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    return captured.err.removeprefix(f"berth run: {config}: ").rstrip("\n")


@pytest.mark.parametrize(
    ("extenders", "problem"),
    [
        (
            [{"urlPrefix": "http://x", "prioritizeVerb": "p"}],
            "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
        ),
        ([{"urlPrefix": "http://x", "verb": "f"}], "extenders[0].verb: unknown field"),
        ({"urlPrefix": "http://x"}, "extenders: expected a list of extenders, got {"),
        (
            [
                {"urlPrefix": "http://x", "filterVerb": "filter"},
                {"urlPrefix": "http://y", "preemptVerb": "p"},
            ],
            "extenders[1].preemptVerb: the preempt verb is not called by this scheduler yet",
        ),
    ],
    ids=["no-weight", "unknown-field", "not-a-list", "preempt-verb-not-called-yet"],
)
def test_berth_run_names_the_extender_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extenders: Any, problem: str
) -> None:
    assert _run(tmp_path, {"extenders": extenders}, capsys).startswith(problem)


def test_an_empty_extender_list_is_accepted(tmp_path: Path) -> None:
    config = tmp_path / "berth.yaml"
    config.write_text("extenders: []\nparallelBinds: 3\n")
    written = tmp_path / "effective.yaml"
    assert main(["run", "--config", str(config), "--write-config-to", str(written)]) == 0
    assert "extenders" not in yaml.safe_load(written.read_text())


def test_the_written_config_holds_the_extenders_as_they_read_back() -> None:
    extenders = (
        ExtenderConfig(
            url_prefix="http://127.0.0.1:8888",
            prioritize_verb="prioritize",
            weight=5,
            http_timeout_seconds=1.5,
            managed_resources=(ManagedResource("example.com/gpu", ignored_by_scheduler=True),),
        ),
    )
    document = settings_document(Settings(extenders=extenders))
    assert parse_extenders(document["extenders"], "extenders") == extenders
    assert Settings(extenders=extenders).to_dict()["extenders"][0]["urlPrefix"] == (
        "http://127.0.0.1:8888"
    )


def test_simulate_exits_2_for_a_profile_with_a_preempting_extender(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(yaml.safe_dump(make_node("a").obj()))
    pods = tmp_path / "pods.yaml"
    pods.write_text(yaml.safe_dump(make_pod("p").obj()))
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        yaml.safe_dump(
            {
                "kind": "SchedulerProfile",
                "metadata": {"name": "licensed"},
                "spec": {
                    "schedulerName": "x",
                    "extenders": [{"urlPrefix": "http://x", "preemptVerb": "preempt"}],
                },
            }
        )
    )
    argv = ["simulate", "--nodes", str(nodes), "--pods", str(pods), "--profile", str(profile)]
    assert main(argv) == 2
    assert (
        "SchedulerProfile licensed: spec.extenders[0].preemptVerb: "
        "the preempt verb is not called by this scheduler yet"
    ) in capsys.readouterr().err
