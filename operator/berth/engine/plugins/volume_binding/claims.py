"""PreFilter's half of VolumeBinding: is every claim of the pod usable, and which are bound?

kube-scheduler first checks each claim the pod names as its informer has it (exists, not
lost, not being deleted, an ephemeral claim made for this pod), then sorts the claims as
its assume cache has them — so a claim this scheduler has just bound for an earlier pod
counts as bound — into bound ones, unbound ones whose class waits for the first consumer
(the scheduler's to bind or provision), and unbound ones that should have been bound
already (Immediate binding, or pre-bound by `volumeName`), which stop the pod outright.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from berth.engine.cluster.storage import StorageObjects
from berth.engine.model.pod import Pod
from berth.engine.model.pod_volumes import PodVolume
from berth.engine.model.storage import PersistentVolume, PersistentVolumeClaim

__all__ = [
    "UNBOUND_IMMEDIATE",
    "ClaimProblem",
    "PodClaims",
    "classify_claims",
    "first_claim_problem",
]

UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


@dataclass(frozen=True, slots=True)
class ClaimProblem:
    """Why the pod cannot be scheduled now; `error` marks a failure of the scheduler itself."""

    message: str
    error: bool = False


@dataclass(frozen=True, slots=True)
class PodClaims:
    """The pod's claims, sorted as upstream's `PodVolumeClaims`.

    `bound` pairs each bound claim with its volume (None when that volume does not exist);
    `delayed` are the unbound claims of WaitForFirstConsumer classes, and
    `volumes_by_class` the volumes of their classes (assumed bindings included).
    """

    bound: tuple[tuple[PersistentVolumeClaim, PersistentVolume | None], ...]
    delayed: tuple[PersistentVolumeClaim, ...]
    volumes_by_class: Mapping[str, Sequence[PersistentVolume]]


def _not_for_pod(pod: Pod, claim: PersistentVolumeClaim) -> str | None:
    if claim.namespace != pod.namespace or claim.metadata.controller_uid != pod.uid:
        return (
            f"PVC {claim.namespace}/{claim.name} was not created for pod "
            f"{pod.namespace}/{pod.name} (pod is not owner)"
        )
    return None


def _claim_volumes(pod: Pod) -> list[PodVolume]:
    return [volume for volume in pod.volumes if volume.claim_name]


def first_claim_problem(pod: Pod, storage: StorageObjects) -> str | None:
    """The first reason, in volume order, that a claim of `pod` cannot be used (upstream
    `podHasPVCs`); reads the claims as the watch delivered them."""
    for volume in _claim_volumes(pod):
        name = volume.claim_name
        claim = storage.claims.get_api(f"{pod.namespace}/{name}")
        if claim is None:
            if volume.ephemeral:
                # Normal right after the pod was created: the ephemeral controller is on it.
                return (
                    "waiting for ephemeral volume controller to create the "
                    f'persistentvolumeclaim "{name}"'
                )
            return f'persistentvolumeclaim "{name}" not found'
        if claim.phase == "Lost":
            return (
                f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                f'"{claim.volume_name}"'
            )
        if claim.deleting:
            return f'persistentvolumeclaim "{name}" is being deleted'
        if volume.ephemeral:
            problem = _not_for_pod(pod, claim)
            if problem is not None:
                return problem
    return None


def classify_claims(pod: Pod, storage: StorageObjects) -> PodClaims | ClaimProblem:
    """Sort the claims of `pod` (upstream `GetPodVolumeClaims`), as this scheduler assumes
    them; a problem when one is unbound although it should be bound already."""
    bound: list[tuple[PersistentVolumeClaim, PersistentVolume | None]] = []
    delayed: list[PersistentVolumeClaim] = []
    immediate = False
    for volume in _claim_volumes(pod):
        claim = storage.claim(pod.namespace, volume.claim_name)
        if claim is None:
            return ClaimProblem(
                f'error getting PVC "{pod.namespace}/{volume.claim_name}": '
                f'persistentvolumeclaims "{pod.namespace}/{volume.claim_name}" not found',
                error=True,
            )
        if volume.ephemeral:
            problem = _not_for_pod(pod, claim)
            if problem is not None:
                return ClaimProblem(problem, error=True)
        if claim.bind_completed:
            bound.append((claim, storage.volume(claim.volume_name)))
            continue
        storage_class = storage.storage_class(claim.storage_class) if claim.storage_class else None
        waits = storage_class is not None and storage_class.waits_for_first_consumer
        # A claim pre-bound by volumeName is the PV controller's to bind, whatever its class.
        if waits and not claim.volume_name:
            delayed.append(claim)
        else:
            immediate = True
    if immediate:
        return ClaimProblem(UNBOUND_IMMEDIATE)
    classes = {claim.storage_class for claim in delayed}
    return PodClaims(
        bound=tuple(bound),
        delayed=tuple(delayed),
        volumes_by_class={name: storage.volumes_of_class(name) for name in classes},
    )
