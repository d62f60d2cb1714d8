"""Raw storage objects and pods with volumes for the volume plugins' tests, and a cycle over them."""

from __future__ import annotations

from typing import Any

from berth.engine.cluster import ClusterState
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import ClusterEvent, QueueingHint
from berth.engine.framework.interfaces import EnqueueExtensions
from berth.engine.model.csi import CSIDriver, CSINode, VolumeAttachment
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.model.storage import PersistentVolume, PersistentVolumeClaim
from berth.engine.model.storage_class import StorageClass
from tests.builders import make_pod
from tests.storage_builders import (
    make_attachment,
    make_class,
    make_csi_driver,
    make_csi_node,
    make_pv,
    make_pvc,
)

Raw = dict[str, Any]


def pod_with(
    name: str, *volumes: Raw, node: str = "", namespace: str = "default", uid: str = ""
) -> Raw:
    """A pod with these `spec.volumes` entries, bound to `node` when given."""
    builder = make_pod(name, namespace)
    if node:
        builder.node(node)
    if uid:
        builder.uid(uid)
    raw = builder.obj()
    raw["spec"]["volumes"] = list(volumes)
    return raw


def claim_volume(claim: str, name: str = "") -> Raw:
    return {"name": name or claim, "persistentVolumeClaim": {"claimName": claim}}


def ephemeral_volume(name: str) -> Raw:
    return {"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}


def inline(name: str, source_kind: str, **source: Any) -> Raw:
    return {"name": name, source_kind: source}


def claim(
    name: str,
    *,
    namespace: str = "default",
    volume: str = "",
    storage_class: str | None = None,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    owner_uid: str = "",
) -> Raw:
    builder = make_pvc(name, namespace).access_modes(*modes)
    if volume:
        builder.volume_name(volume)
    if storage_class is not None:
        builder.storage_class(storage_class)
    if owner_uid:
        builder.owned_by_pod("p", owner_uid)
    return builder.obj()


def persistent_volume(name: str, *, labels: dict[str, str] | None = None, **source: Any) -> Raw:
    """A PV with one source given as keyword, e.g. csi={"driver": "d", "volumeHandle": "h"}."""
    builder = make_pv(name)
    for key, value in (labels or {}).items():
        builder.label(key, value)
    for kind, fields in source.items():
        builder.source(kind, **fields)
    return builder.obj()


def csi_volume(name: str, driver: str, handle: str = "") -> Raw:
    return make_pv(name).csi(driver, handle or name).obj()


def storage_class(name: str, provisioner: str = "csi.example.com", *, wait: bool = True) -> Raw:
    builder = make_class(name, provisioner)
    return (builder.wait_for_first_consumer() if wait else builder).obj()


def csi_node(node: str, limits: dict[str, int | None]) -> Raw:
    builder = make_csi_node(node)
    for driver, count in limits.items():
        builder.driver(driver, count=count)
    return builder.obj()


def csi_driver(name: str, *, prevent_if_missing: bool = False) -> Raw:
    return make_csi_driver(name).set("spec.preventPodSchedulingIfMissing", prevent_if_missing).obj()


def attachment(name: str, *, node: str, attacher: str, volume: str | None) -> Raw:
    return make_attachment(name, attacher=attacher, node=node, pv=volume).obj()


_PARSERS = {
    "PersistentVolumeClaim": PersistentVolumeClaim.from_dict,
    "PersistentVolume": PersistentVolume.from_dict,
    "StorageClass": StorageClass.from_dict,
    "CSINode": CSINode.from_dict,
    "CSIDriver": CSIDriver.from_dict,
    "VolumeAttachment": VolumeAttachment.from_dict,
}


def parse_storage(raw: Raw) -> Any:
    return _PARSERS[raw["kind"]](raw)


def storage_cluster(
    nodes: tuple[Raw, ...], *, pods: tuple[Raw, ...] = (), objects: tuple[Raw, ...] = ()
) -> ClusterState:
    cluster = ClusterState(capacity=4)
    for raw_node in nodes:
        cluster.upsert_node(Node.from_dict(raw_node))
    for raw_pod in pods:
        cluster.add_pod(Pod.from_dict(raw_pod))
    for raw in objects:
        cluster.storage.upsert(parse_storage(raw))
    return cluster


def storage_cycle(
    nodes: tuple[Raw, ...], *, pods: tuple[Raw, ...] = (), objects: tuple[Raw, ...] = ()
) -> CycleState:
    return CycleState(storage_cluster(nodes, pods=pods, objects=objects))


def hint_of(
    plugin: EnqueueExtensions, event: ClusterEvent, pod: Raw, old: object, new: object
) -> QueueingHint:
    """What the plugin's hint for `event` says about `pod` after old -> new."""
    registration = next(r for r in plugin.events_to_register() if r.event == event)
    assert registration.hint is not None
    return registration.hint(Pod.from_dict(pod), old, new)
