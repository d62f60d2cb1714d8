"""Storage objects in offline input: read from files, checked, and completed as a cluster would.

`berth simulate` accepts PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes,
CSIDrivers, CSIStorageCapacities and VolumeAttachments in `--existing` or `--objects`. Objects
written by hand lack what the API server and kube-controller-manager add once they exist, and
the volume plugins read exactly that; so, only where the object does not say, this module
fills it in the way they would:

- a claim without a class gets the default StorageClass (the one annotated
  `storageclass.kubernetes.io/is-default-class: "true"`; the last listed if several), as the
  DefaultStorageClass admission plugin and the PV controller's retroactive assignment do;
- a volume without `status.phase` is Available, or Bound when it has a `claimRef`;
- a claim without `status.phase` that a volume's `claimRef` names, or whose `volumeName` is
  set, is Bound to that volume (with `pv.kubernetes.io/bind-completed`), as the PV controller
  binds pre-bound pairs; any other is Pending.

A StatefulSet in `--pods` also gets the claims its controller creates for each pod from its
`volumeClaimTemplates` (unless a claim of that name is given), and generic ephemeral volumes
get theirs when their pod is placed (see `berth.scheduling.simulator`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from berth.cli.input_files import InputError
from berth.cli.kind_input import parse_as, refuse_repeated
from berth.engine.cluster.storage import StorageObject, storage_kind
from berth.engine.errors import FieldError, InvalidObjectError
from berth.engine.model.parsing import as_list, as_map, display_name
from berth.engine.model.pod import Pod
from berth.engine.model.storage import (
    ANN_BIND_COMPLETED,
    PersistentVolume,
    PersistentVolumeClaim,
    parse_claim_template,
)
from berth.engine.model.storage_class import StorageClass
from berth.kube.storage_kinds import STORAGE_KINDS, storage_kind_named

__all__ = [
    "STORAGE_KIND_NAMES",
    "complete_storage",
    "load_storage",
    "parse_storage_object",
    "refuse_repeated_storage",
    "stateful_set_claims",
]

STORAGE_KIND_NAMES = tuple(kind.kind for kind in STORAGE_KINDS)
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"


def parse_storage_object(path: Path | str, raw: Mapping[str, Any]) -> StorageObject:
    """Parse a storage object read from `path`; raises `InputError` naming the file, object and field."""
    watched = storage_kind_named(str(raw.get("kind")))
    if watched is None:
        raise ValueError(f"not a storage kind: {raw.get('kind')!r}")
    return parse_as(watched, path, raw)


def refuse_repeated_storage(objects: Sequence[tuple[Path | str, StorageObject]]) -> None:
    """A cluster holds one object of each kind and key; a second would silently replace the first."""
    refuse_repeated(objects, lambda obj: (storage_kind(obj), obj.key))


def _default_class(objects: Sequence[StorageObject]) -> str | None:
    defaults = [
        obj.name
        for obj in objects
        if isinstance(obj, StorageClass)
        and obj.metadata.annotations.get(DEFAULT_CLASS_ANNOTATION) == "true"
    ]
    return defaults[-1] if defaults else None


def complete_storage(objects: Sequence[StorageObject]) -> list[StorageObject]:
    """The objects as the API server and the PV controller would complete them (see above)."""
    default_class = _default_class(objects)
    claimed_by = {
        obj.claim_ref.key: obj.name
        for obj in objects
        if isinstance(obj, PersistentVolume) and obj.claim_ref is not None
    }
    completed: list[StorageObject] = []
    for obj in objects:
        if isinstance(obj, PersistentVolume) and not obj.phase:
            completed.append(
                dataclasses.replace(
                    obj, phase="Bound" if obj.claim_ref is not None else "Available"
                )
            )
        elif isinstance(obj, PersistentVolumeClaim):
            completed.append(_completed_claim(obj, default_class, claimed_by.get(obj.key)))
        else:
            completed.append(obj)
    return completed


def load_storage(
    listed: Sequence[tuple[Path | str, StorageObject]], created: Sequence[PersistentVolumeClaim]
) -> list[StorageObject]:
    """The `listed` objects (each with the file or cluster it came from), checked and completed
    as a cluster would, with the claims controllers `created` that none of them is already."""
    refuse_repeated_storage(listed)
    objects = [obj for _, obj in listed]
    keys = {(storage_kind(obj), obj.key) for obj in objects}
    objects += [claim for claim in created if ("PersistentVolumeClaim", claim.key) not in keys]
    return complete_storage(objects)


def _completed_claim(
    claim: PersistentVolumeClaim, default_class: str | None, claimed_by: str | None
) -> PersistentVolumeClaim:
    if claim.storage_class_name is None and not claim.storage_class and default_class:
        claim = dataclasses.replace(claim, storage_class_name=default_class)
    if claim.phase:
        return claim
    volume = claim.volume_name or claimed_by
    if not volume:
        return dataclasses.replace(claim, phase="Pending")
    metadata = dataclasses.replace(
        claim.metadata, annotations={**claim.metadata.annotations, ANN_BIND_COMPLETED: "yes"}
    )
    return dataclasses.replace(claim, metadata=metadata, volume_name=volume, phase="Bound")


def stateful_set_claims(
    path: Path | str, raw: Mapping[str, Any], pods: Sequence[Pod]
) -> list[PersistentVolumeClaim]:
    """The claims a StatefulSet's controller creates for `pods` (its expanded pods): one per
    `volumeClaimTemplates` entry and pod, named as the pod's claim volume names it, labelled
    with the template's labels and the set's `matchLabels`."""
    metadata = raw.get("metadata") if isinstance(raw.get("metadata"), Mapping) else {}
    namespace = display_name((metadata or {}).get("namespace"), "default")
    name = f"{namespace}/{display_name((metadata or {}).get('name'))}"
    try:
        spec = as_map(raw.get("spec"), "spec")
        selector = as_map(spec.get("selector"), "spec.selector")
        match_labels = {
            str(key): str(value)
            for key, value in as_map(
                selector.get("matchLabels"), "spec.selector.matchLabels"
            ).items()
        }
        templates = {}
        for index, item in enumerate(
            as_list(spec.get("volumeClaimTemplates"), "spec.volumeClaimTemplates")
        ):
            at = f"spec.volumeClaimTemplates[{index}]"
            template_name = as_map(as_map(item, at).get("metadata"), f"{at}.metadata").get("name")
            templates[str(template_name)] = parse_claim_template(item, at, namespace=namespace)
    except FieldError as error:
        raise InputError(
            f"{path}: {InvalidObjectError(kind='StatefulSet', name=name, field=error.field, problem=error.problem)}"
        ) from None
    claims = []
    for pod in pods:
        for volume in pod.volumes:
            template = templates.get(volume.name)
            if template is not None and volume.claim_name:
                claims.append(template.from_template(name=volume.claim_name, labels=match_labels))
    return claims
