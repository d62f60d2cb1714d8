"""What a simulation does in place of the volume controllers: claims made, assumed bindings made true.

A pod's generic ephemeral volumes need claims, which the ephemeral-volume controller creates
(from the volume's template, owned by the pod) as soon as the pod exists; a simulation creates
them when it is about to place the pod.

Live, VolumeBinding's Reserve assumes PV and PVC bindings in the storage cache, PreBind writes
them to the API, and kube-controller-manager's PV controller completes them; the watch then
replaces the assumptions with the API's new versions. An offline simulation has no API and no
controller, so after each placement it settles every standing assumption the way they would:
a volume given a claimRef is Bound and its claim Bound to it (bind-completed), and a claim
marked with a selected node (dynamic provisioning) stays as PreBind writes it, since no
provisioner runs. The next pod then sees those claims exactly as it would in the cluster.
"""

from __future__ import annotations

import dataclasses
import itertools

from berth.engine.cluster.storage import StorageObjects
from berth.engine.model.object_meta import ObjectMeta
from berth.engine.model.pod import Pod
from berth.engine.model.storage import ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER

__all__ = ["create_ephemeral_claims", "settle_assumed_bindings"]

_versions = itertools.count(1)


def _next_version(metadata: ObjectMeta, **annotations: str) -> ObjectMeta:
    # Any new resourceVersion will do: it only has to differ from the one assumed upon.
    return dataclasses.replace(
        metadata,
        resource_version=f"simulated-{next(_versions)}",
        annotations={**metadata.annotations, **annotations},
    )


def create_ephemeral_claims(pod: Pod, storage: StorageObjects) -> None:
    """The claims of `pod`'s generic ephemeral volumes that do not exist yet, as the
    ephemeral-volume controller creates them (an existing claim of that name is left alone:
    VolumeBinding refuses it if the pod does not own it)."""
    for volume in pod.volumes:
        template = volume.claim_template
        if template is not None and storage.claim(pod.namespace, volume.claim_name) is None:
            storage.upsert_claim(
                template.from_template(name=volume.claim_name, controller_uid=pod.uid)
            )


def settle_assumed_bindings(storage: StorageObjects) -> None:
    """Turn every assumed PV and PVC into the objects the API would hold once bound."""
    for volume in storage.volumes.assumed_values():
        ref = volume.claim_ref
        storage.upsert_volume(
            dataclasses.replace(
                volume,
                metadata=_next_version(volume.metadata),
                phase="Bound" if ref is not None else volume.phase,
            )
        )
        claim = None if ref is None else storage.claim(ref.namespace, ref.name)
        if (
            claim is not None
            and not claim.bind_completed
            and claim.volume_name in ("", volume.name)
        ):
            # The PV controller completes the claim's side of a binding the scheduler started.
            done = {ANN_BIND_COMPLETED: "yes", ANN_BOUND_BY_CONTROLLER: "yes"}
            storage.upsert_claim(
                dataclasses.replace(
                    claim,
                    metadata=_next_version(claim.metadata, **done),
                    volume_name=volume.name,
                    phase="Bound",
                )
            )
    for claim in storage.claims.assumed_values():
        # Dynamic provisioning: PreBind writes the selected node; no provisioner runs here.
        storage.upsert_claim(dataclasses.replace(claim, metadata=_next_version(claim.metadata)))
