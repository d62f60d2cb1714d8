"""A real Kubernetes control plane on loopback: etcd, kube-apiserver and, on demand,
the reference kube-scheduler and kube-controller-manager.

Berth is tested and benchmarked against the real API server, never a mock,
and against kube-scheduler as the behaviour oracle. There is no kubelet, and
kube-controller-manager runs only the few controllers Berth's behaviour needs
(see controller_manager.py), so the apiserver runs without the admission
plugins that depend on the others (ServiceAccount would reject every pod for
want of a `default` ServiceAccount; TaintNodesByCondition would leave every
new Node tainted not-ready forever). Consequences for callers: bound pods
need force deletion (no kubelet confirms a graceful one), so a namespace
holding bound pods only finishes deleting once they are force-deleted; use
fresh namespaces, and a fresh control plane per test session or benchmark run.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from berth.controlplane.binaries import ControlPlaneBinaries, find_binaries
from berth.controlplane.client import KubeClient
from berth.controlplane.commands import apiserver_argv, etcd_argv, scheduler_configuration
from berth.controlplane.controller_manager import controller_manager_argv
from berth.controlplane.health import etcd_healthy, get_ok, start_until_healthy
from berth.controlplane.kubeconfig import KubeconfigCredentials, write_kubeconfig
from berth.controlplane.pki import CertificateAuthority, write_service_account_keys
from berth.controlplane.processes import (
    ManagedProcess,
    free_loopback_port,
    wait_until,
)
from berth.controlplane.run_dirs import (
    OWNER_FILE,
    RUN_DIR_PREFIX,
    default_run_parent,
    remove_abandoned_run_dirs,
)
from berth.kube.api import error_from_response

__all__ = ["DEFAULT_DISABLED_ADMISSION_PLUGINS", "LocalControlPlane"]

# ServiceAccount and TaintNodesByCondition need kube-controller-manager
# controllers that do not run here (see the module docstring);
# StorageObjectInUseProtection adds PV/PVC finalizers that only its (left out)
# protection controllers remove. Priority stays on: Berth must resolve priorityClassName and
# preempt exactly like kube-scheduler.
DEFAULT_DISABLED_ADMISSION_PLUGINS = (
    "ServiceAccount",
    "TaintNodesByCondition",
    "StorageObjectInUseProtection",
)


class LocalControlPlane:
    """etcd + kube-apiserver (+ kube-scheduler, kube-controller-manager on demand) as child processes.

    Use as a context manager, or call start() and stop(). Everything lives in
    a fresh run directory (PKI, kubeconfigs, logs, etcd data) that stop()
    removes unless `keep_run_dir` is set.
    """

    def __init__(
        self,
        *,
        binaries: ControlPlaneBinaries | None = None,
        build: bool = False,
        run_dir: Path | None = None,
        keep_run_dir: bool = False,
        disabled_admission_plugins: Sequence[str] = DEFAULT_DISABLED_ADMISSION_PLUGINS,
        extra_apiserver_args: Sequence[str] = (),
        extra_etcd_args: Sequence[str] = (),
        start_timeout: float = 120.0,
    ) -> None:
        self._binaries = binaries
        self._build = build
        self._requested_run_dir = run_dir
        self._keep_run_dir = keep_run_dir
        self._disabled_admission_plugins = tuple(disabled_admission_plugins)
        self._extra_apiserver_args = tuple(extra_apiserver_args)
        self._extra_etcd_args = tuple(extra_etcd_args)
        self._start_timeout = start_timeout
        self._run_dir: Path | None = None
        self._ca: CertificateAuthority | None = None
        self._etcd: ManagedProcess | None = None
        self._apiserver: ManagedProcess | None = None
        self._scheduler: ManagedProcess | None = None
        self._controller_manager: ManagedProcess | None = None
        self._apiserver_port = 0
        self._etcd_port = 0
        self._admin_ssl: ssl.SSLContext | None = None
        self.started_at: float | None = None
        self.ready_after_seconds: float | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> Self:
        """Start etcd and kube-apiserver and wait until /readyz says ok."""
        if self._apiserver is not None:
            raise RuntimeError("control plane already started")
        began = time.monotonic()
        self.started_at = time.time()
        binaries = self._binaries or find_binaries(build=self._build)
        self._binaries = binaries
        try:
            self._prepare_run_dir()
            self._write_pki()
            self._start_etcd(binaries)
            self._start_apiserver(binaries)
        except BaseException:
            self.stop()
            raise
        self.ready_after_seconds = time.monotonic() - began
        return self

    def stop(self) -> None:
        """Stop every process by its own PID, newest first, then remove the run directory."""
        for process in (self._controller_manager, self._scheduler, self._apiserver, self._etcd):
            if process is not None:
                process.stop()
        self._controller_manager = self._scheduler = self._apiserver = self._etcd = None
        if self._run_dir is not None and not self._keep_run_dir:
            shutil.rmtree(self._run_dir, ignore_errors=True)
        self._run_dir = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # -- faults ----------------------------------------------------------------------------

    def kill_apiserver(self) -> None:
        """SIGKILL kube-apiserver, as a crash would; etcd and kube-scheduler keep running.

        Clients see their connections reset and new ones refused until
        `start_apiserver_again()`.
        """
        if self._apiserver is None:
            raise RuntimeError("control plane not started")
        self._apiserver.kill()

    def start_apiserver_again(self, *, timeout: float | None = None) -> float:
        """Start the killed kube-apiserver with the same command and wait for /readyz.

        Same port, etcd, certificates, service-account keys and flags, so
        existing kubeconfigs and tokens stay valid. Returns the seconds it took
        to become ready; RuntimeError if it is still running.
        """
        if self._apiserver is None:
            raise RuntimeError("control plane not started")
        began = time.monotonic()
        self._run_apiserver(self._apiserver, timeout=timeout or self._start_timeout)
        return time.monotonic() - began

    # -- what clients need -----------------------------------------------------------------

    @property
    def run_dir(self) -> Path:
        if self._run_dir is None:
            raise RuntimeError("control plane not started")
        return self._run_dir

    @property
    def binaries(self) -> ControlPlaneBinaries:
        if self._binaries is None:
            raise RuntimeError("control plane not started")
        return self._binaries

    @property
    def server(self) -> str:
        """The apiserver's URL, e.g. https://127.0.0.1:40123."""
        return f"https://127.0.0.1:{self._apiserver_port}"

    @property
    def etcd_endpoint(self) -> str:
        return f"http://127.0.0.1:{self._etcd_port}"

    @property
    def ca_path(self) -> Path:
        return self.run_dir / "pki" / "ca.crt"

    @property
    def admin_kubeconfig(self) -> Path:
        """Kubeconfig of a `system:masters` user (bypasses RBAC)."""
        return self.run_dir / "admin.kubeconfig"

    @property
    def scheduler_kubeconfig(self) -> Path:
        """Kubeconfig of `system:kube-scheduler`, to whom bootstrap RBAC gives scheduler rights."""
        return self.run_dir / "scheduler.kubeconfig"

    @property
    def controller_manager_kubeconfig(self) -> Path:
        """Kubeconfig of `system:kube-controller-manager` (bootstrap RBAC: mint controller tokens)."""
        return self.run_dir / "controller-manager.kubeconfig"

    @property
    def processes(self) -> dict[str, ManagedProcess]:
        running = {"etcd": self._etcd, "kube-apiserver": self._apiserver}
        running["kube-scheduler"] = self._scheduler
        running["kube-controller-manager"] = self._controller_manager
        return {name: process for name, process in running.items() if process is not None}

    def client(self, kubeconfig: Path | None = None, *, concurrency: int = 64) -> KubeClient:
        """An async REST client (admin unless told otherwise); open it with `async with`."""
        return KubeClient.open(kubeconfig or self.admin_kubeconfig, concurrency=concurrency)

    def env(self) -> dict[str, str]:
        """Environment variables pointing clients (kubectl, kopf) at this control plane."""
        return {
            "KUBECONFIG": str(self.admin_kubeconfig),
            "BERTH_CONTROLPLANE_SERVER": self.server,
            "BERTH_CONTROLPLANE_CA": str(self.ca_path),
            "BERTH_CONTROLPLANE_RUN_DIR": str(self.run_dir),
        }

    def rss_bytes(self) -> dict[str, int]:
        """Resident memory of each running component, for benchmark reports."""
        return {name: process.rss_bytes() for name, process in self.processes.items()}

    def kubectl(
        self,
        *args: str,
        kubeconfig: Path | None = None,
        input: str | None = None,  # mirrors subprocess.run
        check: bool = True,
        timeout: float = 120.0,
    ) -> subprocess.CompletedProcess[str]:
        """Run the matching kubectl against this control plane (admin unless told otherwise)."""
        command = [
            str(self.binaries.kubectl),
            f"--kubeconfig={kubeconfig or self.admin_kubeconfig}",
        ]
        return subprocess.run(
            [*command, *args],
            input=input,
            capture_output=True,
            text=True,
            check=check,
            timeout=timeout,
        )

    # -- identities ------------------------------------------------------------------------

    def user_kubeconfig(self, user: str, *, groups: Sequence[str] = ()) -> Path:
        """Kubeconfig for a client-certificate user; RBAC grants it nothing unless told to."""
        if self._ca is None:
            raise RuntimeError("control plane not started")
        pair = self._ca.issue_client(user, groups=groups)
        credentials = KubeconfigCredentials(
            server=self.server,
            ca_path=self.ca_path,
            cert_path=pair.cert_path,
            key_path=pair.key_path,
        )
        return write_kubeconfig(pair.cert_path.with_suffix(".kubeconfig"), credentials, user=user)

    def serviceaccount_kubeconfig(
        self,
        namespace: str,
        name: str,
        *,
        expiration_seconds: int = 24 * 3600,
        create: bool = True,
    ) -> Path:
        """Kubeconfig that authenticates as ServiceAccount `namespace/name` via a TokenRequest.

        This is how Berth runs under exactly the RBAC in `manifests/`. With
        `create`, the namespace and ServiceAccount are created if missing.
        """
        if create:
            namespace_body = {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": namespace},
            }
            self.request("POST", "/api/v1/namespaces", namespace_body, ok_statuses=(409,))
            account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}
            self.request(
                "POST",
                f"/api/v1/namespaces/{namespace}/serviceaccounts",
                account,
                ok_statuses=(409,),
            )
        token_request = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": expiration_seconds},
        }
        answer = self.request(
            "POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token", token_request
        )
        credentials = KubeconfigCredentials(
            server=self.server, ca_path=self.ca_path, token=answer["status"]["token"]
        )
        path = self.run_dir / f"sa-{namespace}-{name}.kubeconfig"
        return write_kubeconfig(path, credentials, user=f"system:serviceaccount:{namespace}:{name}")

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        ok_statuses: Sequence[int] = (),
        timeout: float = 30.0,
    ) -> Any:
        """A synchronous admin call, for set-up steps outside an event loop.

        Statuses in `ok_statuses` (e.g. 409 for "already exists") are returned
        as their decoded body instead of raising berth.kube.api's ApiError.
        """
        if self._admin_ssl is None:
            raise RuntimeError("control plane not started")
        connection = http.client.HTTPSConnection(
            "127.0.0.1", self._apiserver_port, context=self._admin_ssl, timeout=timeout
        )
        try:
            payload = None if body is None else json.dumps(body)
            headers = {"Accept": "application/json"}
            if payload is not None:
                headers["Content-Type"] = "application/json"
            connection.request(method, path, body=payload, headers=headers)
            response = connection.getresponse()
            raw = response.read()
        finally:
            connection.close()
        if response.status >= 300 and response.status not in ok_statuses:
            raise error_from_response(response.status, raw, method=method, path=path)
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", errors="replace")

    # -- the reference kube-scheduler ------------------------------------------------------

    def start_kube_scheduler(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        qps: float = 5000,
        burst: int = 5000,
        extra_args: Sequence[str] = (),
        timeout: float = 60.0,
    ) -> ManagedProcess:
        """Start kube-scheduler with a KubeSchedulerConfiguration and wait until it is ready.

        `config` is a KubeSchedulerConfiguration as a dict; fields it leaves
        out get local defaults: the scheduler's own kubeconfig, `qps`/`burst`
        (5000, so client-side throttling never caps a benchmark), leader
        election off, and one `default-scheduler` profile.
        """
        if self._scheduler is not None:
            raise RuntimeError("kube-scheduler already running; stop_kube_scheduler() first")
        document = scheduler_configuration(
            config, kubeconfig=self.scheduler_kubeconfig, qps=qps, burst=burst
        )
        config_path = self.run_dir / "kube-scheduler.json"
        config_path.write_text(json.dumps(document, indent=2), encoding="utf-8")
        port = free_loopback_port()
        argv = [
            str(self.binaries.kube_scheduler),
            f"--config={config_path}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={self.run_dir / 'kube-scheduler-certs'}",
            f"--authentication-kubeconfig={self.scheduler_kubeconfig}",
            f"--authorization-kubeconfig={self.scheduler_kubeconfig}",
            "--v=1",
            *extra_args,
        ]
        process = ManagedProcess(
            "kube-scheduler", argv, log_path=self.run_dir / "kube-scheduler.log"
        )
        start_until_healthy(process, port=port, path="/readyz", timeout=timeout)
        self._scheduler = process
        return process

    def stop_kube_scheduler(self) -> None:
        if self._scheduler is not None:
            self._scheduler.stop()
            self._scheduler = None

    # -- kube-controller-manager -----------------------------------------------------------

    def start_kube_controller_manager(
        self, *, extra_args: Sequence[str] = (), timeout: float = 60.0
    ) -> ManagedProcess:
        """Start kube-controller-manager with the controllers Berth needs; wait for /healthz.

        Which controllers, and why only those: see controller_manager.py.
        """
        if self._controller_manager is not None:
            raise RuntimeError("kube-controller-manager already running")
        port = free_loopback_port()
        argv = controller_manager_argv(
            self.binaries.kube_controller_manager,
            kubeconfig=self.controller_manager_kubeconfig,
            port=port,
            cert_dir=self.run_dir / "kube-controller-manager-certs",
            extra_args=extra_args,
        )
        process = ManagedProcess(
            "kube-controller-manager", argv, log_path=self.run_dir / "kube-controller-manager.log"
        )
        start_until_healthy(process, port=port, path="/healthz", timeout=timeout)
        self._controller_manager = process
        return process

    def stop_kube_controller_manager(self) -> None:
        if self._controller_manager is not None:
            self._controller_manager.stop()
            self._controller_manager = None

    # -- start-up steps --------------------------------------------------------------------

    def _prepare_run_dir(self) -> None:
        if self._requested_run_dir is not None:
            run_dir = self._requested_run_dir
            run_dir.mkdir(parents=True, exist_ok=True)
        else:
            parent = default_run_parent()
            remove_abandoned_run_dirs(parent)
            run_dir = Path(tempfile.mkdtemp(prefix=RUN_DIR_PREFIX, dir=parent))
        (run_dir / OWNER_FILE).write_text(f"{os.getpid()}\n")
        self._run_dir = run_dir

    def _write_pki(self) -> None:
        pki = self.run_dir / "pki"
        ca = CertificateAuthority(pki)
        self._ca = ca
        ca.issue_server("kube-apiserver")
        write_service_account_keys(pki)
        self._apiserver_port = free_loopback_port()
        identities = {
            self.admin_kubeconfig: ("admin", ("system:masters",), "admin"),
            self.scheduler_kubeconfig: ("system:kube-scheduler", (), "kube-scheduler"),
            self.controller_manager_kubeconfig: (
                "system:kube-controller-manager",
                (),
                "kube-controller-manager",
            ),
        }
        for path, (user, groups, stem) in identities.items():
            pair = ca.issue_client(user, groups=groups, file_stem=stem)
            credentials = KubeconfigCredentials(
                server=self.server,
                ca_path=ca.cert_path,
                cert_path=pair.cert_path,
                key_path=pair.key_path,
            )
            write_kubeconfig(path, credentials, user=user)
        context = ssl.create_default_context(cafile=str(ca.cert_path))
        context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
        self._admin_ssl = context

    def _start_etcd(self, binaries: ControlPlaneBinaries) -> None:
        client_port, peer_port = free_loopback_port(), free_loopback_port()
        self._etcd_port = client_port
        argv = etcd_argv(
            binaries.etcd,
            data_dir=self.run_dir / "etcd",
            client_port=client_port,
            peer_port=peer_port,
            extra_args=self._extra_etcd_args,
        )
        process = ManagedProcess("etcd", argv, log_path=self.run_dir / "etcd.log")
        process.start()
        self._etcd = process
        wait_until(
            lambda: etcd_healthy(client_port),
            timeout=self._start_timeout,
            failure=process.failure_message,
            description="etcd /health",
        )

    def _start_apiserver(self, binaries: ControlPlaneBinaries) -> None:
        argv = apiserver_argv(
            binaries.kube_apiserver,
            run_dir=self.run_dir,
            port=self._apiserver_port,
            etcd_endpoint=self.etcd_endpoint,
            disabled_admission_plugins=self._disabled_admission_plugins,
            extra_args=self._extra_apiserver_args,
        )
        process = ManagedProcess(
            "kube-apiserver", argv, log_path=self.run_dir / "kube-apiserver.log"
        )
        self._apiserver = process
        self._run_apiserver(process, timeout=self._start_timeout)

    def _run_apiserver(self, process: ManagedProcess, *, timeout: float) -> None:
        process.start()
        context = self._admin_ssl
        assert context is not None
        wait_until(
            lambda: get_ok(self._apiserver_port, "/readyz", context),
            timeout=timeout,
            failure=process.failure_message,
            description="kube-apiserver /readyz",
            interval=0.1,
        )
