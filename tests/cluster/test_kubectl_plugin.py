"""`kubectl berth ...` works: kubectl v1.37 finds the installed `kubectl-berth` on PATH."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import berth
from berth.controlplane.binaries import find_binaries

pytestmark = pytest.mark.cluster

# The console scripts of the environment running the tests (the venv's bin directory).
SCRIPTS = Path(sys.executable).parent


def _kubectl(*args: str) -> subprocess.CompletedProcess[str]:
    kubectl = find_binaries(build=True).kubectl
    # Only kubectl's directory and the venv's: the plugin must be found where pip put it.
    environment = {**os.environ, "PATH": os.pathsep.join([str(kubectl.parent), str(SCRIPTS)])}
    return subprocess.run(
        [str(kubectl), *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )


def test_kubectl_runs_berth_as_a_plugin() -> None:
    result = _kubectl("berth", "version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"berth {berth.__version__}\n"


def test_kubectl_lists_the_berth_plugin() -> None:
    result = _kubectl("plugin", "list", "--name-only")
    assert result.returncode == 0, result.stderr
    assert "kubectl-berth" in result.stdout.split()
