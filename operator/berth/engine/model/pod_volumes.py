"""A pod's `spec.volumes`, as the volume plugins read them: which claims it uses, what it mounts in-line.

A `persistentVolumeClaim` volume names its claim; a generic `ephemeral` volume is backed by a
claim the ephemeral-volume controller creates from the volume's template, named
``<pod name>-<volume name>`` and controlled by the pod (the template is kept, so that a
simulation can create that claim as the controller would); every other volume is in-line.
"""

from __future__ import annotations

from dataclasses import dataclass

from berth.engine.errors import FieldError
from berth.engine.model.parsing import as_bool, as_list, as_map, as_str
from berth.engine.model.storage import PersistentVolumeClaim, parse_claim_template
from berth.engine.model.volume_sources import VolumeSource, parse_volume_source

__all__ = ["PodVolume", "parse_pod_volumes"]


@dataclass(frozen=True, slots=True)
class PodVolume:
    """One `spec.volumes[]` entry of a pod.

    `claim_name` is set for a `persistentVolumeClaim` volume (its `claimName`) and for a
    generic `ephemeral` volume (``<pod>-<volume>``, with `claim_template` the unnamed claim
    its `volumeClaimTemplate` describes). `source` is set for every other (in-line) volume.
    """

    name: str
    claim_name: str = ""
    read_only: bool = False  # persistentVolumeClaim.readOnly
    claim_template: PersistentVolumeClaim | None = None
    source: VolumeSource | None = None

    @property
    def ephemeral(self) -> bool:
        return self.claim_template is not None


def _claim_volume(name: str, raw: object, where: str) -> PodVolume:
    claim = as_map(raw, where)
    claim_name = as_str(claim.get("claimName"), f"{where}.claimName")
    if not claim_name:
        raise FieldError(f"{where}.claimName", "must be set")
    return PodVolume(
        name=name,
        claim_name=claim_name,
        read_only=as_bool(claim.get("readOnly"), f"{where}.readOnly"),
    )


def parse_pod_volumes(raw: object, *, pod_name: str, namespace: str) -> tuple[PodVolume, ...]:
    """A pod's `spec.volumes`, each with its claim or in-line source."""
    volumes = []
    for index, item in enumerate(as_list(raw, "spec.volumes")):
        where = f"spec.volumes[{index}]"
        volume = as_map(item, where)
        name = as_str(volume.get("name"), f"{where}.name")
        if volume.get("persistentVolumeClaim") is not None:
            volumes.append(
                _claim_volume(
                    name, volume["persistentVolumeClaim"], f"{where}.persistentVolumeClaim"
                )
            )
        elif volume.get("ephemeral") is not None:
            if not name:
                raise FieldError(f"{where}.name", "must be set for an ephemeral volume")
            ephemeral = as_map(volume["ephemeral"], f"{where}.ephemeral")
            template = parse_claim_template(
                ephemeral.get("volumeClaimTemplate"),
                f"{where}.ephemeral.volumeClaimTemplate",
                namespace=namespace,
            )
            volumes.append(
                PodVolume(name=name, claim_name=f"{pod_name}-{name}", claim_template=template)
            )
        else:
            volumes.append(PodVolume(name=name, source=parse_volume_source(volume, where)))
    return tuple(volumes)
