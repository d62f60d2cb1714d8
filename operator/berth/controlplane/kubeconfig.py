"""Kubeconfig files for the local control plane's identities.

Every client — kubectl, kopf, Berth's API session (which the test client is
too), a benchmark driver — reads the same kind of file, so the control plane
writes one per identity (admin, scheduler, any test user or ServiceAccount)
and hands out paths. Reading them is berth.kube.api's job, not this module's.
The files are JSON, which is valid YAML and so readable by every kubeconfig
loader, and needs no YAML writer here.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["KubeconfigCredentials", "write_kubeconfig"]


@dataclass(frozen=True)
class KubeconfigCredentials:
    """What a client needs to reach the server as one identity."""

    server: str
    ca_path: Path
    cert_path: Path | None = None
    key_path: Path | None = None
    token: str | None = None


def write_kubeconfig(path: Path, credentials: KubeconfigCredentials, *, user: str) -> Path:
    """Write a single-context kubeconfig; the file is private (0600) since it may hold a token."""
    user_entry: dict[str, str] = {}
    if credentials.cert_path is not None and credentials.key_path is not None:
        user_entry["client-certificate"] = str(credentials.cert_path)
        user_entry["client-key"] = str(credentials.key_path)
    if credentials.token is not None:
        user_entry["token"] = credentials.token
    document: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "berth-local",
                "cluster": {
                    "server": credentials.server,
                    "certificate-authority": str(credentials.ca_path),
                },
            }
        ],
        "users": [{"name": user, "user": user_entry}],
        "contexts": [{"name": "berth-local", "context": {"cluster": "berth-local", "user": user}}],
        "current-context": "berth-local",
        "preferences": {},
    }
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
    return path
