"""NodePorts per node from raw pods, straight from the behaviour notes (§2.5)."""

from __future__ import annotations

from typing import Any


def host_ports(pod: dict[str, Any]) -> list[tuple[str, str, int]]:
    """(ip, protocol, port) of every hostPort > 0 in regular and sidecar containers."""
    containers = [
        c for c in pod["spec"].get("initContainers", []) if c.get("restartPolicy") == "Always"
    ] + pod["spec"].get("containers", [])
    found = []
    for container in containers:
        for port in container.get("ports", []):
            if port.get("hostPort", 0) > 0:
                ip = port.get("hostIP") or "0.0.0.0"
                found.append((ip, port.get("protocol") or "TCP", port["hostPort"]))
    return found


def node_passes(pod: dict[str, Any], pods_on_node: list[dict[str, Any]]) -> bool:
    used = [p for other in pods_on_node for p in host_ports(other)]
    for ip, protocol, port in host_ports(pod):
        for used_ip, used_protocol, used_port in used:
            if (protocol, port) != (used_protocol, used_port):
                continue
            if "0.0.0.0" in (ip, used_ip) or ip == used_ip:
                return False
    return True
