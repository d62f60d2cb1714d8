"""Run directories of local control planes, and the clean-up of abandoned ones.

Each control plane keeps its PKI, kubeconfigs, logs and etcd data in one
fresh directory, on tmpfs when there is one. A directory records the PID of
the process that owns it, so that one left behind by a killed owner can be
recognised and removed by the next control plane started on the machine.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

__all__ = [
    "OWNER_FILE",
    "RUN_DIR_PREFIX",
    "default_run_parent",
    "pid_alive",
    "remove_abandoned_run_dirs",
]

RUN_DIR_PREFIX = "berth-cp-"
OWNER_FILE = "owner.pid"


def default_run_parent() -> Path:
    # etcd on tmpfs is as fast as --unsafe-no-fsync and spares the disk.
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        return shm
    return Path(tempfile.gettempdir())


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_abandoned_run_dirs(parent: Path) -> list[Path]:
    """Delete run directories whose owning process is gone.

    The child processes of a SIGKILLed owner die with it (parent-death
    signal), but its tmpfs run directory would stay and hold memory.
    """
    removed = []
    for candidate in parent.glob(RUN_DIR_PREFIX + "*"):
        try:
            owner = int((candidate / OWNER_FILE).read_text().strip())
        except (OSError, ValueError):
            continue
        if not pid_alive(owner):
            shutil.rmtree(candidate, ignore_errors=True)
            removed.append(candidate)
    return removed
