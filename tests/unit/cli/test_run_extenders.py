"""The global `extenders:` of `berth run --config`: KubeSchedulerConfiguration's shape, strictly read.

A bad entry stops `berth run` at start (exit 2, one line naming it), TLS material
that cannot load included, as kube-scheduler refuses to start on it; `berth
simulate --profile` calls a profile's extenders as the live scheduler does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from berth.cli.main import main
from berth.engine.extenders import ExtenderConfig, ManagedResource
from berth.kube.settings import Settings, settings_document
from berth.profiles.extenders import parse_extenders
from tests.builders import make_node, make_pod
from tests.extender_server import ExtenderScript, ExtenderServer


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
                {
                    "urlPrefix": "https://y",
                    "enableHTTPS": True,
                    "tlsConfig": {"caData": "bm9wZQ=="},
                },
            ],
            "extenders[1].tlsConfig.caData: cannot load",
        ),
    ],
    ids=["no-weight", "unknown-field", "not-a-list", "unloadable-tls"],
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


def test_simulate_calls_a_profiles_extenders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(yaml.safe_dump_all([make_node("a").obj(), make_node("b").obj()]))
    pods = tmp_path / "pods.yaml"
    pods.write_text(yaml.safe_dump(make_pod("p").scheduler("licensed").obj()))
    with ExtenderServer(ExtenderScript(failed={"a": "no licence"})) as server:
        profile = tmp_path / "profile.yaml"
        profile.write_text(
            yaml.safe_dump(
                {
                    "kind": "SchedulerProfile",
                    "metadata": {"name": "licensed"},
                    "spec": {
                        "schedulerName": "licensed",
                        "extenders": [{"urlPrefix": server.url, "filterVerb": "filter"}],
                    },
                }
            )
        )
        argv = ["simulate", "--nodes", str(nodes), "--pods", str(pods), "--profile", str(profile)]
        argv += ["--output", "json"]
        assert main(argv) == 0
        assert len(server.bodies("filter")) == 1
    (placement,) = json.loads(capsys.readouterr().out)["pods"]
    assert placement["node"] == "b"
