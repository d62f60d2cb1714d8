"""VolumeBinding's Reserve, Unreserve and PreBind: from a decision to bound claims.

Reserve assumes what Filter chose for the node in the cluster's storage cache (a static
volume's claimRef, a provisioned claim's selected node), so the next pod's decision sees
the volume taken and the claim headed for this node. PreBind writes the same through the
API port, then waits — watching the cache the watches feed, checked once a second as
kube-scheduler's binder does — until the PV controller reports every claim bound, a
check finds the binding undone, or `bindTimeoutSeconds` pass. Unreserve (and a failed
write) drop the assumptions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from berth.engine.cluster import ClusterState
from berth.engine.cluster.storage import StorageObjects
from berth.engine.csi_translation.handles import TranslationError
from berth.engine.csi_translation.persistent_volumes import translated_affinity
from berth.engine.framework.handle import ClaimReference, VolumeBindingWriter
from berth.engine.model.csi import CSINode
from berth.engine.model.pod import Pod
from berth.engine.model.storage import (
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    ClaimRef,
    PersistentVolume,
    PersistentVolumeClaim,
)
from berth.engine.plugins.volume_binding.filtering import PodVolumes

__all__ = [
    "POLL_SECONDS",
    "BindingWait",
    "assume_pod_volumes",
    "bind_volume_to_claim",
    "check_bindings",
    "pod_claims_bound",
    "revert",
]

POLL_SECONDS = 1.0  # kube-scheduler looks at the bindings once a second
DEADLINE_EXCEEDED = "binding volumes: context deadline exceeded"


def bind_volume_to_claim(
    volume: PersistentVolume, claim: PersistentVolumeClaim
) -> tuple[PersistentVolume, bool]:
    """`volume` bound to `claim` as the PV controller's helper binds it, and whether that
    changed anything (claimRef, or the bound-by-controller annotation)."""
    ref = volume.claim_ref
    changed = False
    if ref is None or (ref.namespace, ref.name, ref.uid) != (
        claim.namespace,
        claim.name,
        claim.uid,
    ):
        volume = dataclasses.replace(
            volume, claim_ref=ClaimRef(namespace=claim.namespace, name=claim.name, uid=claim.uid)
        )
        changed = True
    # Pre-bound by the user (the claimRef named this claim already) stays unmarked.
    if not _bound_before(ref, claim) and ANN_BOUND_BY_CONTROLLER not in volume.annotations:
        annotations = {**volume.annotations, ANN_BOUND_BY_CONTROLLER: "yes"}
        volume = dataclasses.replace(
            volume, metadata=dataclasses.replace(volume.metadata, annotations=annotations)
        )
        changed = True
    return volume, changed


def _bound_before(ref: ClaimRef | None, claim: PersistentVolumeClaim) -> bool:
    if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
        return False
    return not ref.uid or ref.uid == claim.uid


def pod_claims_bound(pod: Pod, storage: StorageObjects) -> bool:
    """Every claim of `pod` is fully bound, as assumed (upstream `arePodVolumesBound`)."""
    for volume in pod.volumes:
        if not volume.claim_name:
            continue
        claim = storage.claim(pod.namespace, volume.claim_name)
        if claim is None or not claim.bind_completed:
            return False
    return True


def revert(storage: StorageObjects, volumes: PodVolumes) -> None:
    for _claim, volume in volumes.static:
        storage.restore_volume(volume.name)
    for claim, _capacity in volumes.provisions:
        storage.restore_claim(claim.namespace, claim.name)


def _assume_problem(
    stored: PersistentVolume | PersistentVolumeClaim | None, wanted: str, resource: str, key: str
) -> str | None:
    """Why an object cannot be assumed, in the assume cache's words (None: it can)."""
    if stored is None:
        return f'{resource} "{key}" not found'
    if stored.resource_version != wanted:
        return f'"{key}" is out of sync (stored: {stored.resource_version}, assume: {wanted})'
    return None


def assume_pod_volumes(
    storage: StorageObjects, volumes: PodVolumes, node_name: str
) -> PodVolumes | str:
    """Assume the node's bindings; what was assumed, or why not (nothing is left assumed)."""
    static: list[tuple[PersistentVolumeClaim, PersistentVolume]] = []
    provisions: list[tuple[PersistentVolumeClaim, None]] = []
    problem: str | None = None
    for claim, volume in volumes.static:
        bound, changed = bind_volume_to_claim(volume, claim)
        if changed:
            stored = storage.volumes.get_api(bound.key)
            problem = _assume_problem(
                stored, bound.resource_version, "persistentvolumes", bound.key
            )
            if problem is not None:
                break
            storage.assume_volume(bound)
        static.append((claim, bound))
    for claim, _capacity in volumes.provisions if problem is None else ():
        annotations = {**claim.annotations, ANN_SELECTED_NODE: node_name}
        selected = dataclasses.replace(
            claim, metadata=dataclasses.replace(claim.metadata, annotations=annotations)
        )
        stored_claim = storage.claims.get_api(selected.key)
        problem = _assume_problem(
            stored_claim, selected.resource_version, "persistentvolumeclaims", selected.key
        )
        if problem is not None:
            break
        storage.assume_claim(selected)
        provisions.append((selected, None))
    if problem is not None:
        revert(storage, PodVolumes(tuple(static), tuple(provisions)))
        return problem
    return PodVolumes(tuple(static), tuple(provisions))


async def write_bindings(
    writer: VolumeBindingWriter, storage: StorageObjects, volumes: PodVolumes, node_name: str
) -> tuple[list[str], list[str]] | str:
    """Write the assumed bindings (upstream `bindAPIUpdate`); the versions the API server
    stored (volumes, then claims), or its refusal. What was not written is un-assumed."""
    volume_versions: list[str] = []
    claim_versions: list[str] = []
    static, provisions = volumes.static, volumes.provisions
    for index, (claim, volume) in enumerate(static):
        written = await writer.bind_volume(
            volume=volume.name,
            resource_version=volume.resource_version,
            claim=ClaimReference(claim.namespace, claim.name, claim.uid, claim.resource_version),
            bound_by_controller=volume.annotations.get(ANN_BOUND_BY_CONTROLLER) == "yes",
        )
        if not written.written:
            revert(storage, PodVolumes(static[index:], provisions))
            return written.error
        volume_versions.append(written.resource_version)
    for index, (claim, _capacity) in enumerate(provisions):
        written = await writer.select_node(
            namespace=claim.namespace,
            claim=claim.name,
            resource_version=claim.resource_version,
            node_name=node_name,
        )
        if not written.written:
            revert(storage, PodVolumes((), provisions[index:]))
            return written.error
        claim_versions.append(written.resource_version)
    return volume_versions, claim_versions


def _older(cached: str, written: str) -> bool:
    """The cache has not caught up with the version our write produced."""
    try:
        return int(cached) < int(written)
    except ValueError:
        return False


def _affinity_problem(
    volume: PersistentVolume, node_name: str, labels: Mapping[str, str], csi_node: CSINode | None
) -> str | None:
    """Why the node cannot reach `volume` (in its CSI form where the node migrated its
    plugin); raises `TranslationError` when the translator refuses the volume."""
    translated = dataclasses.replace(volume, node_affinity=translated_affinity(volume, csi_node))
    if translated.node_affinity_matches(labels):
        return None
    return (
        f'pv "{volume.name}" node affinity doesn\'t match node "{node_name}": '
        "no matching NodeSelectorTerms"
    )


def check_bindings(
    cluster: ClusterState,
    pod: Pod,
    node_name: str,
    volumes: PodVolumes,
    versions: tuple[Sequence[str], Sequence[str]],
) -> bool | str:
    """True when every written binding is complete, False while the PV controller is still
    at it, or why binding failed (upstream `checkBindings`, on the watch-fed cache)."""
    node = cluster.node_named(node_name)
    if node is None:
        return f'failed to get node "{node_name}": node "{node_name}" not found'
    if cluster.pod(pod.uid) is None:
        return f'pod does not exist any more: pod "{pod.name}" not found'
    storage = cluster.storage
    labels = node.labels
    csi_node = storage.csi_node(node_name)
    volume_versions, claim_versions = versions
    for (claim, volume), written in zip(volumes.static, volume_versions, strict=True):
        current = storage.volumes.get_api(volume.name)
        if current is None:
            return f'failed to check binding: persistentvolumes "{volume.name}" not found'
        current_claim = storage.claims.get_api(claim.key)
        if current_claim is None:
            return f'failed to check binding: persistentvolumeclaims "{claim.key}" not found'
        if _older(current.resource_version, written):
            return False
        try:
            problem = _affinity_problem(current, node_name, labels, csi_node)
        except TranslationError as refused:
            return f"failed to translate pv to csi: {refused}"
        if problem is not None:
            return problem
        if current.claim_ref is None or not current.claim_ref.uid:
            return f'ClaimRef got reset for pv "{current.name}"'
        if not current_claim.bind_completed:
            return False
    for (claim, _capacity), written in zip(volumes.provisions, claim_versions, strict=True):
        current_claim = storage.claims.get_api(claim.key)
        if current_claim is None:
            return (
                f'failed to check provisioning pvc: persistentvolumeclaims "{claim.key}" not found'
            )
        if _older(current_claim.resource_version, written):
            return False
        if not current_claim.annotations:
            return f'selectedNode annotation reset for PVC "{claim.name}"'
        if current_claim.selected_node != node_name:
            # The provisioner takes the annotation away when it cannot provision.
            return f'provisioning failed for PVC "{claim.name}"'
        if current_claim.volume_name:
            current = storage.volumes.get_api(current_claim.volume_name)
            if current is None:
                return False  # not here yet (or deleted, and the claim will be unbound)
            try:
                problem = _affinity_problem(current, node_name, labels, csi_node)
            except TranslationError as refused:
                return str(refused)
            if problem is not None:
                return problem
        if not current_claim.bind_completed:
            return False
    return True


class BindingWait:
    """PreBind's wait for the PV controller, bounded by the bind timeout."""

    def __init__(self, writer: VolumeBindingWriter, timeout_seconds: int) -> None:
        self._writer = writer
        self._timeout = timeout_seconds

    async def until_bound(
        self,
        cluster: ClusterState,
        pod: Pod,
        node_name: str,
        volumes: PodVolumes,
        versions: tuple[Sequence[str], Sequence[str]],
    ) -> str | None:
        """None once bound; else the error PreBind reports."""
        writer = self._writer
        deadline = writer.now() + self._timeout
        while True:
            remaining = deadline - writer.now()
            if not remaining > 0:  # (also when the clock is not a clock: NaN)
                return DEADLINE_EXCEEDED
            # Looked at on the tick, never before: as upstream, a timeout shorter than
            # the tick never looks at all.
            await writer.pause(min(POLL_SECONDS, remaining))
            if not writer.now() < deadline:
                return DEADLINE_EXCEEDED
            outcome = check_bindings(cluster, pod, node_name, volumes, versions)
            if outcome is True:
                return None
            if isinstance(outcome, str):
                return f"binding volumes: {outcome}"
