"""The command lines of etcd and kube-apiserver, and kube-scheduler's configuration.

They are built from the run directory, ports and the caller's settings
alone, kept free of process handling so they can be checked without starting
anything, and so a restarted component gets exactly the command it had: a
crashed kube-apiserver started again with the same argv serves the same
port, etcd, certificates and service-account keys, and every client's
kubeconfig and token stay valid.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["apiserver_argv", "etcd_argv", "scheduler_configuration"]


def etcd_argv(
    binary: Path,
    *,
    data_dir: Path,
    client_port: int,
    peer_port: int,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """A single-member etcd on loopback, tuned for throw-away test data."""
    client_url = f"http://127.0.0.1:{client_port}"
    peer_url = f"http://127.0.0.1:{peer_port}"
    return [
        str(binary),
        "--name=berth",
        f"--data-dir={data_dir}",
        f"--listen-client-urls={client_url}",
        f"--advertise-client-urls={client_url}",
        f"--listen-peer-urls={peer_url}",
        f"--initial-advertise-peer-urls={peer_url}",
        f"--initial-cluster=berth={peer_url}",
        # 8 GiB, the documented maximum: a 10,000-pod benchmark must never
        # hit the default 2 GiB quota and turn etcd read-only.
        "--quota-backend-bytes=8589934592",
        "--auto-compaction-retention=1",
        # The data is thrown away after the run; durability buys nothing.
        "--unsafe-no-fsync",
        "--log-level=warn",
        *extra_args,
    ]


def apiserver_argv(
    binary: Path,
    *,
    run_dir: Path,
    port: int,
    etcd_endpoint: str,
    disabled_admission_plugins: Sequence[str],
    extra_args: Sequence[str] = (),
) -> list[str]:
    """kube-apiserver's command line; every file it names lives under `run_dir`."""
    pki = run_dir / "pki"
    return [
        str(binary),
        f"--etcd-servers={etcd_endpoint}",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        # A loopback advertise address is only accepted when no endpoint
        # reconciler publishes it; nothing here uses the in-cluster Service.
        "--advertise-address=127.0.0.1",
        "--endpoint-reconciler-type=none",
        f"--tls-cert-file={pki / 'kube-apiserver.crt'}",
        f"--tls-private-key-file={pki / 'kube-apiserver.key'}",
        f"--client-ca-file={pki / 'ca.crt'}",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={pki / 'sa.pub'}",
        f"--service-account-signing-key-file={pki / 'sa.key'}",
        "--service-cluster-ip-range=10.0.0.0/24",
        "--authorization-mode=RBAC",
        "--allow-privileged=true",
        f"--disable-admission-plugins={','.join(disabled_admission_plugins)}",
        # Server-side throttling off, so benchmarks measure schedulers, not
        # API Priority and Fairness.
        "--enable-priority-and-fairness=false",
        "--max-requests-inflight=0",
        "--max-mutating-requests-inflight=0",
        f"--cert-dir={run_dir / 'kube-apiserver-certs'}",
        "--v=1",
        *extra_args,
    ]


def scheduler_configuration(
    config: Mapping[str, Any] | None, *, kubeconfig: Path, qps: float, burst: int
) -> dict[str, Any]:
    """`config` completed with the defaults a local kube-scheduler needs.

    See LocalControlPlane.start_kube_scheduler for what they are and why."""
    document: dict[str, Any] = json.loads(json.dumps(dict(config or {})))
    document.setdefault("apiVersion", "kubescheduler.config.k8s.io/v1")
    document.setdefault("kind", "KubeSchedulerConfiguration")
    connection = document.setdefault("clientConnection", {})
    connection.setdefault("kubeconfig", str(kubeconfig))
    connection.setdefault("qps", qps)
    connection.setdefault("burst", burst)
    document.setdefault("leaderElection", {}).setdefault("leaderElect", False)
    document.setdefault("profiles", [{"schedulerName": "default-scheduler"}])
    return document
