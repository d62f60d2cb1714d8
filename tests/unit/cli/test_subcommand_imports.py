"""A command line naming one sub-command imports that sub-command's module alone.

`berth run` is the scheduler's start-up: the offline commands' modules (simulate's
reports, the control-plane tools) must not be imported on its way (issue 13).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from berth.cli.main import SUBCOMMAND_MODULES, command_named, get_parser, main


def _modules_after(code: str) -> set[str]:
    # A fresh interpreter: this test process has imported every command already.
    probe = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    return set(result.stdout.split())


def test_the_run_command_line_imports_no_other_sub_command() -> None:
    loaded = _modules_after("from berth.cli.main import get_parser; get_parser('berth', 'run')")
    assert "berth.cli.run" in loaded
    others = {module for name, module in SUBCOMMAND_MODULES.items() if name != "run"}
    assert not others & loaded


@pytest.mark.parametrize("argv", [["--help"], ["--help", "run"]])
def test_top_level_help_lists_every_sub_command(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(argv)
    listed = capsys.readouterr().out
    for name in (*SUBCOMMAND_MODULES, "version"):
        assert name in listed


def test_an_unknown_command_is_refused_among_all_choices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["schedule"])
    assert exited.value.code == 2
    assert "invalid choice: 'schedule'" in capsys.readouterr().err


def test_the_command_is_the_first_word_unless_an_option_comes_first() -> None:
    assert command_named(["run", "--metrics-port", "9100"]) == "run"
    assert command_named(["--help", "run"]) is None
    assert command_named(["--version"]) is None
    assert command_named([]) is None
    assert get_parser(command="version").parse_args(["version"]).command == "version"
