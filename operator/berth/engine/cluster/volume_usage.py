"""Which nodes hold pods with claim or in-line disk volumes, and how many placed pods use each claim.

The volume plugins only need to look at the pods of a node when some pod there
has such a volume; most nodes have none, so a per-node count turns "which nodes
need a closer look" into one array comparison. The per-claim counts are
kube-scheduler's snapshot "used PVC" set, which decides ReadWriteOncePod
conflicts without scanning pods. Both are kept current per pod change by
`ClusterState`, so `ClusterState.trial` undoes them with the pods.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from berth.engine.model.pod import Pod
from berth.engine.model.volume_sources import CSISource, OtherSource

__all__ = ["VolumeUsage", "claim_key", "has_storage_volumes"]


def claim_key(namespace: str, claim: str) -> str:
    return f"{namespace}/{claim}"


def has_storage_volumes(pod: Pod) -> bool:
    """Some volume is a claim or an in-line disk (the kinds the volume plugins look at).

    In-line CSI volumes are left out: no volume plugin counts or checks them.
    """
    return any(
        volume.claim_name
        or (volume.source is not None and not isinstance(volume.source, OtherSource | CSISource))
        for volume in pod.volumes
    )


class VolumeUsage:
    def __init__(self, capacity: int) -> None:
        # Per slot: how many of its pods have a claim or in-line disk volume.
        self.pods_with_volumes: NDArray[np.int64] = np.zeros(capacity, dtype=np.int64)
        # "namespace/claim" -> references from persistentVolumeClaim volumes of placed pods.
        self._claim_users: dict[str, int] = {}

    def account(self, slot: int, pod: Pod, sign: int) -> None:
        """Count (`sign` +1) or uncount (-1) a pod placed on `slot`."""
        if not has_storage_volumes(pod):
            return
        self.pods_with_volumes[slot] += sign
        users = self._claim_users
        for volume in pod.volumes:
            if not volume.claim_name or volume.ephemeral:
                continue
            key = claim_key(pod.namespace, volume.claim_name)
            count = users.get(key, 0) + sign
            if count > 0:
                users[key] = count
            else:
                users.pop(key, None)

    def claim_in_use(self, namespace: str, claim: str) -> bool:
        """Some placed pod mounts this claim through a persistentVolumeClaim volume."""
        return claim_key(namespace, claim) in self._claim_users

    def grow(self, capacity: int) -> None:
        grown = np.zeros(capacity, dtype=np.int64)
        grown[: self.pods_with_volumes.size] = self.pods_with_volumes
        self.pods_with_volumes = grown
