"""DRA objects in offline input: DeviceClasses, ResourceClaims, ResourceClaimTemplates,
ResourceSlices and DeviceTaintRules, read from `--existing` or `--objects` (or listed from a
cluster) and checked as one cluster would hold them.

Claims for pods that name a template are made when the pod is placed, as the resourceclaim
controller would (see `berth.scheduling.simulated_claims`); a claim already listed under the
name a pod's status gives is used as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from berth.cli.kind_input import parse_as, refuse_repeated
from berth.engine.cluster.dra import dra_kind
from berth.engine.dra.claims import ResourceClaimTemplate
from berth.kube.dra_kinds import DRA_INPUT_KINDS, dra_input_kind_named
from berth.scheduling.simulated_claims import DraInputObject

__all__ = ["DRA_KIND_NAMES", "load_dra", "parse_dra_object"]

DRA_KIND_NAMES = tuple(kind.kind for kind in DRA_INPUT_KINDS)


def parse_dra_object(path: Path | str, raw: Mapping[str, Any]) -> DraInputObject:
    """Parse a DRA object read from `path`; raises `InputError` naming the file, object and field."""
    watched = dra_input_kind_named(str(raw.get("kind")))
    if watched is None:
        raise ValueError(f"not a DRA kind: {raw.get('kind')!r}")
    return parse_as(watched, path, raw)


def _identity(obj: DraInputObject) -> tuple[str, str]:
    if isinstance(obj, ResourceClaimTemplate):
        return "ResourceClaimTemplate", f"{obj.namespace}/{obj.name}"
    return dra_kind(obj), obj.key


def load_dra(listed: Sequence[tuple[Path | str, DraInputObject]]) -> list[DraInputObject]:
    """The `listed` objects (each with the file or cluster it came from), with no two of one
    kind and name."""
    refuse_repeated(listed, _identity)
    return [obj for _, obj in listed]
