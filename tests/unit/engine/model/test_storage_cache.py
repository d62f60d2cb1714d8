"""The storage cache: lookups and indexes, and assumed PVs/PVCs that give way to newer API versions."""

from __future__ import annotations

import dataclasses

import pytest

from berth.engine.cluster import ClusterState
from berth.engine.cluster.storage import StorageObjects, storage_kind
from berth.engine.cluster.storage_assume import AssumeConflictError
from berth.engine.model.storage import ClaimRef
from tests.storage_builders import (
    make_attachment,
    make_capacity,
    make_class,
    make_csi_driver,
    make_csi_node,
    make_pv,
    make_pvc,
)


def test_the_cluster_carries_the_storage_cache() -> None:
    assert isinstance(ClusterState().storage, StorageObjects)


def test_lookups_by_name_namespace_and_node() -> None:
    storage = StorageObjects()
    storage.upsert(make_pv("pv1").storage_class("fast").build())
    storage.upsert(make_pvc("c", "ns").build())
    storage.upsert(make_class("fast").build())
    storage.upsert(make_csi_node("n1").driver("d", count=1).build())
    storage.upsert(make_csi_driver("d").build())
    storage.upsert(make_capacity("cap", "fast").build())
    storage.upsert(make_attachment("va", attacher="d", node="n1", pv="pv1").build())
    assert storage.volume("pv1") is not None and storage.volume("pv2") is None
    assert storage.claim("ns", "c") is not None and storage.claim("default", "c") is None
    assert storage.storage_class("fast") is not None
    assert storage.csi_node("n1") is not None
    assert storage.csi_driver("d") is not None
    assert [c.name for c in storage.capacities_of_class("fast")] == ["cap"]
    assert [a.name for a in storage.attachments_on("n1")] == ["va"]
    assert storage.attachments_on("n2") == []


def test_volumes_are_indexed_by_class_as_it_changes() -> None:
    storage = StorageObjects()
    storage.upsert(make_pv("a").storage_class("fast").build())
    storage.upsert(make_pv("b").storage_class("slow").build())
    storage.upsert(
        make_pv("c").annotation("volume.beta.kubernetes.io/storage-class", "fast").build()
    )
    assert [pv.name for pv in storage.volumes_of_class("fast")] == ["a", "c"]
    storage.upsert(make_pv("a").storage_class("slow").version("2").build())
    assert [pv.name for pv in storage.volumes_of_class("fast")] == ["c"]
    assert [pv.name for pv in storage.volumes_of_class("slow")] == ["b", "a"]
    storage.remove("PersistentVolume", "b")
    assert [pv.name for pv in storage.volumes_of_class("slow")] == ["a"]
    assert storage.volumes_of_class("none") == []


def test_capacities_and_attachments_follow_their_class_and_node() -> None:
    storage = StorageObjects()
    storage.upsert(make_capacity("cap", "fast").build())
    storage.upsert(make_capacity("cap", "slow").version("2").build())
    assert storage.capacities_of_class("fast") == []
    assert len(storage.capacities_of_class("slow")) == 1
    storage.upsert(make_attachment("va", attacher="d", node="n1", pv="p").build())
    storage.upsert(make_attachment("va", attacher="d", node="n2", pv="p").version("2").build())
    assert storage.attachments_on("n1") == [] and len(storage.attachments_on("n2")) == 1
    storage.remove("CSIStorageCapacity", "kube-system/cap")
    storage.remove("VolumeAttachment", "va")
    assert storage.capacities_of_class("slow") == [] and storage.attachments_on("n2") == []


def test_an_assumed_volume_is_seen_until_the_api_reports_a_newer_version() -> None:
    storage = StorageObjects()
    api = make_pv("pv1").storage_class("fast").build()
    storage.upsert(api)
    bound = dataclasses.replace(api, claim_ref=ClaimRef("ns", "c"))
    storage.assume_volume(bound)
    assert storage.volume("pv1") is bound
    assert storage.volumes.get_api("pv1") is api
    assert storage.volumes_of_class("fast") == [bound]
    # A resync of the very version the assumption was made from keeps it.
    storage.upsert(make_pv("pv1").storage_class("fast").build())
    assert storage.volume("pv1") is bound
    # The PV controller's write arrives: the API's version replaces the assumption.
    newer = make_pv("pv1").storage_class("fast").claim_ref("ns", "c").version("2").build()
    storage.upsert(newer)
    assert storage.volume("pv1") is newer
    assert not storage.volumes.is_assumed("pv1")


def test_restore_forgets_an_assumed_claim() -> None:
    storage = StorageObjects()
    api = make_pvc("c", "ns").build()
    storage.upsert(api)
    storage.assume_claim(dataclasses.replace(api, volume_name="pv1"))
    assert storage.claim("ns", "c") is not api
    generation = storage.generation
    storage.restore_claim("ns", "c")
    assert storage.claim("ns", "c") is api
    assert storage.generation == generation + 1
    storage.restore_claim("ns", "c")  # nothing assumed: no change
    assert storage.generation == generation + 1


def test_a_deleted_object_takes_its_assumption_with_it() -> None:
    storage = StorageObjects()
    api = make_pvc("c").build()
    storage.upsert(api)
    storage.assume_claim(dataclasses.replace(api, volume_name="pv1"))
    storage.remove("PersistentVolumeClaim", "default/c")
    assert storage.claim("default", "c") is None
    storage.upsert(api)
    assert storage.claim("default", "c") is api


@pytest.mark.parametrize(
    ("stored_version", "assumed_version", "problem"),
    [
        (None, "1", "PersistentVolume 'pv1' is not in the cache"),
        ("2", "1", "PersistentVolume 'pv1' is out of sync (stored: 2, assume: 1)"),
    ],
    ids=["missing", "stale-copy"],
)
def test_assuming_needs_the_stored_version(
    stored_version: str | None, assumed_version: str, problem: str
) -> None:
    storage = StorageObjects()
    if stored_version is not None:
        storage.upsert(make_pv("pv1").version(stored_version).build())
    with pytest.raises(AssumeConflictError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        storage.assume_volume(make_pv("pv1").version(assumed_version).build())


def test_every_change_moves_the_generation() -> None:
    storage = StorageObjects()
    seen = [storage.generation]
    for obj in (
        make_pv("p").build(),
        make_pvc("c").build(),
        make_class("s").build(),
        make_csi_node("n").build(),
        make_csi_driver("d").build(),
        make_capacity("cap", "s").build(),
        make_attachment("va", attacher="d", node="n", pv="p").build(),
    ):
        storage.upsert(obj)
        seen.append(storage.generation)
        assert storage.held(storage_kind(obj)) == {obj.key: obj}
        storage.remove(storage_kind(obj), obj.key)
        seen.append(storage.generation)
        assert storage.held(storage_kind(obj)) == {}
    assert seen == sorted(set(seen))


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="not a storage kind: 'Pod'"):
        StorageObjects().remove("Pod", "x")
    with pytest.raises(ValueError, match="not a storage kind: 'Pod'"):
        StorageObjects().held("Pod")
