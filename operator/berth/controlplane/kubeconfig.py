"""Kubeconfig files for the local control plane's identities.

Every client — kubectl, kopf, the Python helpers here, a benchmark driver —
reads the same kind of file, so the control plane writes one per identity
(admin, scheduler, any test user or ServiceAccount) and hands out paths.
The files are JSON, which is valid YAML and so readable by every kubeconfig
loader, and needs no YAML writer here.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["KubeconfigCredentials", "read_kubeconfig", "write_kubeconfig"]


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


def read_kubeconfig(path: Path) -> KubeconfigCredentials:
    """The current context's credentials from a kubeconfig with file references.

    Only what this package writes is supported (paths, not inline data), which
    keeps this from growing into a second kubeconfig implementation.
    """
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    context_name = document["current-context"]
    context = next(c["context"] for c in document["contexts"] if c["name"] == context_name)
    cluster = next(c["cluster"] for c in document["clusters"] if c["name"] == context["cluster"])
    user = next(u["user"] for u in document["users"] if u["name"] == context["user"])
    base = path.parent

    def resolve(value: str | None) -> Path | None:
        return None if value is None else (base / value).resolve()

    ca_path = resolve(cluster.get("certificate-authority"))
    if ca_path is None:
        raise ValueError(f"{path}: cluster has no certificate-authority file")
    return KubeconfigCredentials(
        server=cluster["server"],
        ca_path=ca_path,
        cert_path=resolve(user.get("client-certificate")),
        key_path=resolve(user.get("client-key")),
        token=user.get("token"),
    )
