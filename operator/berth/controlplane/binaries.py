"""Where the control-plane binaries come from.

They are compiled from pinned Go modules by `tools/controlplane/build.sh` and
cached outside the repository; this module only asks that script for the
cache directory (building first when asked to) so that the version pins live
in exactly one place, the wrapper `go.mod` files.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BINARY_NAMES",
    "BUILD_SCRIPT",
    "BinariesNotFound",
    "ControlPlaneBinaries",
    "find_binaries",
]

BINARY_NAMES = ("etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "kubectl")

# operator/berth/controlplane/binaries.py -> repository root.
BUILD_SCRIPT = Path(__file__).resolve().parents[3] / "tools" / "controlplane" / "build.sh"

# Points at a directory holding all the binaries, bypassing build.sh; for
# machines where they were built some other way.
BIN_DIR_ENV = "BERTH_CONTROLPLANE_BIN"


class BinariesNotFound(RuntimeError):
    """The binaries are missing and were not (or could not be) built."""


@dataclass(frozen=True)
class ControlPlaneBinaries:
    """Absolute paths of the executables."""

    bin_dir: Path

    @property
    def etcd(self) -> Path:
        return self.bin_dir / "etcd"

    @property
    def kube_apiserver(self) -> Path:
        return self.bin_dir / "kube-apiserver"

    @property
    def kube_scheduler(self) -> Path:
        return self.bin_dir / "kube-scheduler"

    @property
    def kube_controller_manager(self) -> Path:
        return self.bin_dir / "kube-controller-manager"

    @property
    def kubectl(self) -> Path:
        return self.bin_dir / "kubectl"

    def missing(self) -> list[str]:
        return [name for name in BINARY_NAMES if not os.access(self.bin_dir / name, os.X_OK)]


def find_binaries(*, build: bool = False) -> ControlPlaneBinaries:
    """The cached binaries; with `build=True`, compile them first if needed.

    Building prints build.sh's progress to this process's stderr, since a cold
    build takes many minutes and silence would look like a hang.
    """
    override = os.environ.get(BIN_DIR_ENV)
    if override:
        binaries = ControlPlaneBinaries(Path(override))
        if binaries.missing():
            raise BinariesNotFound(
                f"{BIN_DIR_ENV}={override} lacks {', '.join(binaries.missing())}"
            )
        return binaries
    if not BUILD_SCRIPT.is_file():
        raise BinariesNotFound(f"build script not found at {BUILD_SCRIPT}; set {BIN_DIR_ENV}")
    command = [str(BUILD_SCRIPT)] if build else [str(BUILD_SCRIPT), "--print-bin-dir"]
    result = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    lines = result.stdout.strip().splitlines()
    if result.returncode != 0 or not lines:
        raise BinariesNotFound(f"{BUILD_SCRIPT} failed with exit code {result.returncode}")
    binaries = ControlPlaneBinaries(Path(lines[-1]))
    if binaries.missing():
        raise BinariesNotFound(
            f"{', '.join(binaries.missing())} not found in {binaries.bin_dir}; "
            f"run {BUILD_SCRIPT} (a cold build takes tens of minutes)"
        )
    return binaries
