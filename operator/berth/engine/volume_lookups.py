"""Storage objects the volume plugins look up, with a missing one reported as kube-scheduler does.

kube-scheduler's listers answer a miss with the API's NotFound error, and the plugins put
its text (`persistentvolumeclaim "data" not found`) into the pod's status as it is.
"""

from __future__ import annotations

from berth.engine.cluster import ClusterState
from berth.engine.framework.events import QueueingHint, QueueingHintFn
from berth.engine.framework.status import Status, unresolvable
from berth.engine.model.pod import Pod
from berth.engine.model.storage import PersistentVolume, PersistentVolumeClaim
from berth.engine.model.storage_class import StorageClass

__all__ = [
    "claim_not_found",
    "find_claim",
    "find_storage_class",
    "find_volume",
    "requeue_for_pods_claim",
    "storage_class_not_found",
    "volume_not_found",
]


def claim_not_found(name: str) -> str:
    return f'persistentvolumeclaim "{name}" not found'


def volume_not_found(name: str) -> str:
    return f'persistentvolume "{name}" not found'


def storage_class_not_found(name: str) -> str:
    return f'storageclass.storage.k8s.io "{name}" not found'


def find_claim(cluster: ClusterState, namespace: str, name: str) -> PersistentVolumeClaim | Status:
    """The claim, or UnschedulableAndUnresolvable with the API's NotFound text."""
    claim = cluster.storage.claim(namespace, name)
    return claim if claim is not None else unresolvable(claim_not_found(name))


def find_volume(cluster: ClusterState, name: str) -> PersistentVolume | Status:
    volume = cluster.storage.volume(name)
    return volume if volume is not None else unresolvable(volume_not_found(name))


def find_storage_class(cluster: ClusterState, name: str) -> StorageClass | Status:
    storage_class = cluster.storage.storage_class(name)
    return (
        storage_class if storage_class is not None else unresolvable(storage_class_not_found(name))
    )


def requeue_for_pods_claim(*, with_ephemeral: bool) -> QueueingHintFn:
    """A hint for claim events: requeue when the claim is one the rejected pod mounts.

    `with_ephemeral` counts the claims of the pod's generic ephemeral volumes too.
    """

    def hint(pod: Pod, old: object, new: object) -> QueueingHint:
        if not isinstance(new, PersistentVolumeClaim):
            return QueueingHint.QUEUE
        if new.namespace != pod.namespace:
            return QueueingHint.SKIP
        uses = any(
            volume.claim_name == new.name
            for volume in pod.volumes
            if with_ephemeral or not volume.ephemeral
        )
        return QueueingHint.QUEUE if uses else QueueingHint.SKIP

    return hint
