"""`berth demo --keep-running`: the demo cluster stays up for questions, then stops on SIGTERM.

The README's walk-through on the demo cluster depends on it: the demo says which kubeconfig and
which pending pod to ask about, `berth explain` answers from the live cluster, and the demo then
cleans up after itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.cluster

RUNS_LAST = True
BERTH = str(Path(sys.executable).with_name("berth"))


def test_the_demo_cluster_answers_berth_explain_until_it_is_stopped() -> None:
    demo = subprocess.Popen(
        [BERTH, "demo", "--nodes", "12", "--pods", "36", "--keep-running"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert demo.stdout is not None
    kubeconfig = command = ""
    deadline = time.monotonic() + 240
    try:
        while not command:
            line = demo.stdout.readline()
            assert line, f"the demo ended early (exit {demo.poll()})"
            assert time.monotonic() < deadline, "no hint from the demo within 240 s"
            if "export KUBECONFIG=" in line:
                kubeconfig = line.split("=", 1)[1].strip()
            elif line.strip().startswith("berth explain "):
                command = line.strip()
        explained = subprocess.run(
            [BERTH, *command.split()[1:]],
            env={**os.environ, "KUBECONFIG": kubeconfig},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert explained.returncode == 0, explained.stderr
        target = command.split()[-1]
        assert explained.stdout.startswith(f"Pod {target} (profile berth)")
    finally:
        demo.send_signal(signal.SIGTERM)
        remaining, _ = demo.communicate(timeout=120)
    assert demo.returncode == 0, remaining
    assert "Stopping ..." in remaining
    assert not Path(kubeconfig).exists()  # the control plane's run directory is gone
