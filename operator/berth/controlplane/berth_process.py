"""Install Berth into a local control plane and run `berth run` replicas as child processes.

Used alike by the end-to-end tests, the live demo and the benchmarks: the CRDs
and `manifests/` are applied with kubectl, and each replica authenticates as
the `berth-system/berth` ServiceAccount, so it runs under exactly the RBAC that
`manifests/` grants.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from berth.controlplane.cluster import LocalControlPlane
from berth.controlplane.processes import ManagedProcess, free_loopback_port, wait_until

REPO = Path(__file__).resolve().parents[3]
NAMESPACE = "berth-system"
SERVICE_ACCOUNT = "berth"


def install(plane: LocalControlPlane, *, repo: Path = REPO) -> None:
    """Apply the CRDs (and wait until they are served), then everything in `manifests/`."""
    plane.kubectl("apply", "--server-side", "-k", str(repo / "crds"))
    plane.kubectl(
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        "crd/schedulerprofiles.berth.dev",
        "crd/clusterkopfpeerings.kopf.dev",
    )
    plane.kubectl("apply", "--server-side", "-k", str(repo / "manifests"))


class BerthReplica:
    """One Berth process with its own metrics port and peer identity.

    `berth run` by default; `via_kopf_run` starts the development entry point
    `kopf run -A -m berth.kube.handlers` instead, whose settings can only come
    from BERTH_* variables (`env`, on top of this process's environment).
    """

    def __init__(
        self,
        plane: LocalControlPlane,
        name: str,
        *,
        extra_args: tuple[str, ...] = (),
        env: Mapping[str, str] | None = None,
        via_kopf_run: bool = False,
    ) -> None:
        self.plane = plane
        self.name = name
        self.metrics_port = free_loopback_port()
        kubeconfig = plane.serviceaccount_kubeconfig(NAMESPACE, SERVICE_ACCOUNT)
        environment = dict(os.environ)
        environment.update(
            {
                "KUBECONFIG": str(kubeconfig),
                "POD_ID": name,
                "PYTHONUNBUFFERED": "1",
            }
        )
        if via_kopf_run:
            environment.update(
                {"BERTH_METRICS_HOST": "127.0.0.1", "BERTH_METRICS_PORT": str(self.metrics_port)}
            )
            command = ["kopf", "run", "--all-namespaces", "-m", "berth.kube.handlers"]
        else:
            metrics = ["--metrics-host=127.0.0.1", f"--metrics-port={self.metrics_port}"]
            command = ["berth", "run", *metrics]
        environment.update(env or {})
        self.process = ManagedProcess(
            f"berth-{name}",
            [sys.executable, "-m", *command, *extra_args],
            log_path=plane.run_dir / f"berth-{name}.log",
            env=environment,
        )

    def start(self) -> BerthReplica:
        self.process.start()
        wait_until(
            lambda: self.http_get("/healthz") is not None,
            timeout=60,
            description=f"berth {self.name} /healthz",
            failure=self.process.failure_message,
        )
        return self

    def stop(self, *, kill: bool = False) -> None:
        if kill and self.process.pid is not None and self.process.exit_code() is None:
            os.kill(self.process.pid, 9)
        self.process.stop(timeout=20.0)

    def http_get(self, path: str) -> str | None:
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{self.metrics_port}{path}", timeout=2
            ) as response:
                return str(response.read().decode())
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return None

    def metric(self, name: str) -> float | None:
        """The value of one unlabelled (or first labelled) sample, from /metrics."""
        page = self.http_get("/metrics") or ""
        for line in page.splitlines():
            if line.startswith(name) and (line[len(name)] in " {"):
                return float(line.rsplit(" ", 1)[1])
        return None

    def is_leader(self) -> bool:
        return self.metric("berth_leader") == 1.0

    def configz(self) -> dict[str, object]:
        page = self.http_get("/configz")
        return json.loads(page) if page else {}

    def wait_leading(self, timeout: float = 90.0) -> float:
        started = time.monotonic()
        wait_until(
            self.is_leader,
            timeout=timeout,
            description=f"berth {self.name} leading",
            failure=self.process.failure_message,
        )
        return time.monotonic() - started

    def log_tail(self, lines: int = 60) -> str:
        from berth.controlplane.processes import tail

        return tail(self.process.log_path, lines)
