"""`berth explain NAMESPACE/NAME`: the live cluster, read with get/list only, for one pod.

The cluster is the snapshot `berth simulate --from-cluster` reads (cluster_snapshot.py: what the
scheduler's cache holds, the cluster's SchedulerProfiles, pending pods' nominations), plus the pod
itself. A pod that is bound already is explained as if it were pending again, with itself taken
off its node, so that "why did it go there?" has an answer.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

from berth.cli.cluster_snapshot import ClusterSnapshot, read_live, read_snapshot
from berth.cli.input_files import InputError
from berth.cli.progress import listing_progress
from berth.engine.errors import InvalidObjectError
from berth.engine.model.pod import Pod
from berth.kube.api import ApiError, ApiSession

__all__ = ["LiveCluster", "parse_target", "read_cluster"]


@dataclass(frozen=True, slots=True)
class LiveCluster:
    pod: Pod  # as the scheduler would see it pending
    bound_to: str  # the node it is bound to now ("" when pending)
    snapshot: ClusterSnapshot  # the rest of the cluster, the pod itself taken out

    @property
    def nominated(self) -> dict[str, list[Pod]]:
        return self.snapshot.nominated


def parse_target(text: str) -> tuple[str, str]:
    """`NAMESPACE/NAME`, `pod/NAME` or `NAME` (namespace "default") -> (namespace, name)."""
    parts = text.split("/")
    if len(parts) == 1 and parts[0]:
        return "default", parts[0]
    if len(parts) == 2 and all(parts):
        return ("default", parts[1]) if parts[0] in ("pod", "pods") else (parts[0], parts[1])
    raise InputError(f"pod: expected NAMESPACE/NAME, got {text!r}")


def read_cluster(kubeconfig: Path, *, namespace: str, name: str) -> LiveCluster:
    """The pod and the cluster around it; `InputError` when either cannot be read."""

    async def read(session: ApiSession) -> tuple[dict[str, object], ClusterSnapshot]:
        try:
            raw_pod = await session.get_json(f"/api/v1/namespaces/{namespace}/pods/{name}")
        except ApiError as error:
            raise InputError(f"pod {namespace}/{name}: {error}") from None
        return raw_pod, await read_snapshot(session, progress=listing_progress(sys.stderr))

    raw_pod, snapshot = read_live(kubeconfig, None, read)
    try:
        pod = Pod.from_dict(raw_pod)
    except InvalidObjectError as error:
        raise InputError(f"pod {namespace}/{name}: {error}") from None
    others = replace(
        snapshot,
        bound_pods=[other for other in snapshot.bound_pods if other.uid != pod.uid],
        nominated={
            node: [other for other in pods if other.uid != pod.uid]
            for node, pods in snapshot.nominated.items()
        },
    )
    return LiveCluster(pod=replace(pod, node_name=""), bound_to=pod.node_name, snapshot=others)
