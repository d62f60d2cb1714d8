"""`berth simulate` reads DRA objects from --objects and --existing, refuses bad ones naming the
file, object and field, and reads (and saves) them from a cluster."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from berth.cli.cluster_snapshot import read_snapshot, write_snapshot
from berth.cli.dra_input import load_dra
from berth.cli.input_files import InputError
from berth.cli.simulate_input import load_input
from berth.engine.dra.claims import ResourceClaimTemplate
from berth.kube.dra_kinds import DRA_INPUT_KINDS
from tests.builders import make_node, make_pod
from tests.unit.cli.simulate_support import simulate, write
from tests.unit.engine.dra.dra_builders import exactly, gpus, slice_dict
from tests.unit.kube.test_dra_watches import ONE_OF_EACH as WATCHED

RESOURCE = "resource.k8s.io/v1"
TEMPLATE: dict[str, Any] = {
    "metadata": {"name": "one-gpu", "namespace": "default"},
    "spec": {"spec": {"devices": {"requests": [exactly("gpu")]}}},
}
ONE_OF_EACH = {**WATCHED, "ResourceClaimTemplate": TEMPLATE}


def document(kind: str, raw: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": RESOURCE, "kind": kind, **raw}


def kinds_of(objects: list[Any]) -> list[str]:
    return sorted(type(obj).__name__ for obj in objects)


def test_objects_and_existing_both_carry_dra_objects(tmp_path: Path) -> None:
    kinds = sorted(ONE_OF_EACH)
    args = argparse.Namespace(
        nodes=write(tmp_path / "nodes.yaml", make_node("node-a").obj()),
        pods=write(tmp_path / "pods.yaml", make_pod("p").obj()),
        existing=write(
            tmp_path / "existing.yaml", *(document(k, ONE_OF_EACH[k]) for k in kinds[:2])
        ),
        objects=write(tmp_path / "objects.yaml", *(document(k, ONE_OF_EACH[k]) for k in kinds[2:])),
        profile=None,
    )
    assert kinds_of(load_input(args).dra) == kinds


@pytest.mark.parametrize(
    ("objects", "message"),
    [
        (
            [document("ResourceSlice", slice_dict("bad", gpus(1), count=0))],
            "{objects}: ResourceSlice bad: spec.pool.resourceSliceCount: must be at least 1",
        ),
        (
            [document("ResourceClaimTemplate", TEMPLATE)] * 2,
            "{objects}: ResourceClaimTemplate default/one-gpu: metadata.name: another "
            "ResourceClaimTemplate in {objects} has this name",
        ),
    ],
    ids=["malformed", "repeated"],
)
def test_bad_dra_input_is_refused_naming_file_object_and_field(
    tmp_path: Path, objects: list[dict[str, Any]], message: str
) -> None:
    nodes = write(tmp_path / "nodes.yaml", make_node("n1").obj())
    pods = write(tmp_path / "pods.yaml", make_pod("p").obj())
    path = write(tmp_path / "objects.yaml", *objects)
    outcome = simulate("--nodes", nodes, "--pods", pods, "--objects", path)
    assert outcome.code == 2
    assert outcome.err == f"berth simulate: {message.format(objects=path)}\n"


def test_the_same_name_in_two_kinds_is_no_repeat(tmp_path: Path) -> None:
    template = ResourceClaimTemplate.from_dict(TEMPLATE)
    assert load_dra([("a.yaml", template)]) == [template]
    with pytest.raises(InputError):
        load_dra([("a.yaml", template), ("b.yaml", template)])


class DraCluster:
    """An API server holding one object of each DRA kind (and a slice it cannot read)."""

    def __init__(self) -> None:
        self.items = {kind.list_path: [ONE_OF_EACH[kind.kind]] for kind in DRA_INPUT_KINDS}
        self.items["/apis/resource.k8s.io/v1/resourceslices"].append(
            slice_dict("bad", gpus(1), count=0)
        )

    async def list_json(self, path: str, **_: Any) -> tuple[list[Any], str]:
        return list(self.items.get(path, [])), "1"


async def test_a_cluster_snapshot_reads_and_saves_the_dra_objects(tmp_path: Path) -> None:
    snapshot = await read_snapshot(DraCluster())  # type: ignore[arg-type]
    assert kinds_of(snapshot.dra) == sorted(ONE_OF_EACH)
    assert any("ResourceSlice bad: spec.pool.resourceSliceCount" in w for w in snapshot.warnings)
    write_snapshot(tmp_path / "snap", snapshot)
    args = argparse.Namespace(
        nodes=write(tmp_path / "nodes.yaml", make_node("n1").obj()),
        pods=write(tmp_path / "pods.yaml", make_pod("p").obj()),
        existing=None,
        objects=tmp_path / "snap" / "objects.yaml",
        profile=None,
    )
    assert kinds_of(load_input(args).dra) == sorted(ONE_OF_EACH)
