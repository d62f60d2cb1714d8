"""`berth simulate` reads storage objects from --existing and --objects, checks them, and completes
them as the API server and the PV controller would; StatefulSets bring the claims their controller
creates."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from berth.cli.cluster_snapshot import read_snapshot, write_snapshot
from berth.cli.simulate_input import SimulationInput, load_input
from berth.engine.cluster.storage import storage_kind
from berth.engine.model.storage import PersistentVolume, PersistentVolumeClaim
from berth.engine.model.storage_class import StorageClass
from berth.kube.storage_kinds import STORAGE_KINDS
from tests.builders import make_node, make_pod
from tests.storage_builders import make_class, make_csi_node, make_pv, make_pvc
from tests.unit.cli.simulate_support import berth, simulate, write
from tests.unit.cli.test_workload_expansion import workload
from tests.unit.kube.test_storage_watches import ONE_OF_EACH


def _unwritten_status(raw: dict[str, Any]) -> dict[str, Any]:
    """As a user writes it: no status."""
    raw.pop("status", None)
    return raw


def _load(
    tmp_path: Path,
    *,
    existing: tuple[dict[str, Any], ...] = (),
    objects: tuple[dict[str, Any], ...] | list[dict[str, Any]] = (),
    pods: list[dict[str, Any]] | None = None,
) -> SimulationInput:
    args = argparse.Namespace(
        nodes=write(tmp_path / "nodes.yaml", make_node("n1").obj()),
        pods=write(tmp_path / "pods.yaml", *(pods or [make_pod("p").obj()])),
        existing=write(tmp_path / "existing.yaml", *existing) if existing else None,
        objects=write(tmp_path / "objects.yaml", *objects) if objects else None,
        profile=None,
    )
    return load_input(args)


def _by_key(inputs: SimulationInput) -> dict[tuple[str, str], Any]:
    return {(type(obj).__name__, obj.key): obj for obj in inputs.storage}


def test_storage_objects_come_from_existing_and_objects(tmp_path: Path) -> None:
    inputs = _load(
        tmp_path,
        existing=(make_pod("bound").node("n1").obj(), make_pv("pv1").obj()),
        objects=(make_class("fast").obj(), make_csi_node("n1").driver("d", count=2).obj()),
    )
    assert sorted(_by_key(inputs)) == [
        ("CSINode", "n1"),
        ("PersistentVolume", "pv1"),
        ("StorageClass", "fast"),
    ]
    assert [pod.name for pod in inputs.existing] == ["bound"]


def test_written_objects_are_completed_as_the_cluster_would(tmp_path: Path) -> None:
    default = make_class("standard").annotation(
        "storageclass.kubernetes.io/is-default-class", "true"
    )
    inputs = _load(
        tmp_path,
        objects=[
            default.obj(),
            _unwritten_status(make_pv("free").obj()),
            _unwritten_status(make_pv("taken").claim_ref("default", "prebound").obj()),
            _unwritten_status(make_pvc("prebound").storage_class("").obj()),
            _unwritten_status(make_pvc("classless").obj()),
            _unwritten_status(make_pvc("named").storage_class("fast").volume_name("free").obj()),
        ],
    )
    found = _by_key(inputs)
    free: PersistentVolume = found[("PersistentVolume", "free")]
    taken: PersistentVolume = found[("PersistentVolume", "taken")]
    assert (free.phase, taken.phase) == ("Available", "Bound")
    prebound: PersistentVolumeClaim = found[("PersistentVolumeClaim", "default/prebound")]
    assert (prebound.volume_name, prebound.phase, prebound.bind_completed) == (
        "taken",
        "Bound",
        True,
    )
    assert prebound.storage_class == ""  # an explicit "" asks for no class
    classless: PersistentVolumeClaim = found[("PersistentVolumeClaim", "default/classless")]
    assert (classless.storage_class, classless.phase) == ("standard", "Pending")
    named: PersistentVolumeClaim = found[("PersistentVolumeClaim", "default/named")]
    assert (named.volume_name, named.phase, named.bind_completed) == ("free", "Bound", True)
    assert isinstance(found[("StorageClass", "standard")], StorageClass)


def test_a_stateful_set_brings_its_claims(tmp_path: Path) -> None:
    template = {
        "metadata": {"name": "data", "labels": {"tier": "db"}},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "fast",
            "resources": {"requests": {"storage": "5Gi"}},
        },
    }
    given = make_pvc("data-db-1", "shop").storage_class("slow").obj()
    inputs = _load(
        tmp_path,
        pods=[workload("StatefulSet", "db", replicas=2, volumeClaimTemplates=[template])],
        objects=[given],
    )
    claims = {obj.key: obj for obj in inputs.storage if isinstance(obj, PersistentVolumeClaim)}
    assert sorted(claims) == ["shop/data-db-0", "shop/data-db-1"]
    made = claims["shop/data-db-0"]
    assert (made.storage_class, made.requested, made.phase) == ("fast", 5 * 1024**3, "Pending")
    assert made.metadata.labels == {"tier": "db", "app": "db"}
    assert claims["shop/data-db-1"].storage_class == "slow"  # the given claim is kept
    assert [v.claim_name for pod in inputs.pods for v in pod.volumes] == [
        "data-db-0",
        "data-db-1",
    ]


@pytest.mark.parametrize(
    ("objects", "message"),
    [
        (
            [make_pv("p").capacity("lots").obj()],
            "{objects}: PersistentVolume p: spec.capacity.storage: invalid quantity 'lots'",
        ),
        (
            [make_pvc("c").obj(), make_pvc("c").obj()],
            "{objects}: PersistentVolumeClaim default/c: metadata.name: another "
            "PersistentVolumeClaim in {objects} has this name",
        ),
        (
            [make_node("n9").obj()],
            "{objects}: object 1: expected kind PersistentVolumeClaim, PersistentVolume, "
            "StorageClass, CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment, DeviceClass, "
            "ResourceClaim, ResourceSlice, DeviceTaintRule or ResourceClaimTemplate, got 'Node'",
        ),
    ],
    ids=["malformed", "repeated", "wrong-kind"],
)
def test_bad_storage_input_exits_2_naming_file_object_and_field(
    tmp_path: Path, objects: list[dict[str, Any]], message: str
) -> None:
    nodes = write(tmp_path / "nodes.yaml", make_node("n1").obj())
    pods = write(tmp_path / "pods.yaml", make_pod("p").obj())
    path = write(tmp_path / "objects.yaml", *objects)
    outcome = simulate("--nodes", nodes, "--pods", pods, "--objects", path)
    assert outcome.code == 2
    assert outcome.err == f"berth simulate: {message.format(objects=path)}\n"


def test_objects_cannot_be_combined_with_from_cluster(tmp_path: Path) -> None:
    pods = write(tmp_path / "pods.yaml", make_pod("p").obj())
    path = write(tmp_path / "objects.yaml", make_pv("p").obj())
    outcome = simulate("--from-cluster", "--pods", pods, "--objects", path)
    assert outcome.code == 2
    assert outcome.err == (
        "berth simulate: --objects: cannot be combined with --from-cluster (storage and DRA "
        "objects come from the cluster)\n"
    )


class StorageCluster:
    """An API server holding one object of each storage kind (and a PV it cannot read)."""

    def __init__(self) -> None:
        self.items = {kind.list_path: [ONE_OF_EACH[kind.kind]] for kind in STORAGE_KINDS}
        self.items["/api/v1/persistentvolumes"].append(make_pv("bad").capacity("lots").obj())

    async def list_json(self, path: str, **_: Any) -> tuple[list[Any], str]:
        # As the API lists them: items carry neither apiVersion nor kind.
        listed = [
            {k: v for k, v in raw.items() if k not in ("apiVersion", "kind")}
            for raw in self.items.get(path, [])
        ]
        return listed, "1"


async def test_a_cluster_snapshot_reads_and_saves_the_storage_objects(tmp_path: Path) -> None:
    snapshot = await read_snapshot(StorageCluster())  # type: ignore[arg-type]
    kinds = sorted(storage_kind(obj) for obj in snapshot.storage)
    assert kinds == sorted(ONE_OF_EACH)
    assert any("PersistentVolume bad: spec.capacity.storage" in w for w in snapshot.warnings)
    write_snapshot(tmp_path / "snap", snapshot)
    args = argparse.Namespace(
        nodes=write(tmp_path / "nodes.yaml", make_node("n1").obj()),
        pods=write(tmp_path / "pods.yaml", make_pod("p").obj()),
        existing=None,
        objects=tmp_path / "snap" / "objects.yaml",
        profile=None,
    )
    inputs = load_input(args)
    assert sorted(storage_kind(obj) for obj in inputs.storage) == kinds


@pytest.mark.parametrize("command", ["explain", "capacity"])
def test_explain_and_capacity_read_objects_too(tmp_path: Path, command: str) -> None:
    nodes = write(tmp_path / "nodes.yaml", make_node("n1").obj())
    pod = write(tmp_path / "pod.yaml", make_pod("p").obj())
    path = write(tmp_path / "objects.yaml", make_pv("p").capacity("lots").obj())
    outcome = berth(command, "--pod", pod, "--nodes", nodes, "--objects", path)
    assert outcome.code == 2
    assert outcome.err == (
        f"berth {command}: {path}: PersistentVolume p: spec.capacity.storage: "
        "invalid quantity 'lots'\n"
    )
