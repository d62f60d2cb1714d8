"""What `berth simulate` prints, and how it survives a closed or full stdout.

Names in the table come from the user's files and may hold anything YAML can spell (newlines,
lone surrogates); they are shown escaped so that every row stays one printable line. Writing
follows Unix tools: when the reader of a pipe has gone (`berth simulate ... | head -1`), the
command stops quietly with status 141, what the shell reports for a tool killed by SIGPIPE
(`yes | head -1`), so that `set -o pipefail` scripts see the same as with any other tool. Any
other write failure (a full disk) is one line on stderr and status 1, as coreutils do.
"""

from __future__ import annotations

import errno
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from berth.engine.cluster import ClusterState
from berth.engine.model.quantity import format_amount
from berth.scheduling.simulated_claims import ClaimDevices
from berth.scheduling.simulator import Placement, SimulationResult

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_WRITE_FAILED",
    "NodeUsage",
    "emit",
    "emit_to_file",
    "node_usage",
    "preemption_note",
    "printable",
    "to_json",
    "to_table",
]

EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE
EXIT_WRITE_FAILED = 1
MAX_MESSAGE = 1000


def printable(text: str, limit: int | None = None) -> str:
    """`text` with every unprintable character escaped (and cut to `limit`): one safe line."""
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]}..."
    if text.isprintable():
        return text
    return "".join(
        character if character.isprintable() else ascii(character)[1:-1] for character in text
    )


@dataclass(frozen=True, slots=True)
class NodeUsage:
    """One node's totals after the simulation, in canonical units (millicores, bytes, pods)."""

    name: str
    requested: dict[str, int]  # only resources with a non-zero request
    allocatable: dict[str, int]


def node_usage(cluster: ClusterState) -> list[NodeUsage]:
    """Requested and allocatable per node, sorted by node name: what every output shows."""
    usage = []
    for node in sorted(cluster.nodes(), key=lambda n: n.name):
        slot = cluster.slot_of(node.name)
        assert slot is not None
        requested = {}
        for resource in cluster.resource_names():
            column = cluster.resource_column(resource)
            assert column is not None
            amount = int(cluster.requested[column, slot])
            if resource == "pods":
                amount = int(cluster.pod_count[slot])
            if amount:
                requested[resource] = amount
        usage.append(NodeUsage(node.name, requested, dict(sorted(node.allocatable.items()))))
    return usage


def _formatted(amounts: dict[str, int]) -> dict[str, str]:
    return {name: format_amount(name, amount) for name, amount in amounts.items()}


def to_json(result: SimulationResult, warnings: list[str]) -> dict[str, Any]:
    nodes = [
        {
            "name": usage.name,
            "requested": _formatted(usage.requested),
            "allocatable": _formatted(usage.allocatable),
        }
        for usage in node_usage(result.cluster)
    ]
    pods = []
    for placement in result.placements:
        entry: dict[str, Any] = {
            "namespace": placement.pod.namespace,
            "name": placement.pod.name,
            "node": placement.node,
            "message": placement.message,
        }
        if placement.nominated_node:
            entry["nominatedNode"] = placement.nominated_node
            entry["victims"] = [victim.key for victim in placement.victims]
        if placement.claims:
            entry["resourceClaims"] = [_claim_json(claim) for claim in placement.claims]
        pods.append(entry)
    return {"pods": pods, "nodes": nodes, "warnings": warnings}


def _claim_json(claim: ClaimDevices) -> dict[str, Any]:
    """One of a placed pod's DRA claims: its allocation's results, as the claim status has them."""
    return {
        "name": claim.pod_claim,
        "resourceClaimName": claim.claim,
        "devices": [device.to_dict() for device in claim.devices],
    }


def preemption_note(placement: Placement) -> str:
    """Where preemption nominated the pod and whom it would evict; empty when it did not."""
    if not placement.nominated_node:
        return ""
    victims = " ".join(victim.key for victim in placement.victims)
    return f"nominated to {placement.nominated_node}, evicting: {victims}"


def to_table(result: SimulationResult) -> str:
    rows = [("POD", "NODE", "MESSAGE")]
    for placement in result.placements:
        message = placement.message
        if placement.nominated_node:
            message += f" [{preemption_note(placement)}]"
        rows.append(
            (
                printable(placement.pod.key),
                printable(placement.node or "<none>"),
                printable(message),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    lines = [f"{pod:<{widths[0]}}  {node:<{widths[1]}}  {message}" for pod, node, message in rows]
    scheduled = sum(1 for p in result.placements if p.node is not None)
    lines.append("")
    lines.append(
        f"{scheduled}/{len(result.placements)} pods placed on {result.cluster.node_count} nodes"
    )
    return "\n".join(lines)


def _stop_writing(stream: TextIO) -> None:
    # Point the descriptor at /dev/null so that the interpreter's flush at exit, which would
    # hit the same error again, succeeds silently.
    try:
        descriptor = stream.fileno()
    except (OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, descriptor)
    finally:
        os.close(devnull)


def _write_all(stream: TextIO, data: bytes, encoding: str) -> None:
    binary = getattr(stream, "buffer", None)
    if binary is None:
        stream.write(data.decode(encoding))
        stream.flush()
        return
    stream.flush()
    # A pipe whose reader leaves mid-write takes part of a large write and the buffered
    # writer reports the short count instead of failing; the next write then fails.
    view = memoryview(data)
    while view:
        written = binary.write(view)
        if not written:
            raise OSError(errno.EIO, "the output took no data")
        view = view[written:]
    binary.flush()


def emit(text: str, stream: TextIO, *, errors: TextIO | None = None) -> int:
    """Write and flush `text`; 0, or the exit status for a stream that cannot take it."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    data = text.encode(encoding, "backslashreplace")
    try:
        _write_all(stream, data, encoding)
    except BrokenPipeError:
        _stop_writing(stream)
        return EXIT_BROKEN_PIPE
    except OSError as error:
        _stop_writing(stream)
        if errors is not None:
            emit(f"berth simulate: cannot write the result: {error.strerror or error}\n", errors)
        return EXIT_WRITE_FAILED
    return 0


def emit_to_file(text: str, path: Path, *, errors: TextIO) -> int:
    """Write `text` to `path` (UTF-8); 0, or one line on `errors` and the write-failure status."""
    try:
        path.write_bytes(text.encode("utf-8", "backslashreplace"))
    except OSError as error:
        target = printable(str(path), MAX_MESSAGE)
        emit(f"berth simulate: cannot write {target}: {error.strerror or error}\n", errors)
        return EXIT_WRITE_FAILED
    return 0
