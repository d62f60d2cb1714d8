"""What restarting a crashed component relies on: a command line that depends only on the
run directory and ports, and a managed process that can be SIGKILLed and started again."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from berth.controlplane.commands import apiserver_argv
from berth.controlplane.processes import ManagedProcess, wait_until


def test_apiserver_command_names_only_files_under_the_run_directory(tmp_path: Path) -> None:
    def build() -> list[str]:
        return apiserver_argv(
            Path("/opt/kube-apiserver"),
            run_dir=tmp_path,
            port=40123,
            etcd_endpoint="http://127.0.0.1:40124",
            disabled_admission_plugins=("ServiceAccount", "TaintNodesByCondition"),
            extra_args=("--v=3",),
        )

    argv = build()

    assert argv == build(), "a restart must get exactly the same command"
    assert "--secure-port=40123" in argv
    assert "--etcd-servers=http://127.0.0.1:40124" in argv
    assert "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition" in argv
    assert argv[-1] == "--v=3", "extra arguments come last, so they override the defaults"
    file_flags = {
        flag.split("=", 1)[0]: Path(flag.split("=", 1)[1])
        for flag in argv
        if flag.startswith("--") and "=/" in flag and "etcd" not in flag
    }
    assert set(file_flags) == {
        "--tls-cert-file",
        "--tls-private-key-file",
        "--client-ca-file",
        "--service-account-key-file",
        "--service-account-signing-key-file",
        "--cert-dir",
    }
    assert all(path.is_relative_to(tmp_path) for path in file_flags.values())


def test_a_killed_process_starts_again_with_the_same_command_and_log(tmp_path: Path) -> None:
    log = tmp_path / "child.log"
    # Runs until it is signalled: no timer of its own.
    script = "import signal; print('up', flush=True); signal.pause()"
    process = ManagedProcess("child", [sys.executable, "-c", script], log_path=log)
    process.start()
    try:
        wait_until(lambda: log.read_text().count("up") == 1, timeout=30)
        first = process.pid
        assert process.kill() == -signal.SIGKILL
        assert process.exit_code() == -signal.SIGKILL
        assert process.failure_message() is not None

        process.start()
        assert process.pid != first
        wait_until(lambda: log.read_text().count("up") == 2, timeout=30)
        assert process.exit_code() is None
    finally:
        process.stop(timeout=5)
    assert log.read_text().splitlines() == ["up", "up"], "the second run appends to the log"


def test_starting_a_running_process_again_is_refused(tmp_path: Path) -> None:
    process = ManagedProcess(
        "child", [sys.executable, "-c", "import signal; signal.pause()"], log_path=tmp_path / "log"
    )
    process.start()
    try:
        with pytest.raises(RuntimeError, match="already running"):
            process.start()
    finally:
        process.stop(timeout=5)
    assert process.kill() == -signal.SIGTERM, "kill() after stop() only reports the status"
