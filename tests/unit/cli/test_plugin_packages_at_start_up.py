"""An unusable plugin package stops every entry point at start-up, naming the entry point.

`berth run` and `berth simulate` exit 2 with the message; under `kopf run -m
berth.kube.handlers` the startup handler stops the operator. A usable one is
announced and its plugins can be named in the profiles each entry point loads.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import kopf
import pytest
import yaml

from berth.cli.main import main
from berth.kube import wiring
from tests.builders import make_node, make_pod
from tests.plugin_packages import install_distribution

CLASH = (
    "berth.plugins entry point 'NodeName = tests.exploding_plugin:new_plugin' of distribution "
    "berth-test-clash 1.0: the name 'NodeName' is an in-tree plugin's; an installed plugin "
    "needs a name of its own"
)


@pytest.fixture
def clashing_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_distribution(
        tmp_path / "site",
        monkeypatch,
        name="berth-test-clash",
        entry_points={"NodeName": "tests.exploding_plugin:new_plugin"},
    )


@pytest.mark.usefixtures("clashing_package")
def test_berth_run_refuses_to_start(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    started: list[object] = []
    monkeypatch.setattr(kopf, "run", lambda **kwargs: started.append(kwargs))
    assert main(["run"]) == 2
    assert capsys.readouterr().err == f"berth run: {CLASH}\n"
    assert started == []


@pytest.mark.usefixtures("clashing_package")
def test_kopf_run_refuses_to_start() -> None:
    with pytest.raises(kopf.PermanentError) as stopped:
        wiring.plugins(kopf.Memo())
    assert str(stopped.value) == f"Berth cannot start: {CLASH}"


def test_berth_run_hands_its_registry_to_the_operator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_distribution(
        tmp_path,
        monkeypatch,
        name="berth-test-exploding",
        entry_points={"Exploding": "tests.exploding_plugin:new_plugin"},
    )
    handed: dict[str, kopf.Memo] = {}
    monkeypatch.setattr(kopf, "run", lambda *, clusterwide, memo: handed.update(memo=memo))
    assert main(["run"]) == 0
    # The startup handler uses it as it is: the packages are not loaded a second time.
    assert "Exploding" in wiring.plugins(handed["memo"]).names()
    assert wiring.plugins(handed["memo"]) is handed["memo"]["registry"]


@pytest.mark.usefixtures("clashing_package")
def test_berth_simulate_refuses_to_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(yaml.safe_dump(make_node("n").obj()))
    assert main(["simulate", "--nodes", str(nodes), "--pods", str(nodes)]) == 2
    assert capsys.readouterr().err == f"berth simulate: {CLASH}\n"


def test_berth_simulate_logs_and_uses_an_installed_plugin(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    install_distribution(
        tmp_path / "site",
        monkeypatch,
        name="berth-test-exploding",
        entry_points={"Exploding": "tests.exploding_plugin:new_plugin"},
    )
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(yaml.safe_dump(make_node("n").capacity(cpu="4", memory="4Gi", pods=10).obj()))
    pods = tmp_path / "pods.yaml"
    pods.write_text(
        yaml.safe_dump_all(
            [
                make_pod("fine").scheduler("plugged").obj(),
                make_pod("doomed").scheduler("plugged").label("explode", "yes").obj(),
            ]
        )
    )
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "berth.dev/v1alpha1",
                "kind": "SchedulerProfile",
                "metadata": {"name": "plugged"},
                "spec": {
                    "schedulerName": "plugged",
                    "plugins": {"multiPoint": {"enabled": [{"name": "Exploding"}]}},
                    "pluginConfig": [{"name": "Exploding", "args": {"at": "filter"}}],
                },
            }
        )
    )
    argv = ["--nodes", str(nodes), "--pods", str(pods), "--profile", str(profile)]
    caplog.set_level(logging.INFO)
    assert main(["simulate", *argv, "--output", "json"]) == 0
    captured = capsys.readouterr()
    assert (
        "loaded plugin Exploding from distribution berth-test-exploding version 1.0"
        in caplog.messages
    )
    assert captured.err == ""  # stderr is for warnings and errors only
    placed = {pod["name"]: pod["node"] for pod in json.loads(captured.out)["pods"]}
    assert placed == {"fine": "n", "doomed": None}
