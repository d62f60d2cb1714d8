"""Readiness probes of the control-plane components, polled while they start.

A component counts as started only once it answers its health endpoint, so a
caller never races a process that is still loading; a component that exits
instead is reported at once with its log tail (processes.wait_until).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import ssl

from berth.controlplane.processes import ManagedProcess, wait_until

__all__ = ["etcd_healthy", "get_ok", "start_until_healthy"]


def start_until_healthy(process: ManagedProcess, *, port: int, path: str, timeout: float) -> None:
    """Start a component and wait until its health endpoint says ok; stop it if it never does.

    kube-scheduler and kube-controller-manager serve health on a self-signed
    certificate they make themselves, so it is not verified.
    """
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE
    process.start()
    try:
        wait_until(
            lambda: get_ok(port, path, insecure),
            timeout=timeout,
            failure=process.failure_message,
            description=f"{process.name} {path}",
        )
    except BaseException:
        process.stop()
        raise


def get_ok(port: int, path: str, context: ssl.SSLContext) -> bool:
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=5)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status == 200 and response.read().strip() == b"ok"
    except (OSError, http.client.HTTPException):
        return False
    finally:
        with contextlib.suppress(Exception):
            connection.close()


def etcd_healthy(port: int) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", "/health")
        response = connection.getresponse()
        body = json.loads(response.read() or b"{}")
        return response.status == 200 and body.get("health") == "true"
    except (OSError, http.client.HTTPException, ValueError):
        return False
    finally:
        with contextlib.suppress(Exception):
            connection.close()
