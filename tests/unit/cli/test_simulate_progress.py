"""A long `berth simulate` shows how far it is on a terminal, and never in piped or captured stderr."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from berth.cli.main import main
from berth.cli.progress import LONG_RUN, TerminalProgress, terminal_progress
from tests.builders import make_node, make_pod
from tests.unit.cli.simulate_support import simulate, write


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Clock:
    def __init__(self, *, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _files(tmp_path: Path, pods: int) -> tuple[Path, Path]:
    nodes = write(
        tmp_path / "nodes.yaml",
        *(make_node(f"n{i}").capacity(cpu="64", memory="256Gi", pods=500).obj() for i in range(2)),
    )
    return nodes, write(tmp_path / "pods.yaml", *(make_pod(f"p{i}").obj() for i in range(pods)))


def test_a_long_run_on_a_terminal_reports_progress_on_stderr(tmp_path: Path) -> None:
    nodes, pods = _files(tmp_path, LONG_RUN + 1)
    terminal, out = _Terminal(), io.StringIO()
    with redirect_stderr(terminal), redirect_stdout(out):
        code = main(["simulate", "--nodes", str(nodes), "--pods", str(pods), "--output", "json"])
    assert code == 0
    lines = terminal.getvalue().split("\r")
    assert lines[0] == ""
    assert lines[-1] == f"placed {LONG_RUN + 1}/{LONG_RUN + 1} pods\n"
    assert "placed 25/501 pods" in lines  # every 5%, rewritten in place
    assert len(json.loads(out.getvalue())["pods"]) == LONG_RUN + 1  # stdout: only the answer


def test_stderr_that_is_no_terminal_gets_no_progress(tmp_path: Path) -> None:
    nodes, pods = _files(tmp_path, LONG_RUN + 1)
    outcome = simulate("--nodes", nodes, "--pods", pods)  # stderr captured: not a terminal
    assert outcome.code == 0
    assert outcome.err == ""


def test_a_short_run_stays_quiet_even_on_a_terminal() -> None:
    assert terminal_progress(_Terminal(), total=LONG_RUN) is None
    assert terminal_progress(_Terminal(), total=LONG_RUN + 1) is not None
    assert terminal_progress(io.StringIO(), total=10 * LONG_RUN) is None


def test_the_line_is_rewritten_every_five_percent_or_every_second() -> None:
    terminal = _Terminal()
    progress = TerminalProgress(terminal, clock=_Clock(step=0.0))
    for done in range(1, 1001):
        progress(done, 1000)
    written = terminal.getvalue().split("\r")[1:]
    assert written == [f"placed {done}/1000 pods" for done in range(50, 1000, 50)] + [
        "placed 1000/1000 pods\n"
    ]

    terminal = _Terminal()
    progress = TerminalProgress(terminal, verb="read", noun="nodes", clock=_Clock(step=0.6))
    for done in range(1, 6):
        progress(done, 100_000)
    # 0.6 s per item: due at 1.2 s and again at 2.4 s after the last line.
    assert terminal.getvalue() == "\rread 2/100000 nodes\rread 4/100000 nodes"
