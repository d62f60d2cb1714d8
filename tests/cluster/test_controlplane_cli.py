"""`berth controlplane up --detach | env | down` leaves a usable cluster, then nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from berth.controlplane.binaries import find_binaries

pytestmark = pytest.mark.cluster

OPERATOR_DIR = Path(__file__).resolve().parents[2] / "operator"


def controlplane_cli(state_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(OPERATOR_DIR), environment.get("PYTHONPATH")])
    )
    return subprocess.run(
        [sys.executable, "-m", "berth.controlplane", "--dir", str(state_dir), *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )


def exports(output: str) -> dict[str, str]:
    assignments = (line.removeprefix("export ").partition("=") for line in output.splitlines())
    return {name: value for name, _, value in assignments}


def test_up_env_down_round_trip(tmp_path: Path) -> None:
    state_dir = tmp_path / "controlplane"
    kubectl = str(find_binaries(build=True).kubectl)
    try:
        up = controlplane_cli(state_dir, "up", "--detach")
        assert up.returncode == 0, up.stderr
        environment = exports(controlplane_cli(state_dir, "env").stdout)
        assert environment == exports(up.stdout)

        state = json.loads((state_dir / "state.json").read_text())
        assert set(state["processes"]) == {"etcd", "kube-apiserver", "kube-controller-manager"}

        nodes = subprocess.run(
            [kubectl, f"--kubeconfig={environment['KUBECONFIG']}", "get", "nodes"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert nodes.returncode == 0, nodes.stderr
        assert nodes.stderr.strip() == "No resources found"

        second_up = controlplane_cli(state_dir, "up", "--detach")
        assert second_up.returncode == 1
        assert "already running" in second_up.stderr
    finally:
        down = controlplane_cli(state_dir, "down")
    assert down.returncode == 0, down.stderr
    assert not state_dir.exists()
    assert controlplane_cli(state_dir, "env").returncode == 1
