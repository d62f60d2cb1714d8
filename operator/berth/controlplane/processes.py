"""Child processes that cannot outlive the Python process that started them.

A test session that fails, is interrupted or is killed must leave no etcd or
kube-apiserver behind: they would hold ports and memory and confuse the next
run. Three layers make sure of it: an orderly `stop()` by the owner, an
`atexit` hook for a forgotten `stop()`, and the Linux parent-death signal for
the case where Python dies too abruptly to run either.

Children get their own session so that a Ctrl-C in the terminal reaches only
Python, which then stops them in reverse order instead of all at once.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

__all__ = [
    "ManagedProcess",
    "ProcessFailed",
    "free_loopback_port",
    "rss_bytes",
    "tail",
    "wait_until",
]

_PR_SET_PDEATHSIG = 1
_live: weakref.WeakSet[ManagedProcess] = weakref.WeakSet()


class ProcessFailed(RuntimeError):
    """A managed process exited or did not become ready; the message holds its log tail."""


def _die_with_parent() -> None:
    # Runs in the child between fork and exec. If this fails (non-Linux), the
    # atexit hook is the remaining safety net.
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago.

    Fixed ports would stop two control planes (say, a developer's `up` and a
    test session) from running side by side.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def tail(path: Path, lines: int = 40) -> str:
    """The last `lines` lines of a log file, for error messages."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 64 * 1024))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return f"(no log at {path})"
    return "\n".join(text.splitlines()[-lines:])


def rss_bytes(pid: int) -> int:
    """Resident set size of a process, from /proc (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def wait_until(
    condition: Callable[[], bool],
    *,
    timeout: float,
    interval: float = 0.05,
    failure: Callable[[], str | None] = lambda: None,
    description: str = "condition",
) -> None:
    """Poll `condition` until it holds or `timeout` seconds pass.

    `failure` is checked on every round and, if it returns a message, aborts
    the wait at once; that way a crashed process is reported immediately
    rather than after the whole timeout.
    """
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return
        message = failure()
        if message is not None:
            raise ProcessFailed(message)
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{description} not reached within {timeout:.0f}s")
        time.sleep(interval)


class ManagedProcess:
    """One long-running child with its output in a log file.

    Once it has exited (or been killed), `start()` runs the same command again
    with the log appended: that is how a test restarts a crashed component.
    """

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        log_path: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self._env = dict(env) if env is not None else None
        self._cwd = cwd
        self._popen: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._popen.pid if self._popen is not None else None

    def start(self) -> None:
        if self._popen is not None and self._popen.poll() is None:
            raise RuntimeError(f"{self.name} already running (pid {self._popen.pid})")
        if self._log is None:
            self._log = self.log_path.open("ab")
        self._popen = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=self._env,
            cwd=self._cwd,
            start_new_session=True,
            # The parent-death signal fires when the *thread* that forked
            # exits, so it is only safe from the main thread, which lives as
            # long as the process.
            preexec_fn=_die_with_parent if self._die_with_parent_allowed() else None,  # noqa: PLW1509
        )
        _live.add(self)

    @staticmethod
    def _die_with_parent_allowed() -> bool:
        return sys.platform == "linux" and threading.current_thread() is threading.main_thread()

    def exit_code(self) -> int | None:
        """None while running; the exit status once it has exited."""
        return self._popen.poll() if self._popen is not None else None

    def failure_message(self) -> str | None:
        """A message with the log tail if the process has exited, else None."""
        code = self.exit_code()
        if code is None:
            return None
        return f"{self.name} exited with status {code}; last log lines:\n{tail(self.log_path)}"

    def stop(self, *, timeout: float = 10.0) -> None:
        """SIGTERM, then SIGKILL after `timeout`; addressed to this PID only."""
        popen = self._popen
        if popen is None:
            return
        if popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                popen.send_signal(signal.SIGTERM)
            try:
                popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    popen.kill()
                popen.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        _live.discard(self)

    def kill(self) -> int | None:
        """SIGKILL at once, as a crash or the OOM killer would, and reap the process.

        Unlike `stop()` the process gets no chance to finish requests or close
        connections. Returns the exit status (None if it was never started).
        """
        popen = self._popen
        if popen is None:
            return None
        if popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                popen.kill()
        code = popen.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        _live.discard(self)
        return code

    def rss_bytes(self) -> int:
        return rss_bytes(self._popen.pid) if self._popen is not None else 0


@atexit.register
def _stop_leftovers() -> None:
    for process in list(_live):
        process.stop(timeout=5.0)
