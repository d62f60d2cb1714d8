"""The schedulers under test, behind one small interface the driver uses identically.

- kube-scheduler: the reference v1.37.2 binary, one `default-scheduler` profile,
  client QPS/burst 5000 (scheduler_perf's setting), leader election off.
- berth: `berth run` with the shipped manifests and default SchedulerProfile
  (schedulerName `berth`), under its ServiceAccount, peering as shipped.
- null-binder: bench/null_binder.py, the control plane's ceiling C.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Protocol

import berth
from bench import null_binder
from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica, install
from berth.controlplane.processes import ManagedProcess, wait_until

__all__ = ["SCHEDULERS", "SchedulerUnderTest", "make_scheduler", "snapshot_berth_source"]

REPO = Path(__file__).resolve().parents[1]
KUBE_SCHEDULER_QPS = 5000
KUBE_SCHEDULER_BURST = 5000


class SchedulerUnderTest(Protocol):
    key: str
    scheduler_name: str

    def prepare(self, plane: LocalControlPlane) -> None:
        """What the cluster needs before the scheduler starts (not timed by a backlog drain)."""

    def start(self, plane: LocalControlPlane) -> None: ...

    @property
    def pid(self) -> int | None: ...

    def stop(self) -> None: ...

    def describe(self, plane: LocalControlPlane) -> dict[str, Any]: ...

    def log_tail(self) -> str: ...

    def log_problems(self) -> list[str]: ...


def _problems(log_path: Path | None, limit: int = 120) -> list[str]:
    """Warning and error lines of a log, whole tracebacks included (klog's W/E lines too)."""
    if log_path is None or not log_path.exists():
        return []
    found: list[str] = []
    in_traceback = False
    with log_path.open(encoding="utf-8", errors="replace") as log:
        for line in log:
            text = line.rstrip()
            if text.startswith("Traceback"):
                in_traceback = True
            elif in_traceback and not text.startswith(" "):
                in_traceback = False
                found.append(text[:500])  # the exception line ends the traceback
                continue
            problem = any(m in text for m in (" WARNING ", " ERROR ")) or text[:1] in ("W", "E")
            if in_traceback or problem:
                found.append(text[:500])
            if len(found) >= limit:
                break
    return found


class KubeScheduler:
    key = "kube-scheduler"
    scheduler_name = "default-scheduler"

    def __init__(self) -> None:
        self._plane: LocalControlPlane | None = None
        self._process: ManagedProcess | None = None

    def prepare(self, plane: LocalControlPlane) -> None:
        pass  # the control plane's RBAC already has a kube-scheduler identity

    def start(self, plane: LocalControlPlane) -> None:
        self._plane = plane
        self._process = plane.start_kube_scheduler(
            qps=KUBE_SCHEDULER_QPS, burst=KUBE_SCHEDULER_BURST
        )

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def stop(self) -> None:
        if self._plane is not None:
            self._plane.stop_kube_scheduler()

    def describe(self, plane: LocalControlPlane) -> dict[str, Any]:
        version = subprocess.run(
            [str(plane.binaries.kube_scheduler), "--version"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        return {
            "version": version,
            "qps": KUBE_SCHEDULER_QPS,
            "burst": KUBE_SCHEDULER_BURST,
            "profile": "default-scheduler, default plugins",
            "feature_gates": "binary defaults",
        }

    def log_tail(self) -> str:
        if self._process is None:
            return ""
        from berth.controlplane.processes import tail

        return tail(self._process.log_path)

    def log_problems(self) -> list[str]:
        return _problems(self._process.log_path if self._process is not None else None)


def snapshot_berth_source(destination: Path, revision: str = "HEAD") -> str:
    """Extract the committed `operator/` tree of `revision` into `destination`; its commit.

    The working tree is shared with engineers who edit Berth while a benchmark
    runs for an hour; benchmarking a commit keeps every Berth trial on the same code.
    """
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", revision],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", commit, "operator"],
        capture_output=True,
        check=True,
    ).stdout
    destination.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(destination)], input=archive, check=True)
    # Byte-code once, as the image's build does: with PYTHONDONTWRITEBYTECODE set, every
    # trial would otherwise compile Berth's modules again at its start.
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(destination / "operator")],
        stdout=subprocess.DEVNULL,
        check=True,
    )
    return commit


class Berth:
    key = "berth"
    scheduler_name = "berth"
    # Set by run.py: (directory holding berth/, its commit); None runs the working tree.
    source: tuple[Path, str] | None = None
    # Set by profile_berth.py: a file the in-process probe (bench/probe/) keeps its counters in.
    probe: Path | None = None

    def __init__(self) -> None:
        self._replica: BerthReplica | None = None
        self._installed = False

    def prepare(self, plane: LocalControlPlane) -> None:
        install(plane)  # CRDs, RBAC, the default SchedulerProfile
        self._installed = True

    def start(self, plane: LocalControlPlane) -> None:
        if not self._installed:
            self.prepare(plane)
        path = [os.environ.get("PYTHONPATH", "")]
        if self.source is not None:
            # PYTHONPATH precedes the editable install's path entry.
            path.insert(0, str(self.source[0]))
        env = {}
        if self.probe is not None:
            path.insert(0, str(REPO / "bench" / "probe"))
            env["BERTH_BENCH_PROBE"] = str(self.probe)
        env["PYTHONPATH"] = os.pathsep.join(path)
        self._replica = BerthReplica(plane, "bench-0", env=env)
        self._replica.start()
        self._replica.wait_leading()

    @property
    def pid(self) -> int | None:
        return self._replica.process.pid if self._replica is not None else None

    @property
    def log_path(self) -> Path | None:
        return self._replica.process.log_path if self._replica is not None else None

    def stop(self) -> None:
        if self._replica is not None:
            self._replica.stop()

    def describe(self, plane: LocalControlPlane) -> dict[str, Any]:
        if self.source is not None:
            commit, origin = self.source[1][:12], "snapshot of the commit (git archive)"
        else:
            commit = subprocess.run(
                ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                capture_output=True,
                text=True,
                check=False,
            ).stdout.strip()
            origin = "working tree (may include uncommitted edits)"
        return {
            "version": berth.__version__,
            "commit": commit,
            "source": origin,
            "profile": "shipped default (manifests/default-profile.yaml)",
            "python": sys.version.split()[0],
        }

    def log_tail(self) -> str:
        return self._replica.log_tail() if self._replica is not None else ""

    def log_problems(self) -> list[str]:
        return _problems(self._replica.process.log_path if self._replica is not None else None)


class NullBinder:
    key = "null-binder"
    scheduler_name = null_binder.SCHEDULER_NAME

    def __init__(self) -> None:
        self._process: ManagedProcess | None = None

    def prepare(self, plane: LocalControlPlane) -> None:
        pass  # it runs as the cluster admin

    def start(self, plane: LocalControlPlane) -> None:
        ready = plane.run_dir / "null-binder.ready"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(REPO), str(REPO / "operator"), env.get("PYTHONPATH", "")]
        )
        self._process = ManagedProcess(
            "null-binder",
            [
                sys.executable,
                "-m",
                "bench.null_binder",
                f"--kubeconfig={plane.admin_kubeconfig}",
                f"--ready-file={ready}",
            ],
            log_path=plane.run_dir / "null-binder.log",
            env=env,
            cwd=REPO,
        )
        self._process.start()
        wait_until(
            ready.exists,
            timeout=60,
            failure=self._process.failure_message,
            description="null binder ready",
        )

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def stop(self) -> None:
        if self._process is not None:
            self._process.stop()

    def describe(self, plane: LocalControlPlane) -> dict[str, Any]:
        return {"in_flight_binds": null_binder.IN_FLIGHT, "python": sys.version.split()[0]}

    def log_tail(self) -> str:
        if self._process is None:
            return ""
        from berth.controlplane.processes import tail

        return tail(self._process.log_path)

    def log_problems(self) -> list[str]:
        return _problems(self._process.log_path if self._process is not None else None)


SCHEDULERS: dict[str, type[KubeScheduler] | type[Berth] | type[NullBinder]] = {
    KubeScheduler.key: KubeScheduler,
    Berth.key: Berth,
    NullBinder.key: NullBinder,
}


def make_scheduler(key: str) -> SchedulerUnderTest:
    return SCHEDULERS[key]()
