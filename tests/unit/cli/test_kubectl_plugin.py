"""Installing Berth puts `kubectl-berth` on PATH, the same CLI as `berth` under kubectl's name."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import berth

# The console scripts of the environment running the tests (the venv's bin directory).
SCRIPTS = Path(sys.executable).parent


def test_the_package_declares_kubectl_berth_as_the_berth_cli() -> None:
    scripts = {script.name: script.value for script in entry_points(group="console_scripts")}
    assert scripts["kubectl-berth"] == scripts["berth"] == "berth.cli.main:main"


def test_the_installed_kubectl_berth_script_dispatches_sub_commands() -> None:
    script = SCRIPTS / "kubectl-berth"
    assert script.is_file()
    result = subprocess.run(
        [str(script), "version"], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"berth {berth.__version__}\n"


def test_help_names_the_command_as_kubectl_users_type_it() -> None:
    result = subprocess.run(
        [str(SCRIPTS / "kubectl-berth"), "simulate", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: kubectl berth simulate ")
