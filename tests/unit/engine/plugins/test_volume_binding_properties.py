"""The vectorised VolumeBinding agrees with the node-by-node reference on random clusters:
the same verdict and reasons on every node, and the same score on the nodes that pass."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.status import Code
from berth.engine.model.pod import Pod
from berth.engine.plugins.volume_binding import new_plugin
from tests.builders import make_pod
from tests.storage_builders import (
    make_capacity,
    make_class,
    make_csi_driver,
    make_csi_node,
    make_pv,
    make_pvc,
)
from tests.unit.engine.plugins.node_plugin_support import all_slots, names_of
from tests.unit.engine.plugins.volume_binding_support import (
    DRIVER,
    HOSTNAME,
    ZONE,
    cluster_with,
    zoned_node,
)
from tests.unit.engine.reference import volume_binding as reference

ZONES = ("a", "b", "c")
SIZES = ("1Gi", "2Gi", "3Gi", "5Gi", "8Gi")
MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany")
CLASSES = ("local", "zonal", "plain", "imm")
CLAIM_CLASSES = ("local", "local", "local", "zonal", "zonal", "plain", "imm")
CLAIMS = ("c0", "c1", "c2")
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
CSI_ZONE_KEYS = (
    "topology.gke.io/zone",
    "topology.ebs.csi.aws.com/zone",
    "topology.cinder.csi.openstack.org/zone",
)
PLUGINS = tuple(
    f"kubernetes.io/{name}"
    for name in ("gce-pd", "aws-ebs", "azure-disk", "azure-file", "cinder", "portworx-volume")
)
# In-tree sources, some of which the translator refuses (bad EBS ID, unmanaged Azure disk).
IN_TREE = (
    ("gcePersistentDisk", {"pdName": "pd"}),
    ("awsElasticBlockStore", {"volumeID": "vol-1"}),
    ("awsElasticBlockStore", {"volumeID": "aws://a/disk-1"}),
    ("cinder", {"volumeID": "v"}),
    ("azureDisk", {"diskName": "d", "diskURI": "u"}),
    ("azureDisk", {"diskName": "d", "diskURI": "u", "kind": "Shared"}),
    ("portworxVolume", {"volumeID": "v"}),
    ("azureFile", {"secretName": "s", "shareName": "share"}),
)


def _classes(draw: st.DrawFn) -> list[Any]:
    zonal = make_class("zonal", DRIVER).wait_for_first_consumer()
    for zones in draw(st.lists(st.sets(st.sampled_from(ZONES), min_size=1), max_size=2)):
        zonal.allowed_topology(ZONE, *sorted(zones))
    return [
        make_class("local").wait_for_first_consumer(),
        zonal,
        make_class("plain", draw(st.sampled_from(("", DRIVER)))).wait_for_first_consumer(),
        make_class("imm", DRIVER),
    ]


@st.composite
def storage_clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[Any], dict[str, Any]]:
    nodes = []
    objects: list[Any] = _classes(draw)
    for index in range(draw(st.integers(1, 6))):
        zone = draw(st.sampled_from(ZONES))
        node = zoned_node(f"n{index}", zone)
        for key in CSI_ZONE_KEYS:
            if draw(st.booleans()):
                node["metadata"]["labels"][key] = zone
        nodes.append(node)
        if draw(st.booleans()):
            migrated = draw(st.lists(st.sampled_from(PLUGINS), max_size=3, unique=True))
            objects.append(
                make_csi_node(f"n{index}").annotation(MIGRATED_PLUGINS, ",".join(migrated))
            )
    objects.append(make_csi_driver(DRIVER).storage_capacity(draw(st.booleans())))
    for index in range(draw(st.integers(0, 3))):
        capacity = make_capacity(f"cap{index}", draw(st.sampled_from(("zonal", "plain"))))
        capacity.topology(**{ZONE: draw(st.sampled_from(ZONES))})
        if draw(st.booleans()):
            capacity.capacity(draw(st.sampled_from(SIZES)))
        if draw(st.booleans()):
            capacity.maximum_volume_size(draw(st.sampled_from(SIZES)))
        objects.append(capacity)
    claims = draw(st.lists(st.sampled_from(CLAIMS), min_size=1, max_size=2, unique=True))
    for name in claims:
        claim = make_pvc(name).request(draw(st.sampled_from(SIZES)))
        claim.storage_class(draw(st.sampled_from(CLAIM_CLASSES)))
        claim.access_modes(*draw(st.sets(st.sampled_from(MODES), min_size=1, max_size=2)))
        state = draw(st.sampled_from(("unbound",) * 6 + ("selected", "bound")))
        if state == "selected":
            claim.selected_node(f"n{draw(st.integers(0, 6))}")
        if state == "bound":
            claim.bound_to(draw(st.sampled_from(("pv0", "pv1", "gone"))))
        if draw(st.integers(0, 4)) == 0:
            claim.selector(tier=draw(st.sampled_from(("gold", "iron"))))
        objects.append(claim)
    for index in range(draw(st.integers(0, 8))):
        volume = make_pv(f"pv{index}").capacity(draw(st.sampled_from(SIZES)))
        volume.storage_class(draw(st.sampled_from(CLAIM_CLASSES)))
        volume.access_modes(*draw(st.sets(st.sampled_from(MODES), min_size=2, max_size=3)))
        volume.labels(tier=draw(st.sampled_from(("gold", "iron"))))
        reach = draw(st.sampled_from(("anywhere", "zone", "host", "zones-or-host")))
        if reach in ("zone", "zones-or-host"):
            volume.node_affinity(ZONE, *sorted(draw(st.sets(st.sampled_from(ZONES), min_size=1))))
        if reach in ("host", "zones-or-host"):
            volume.node_affinity(HOSTNAME, f"n{draw(st.integers(0, 5))}")
        if draw(st.integers(0, 3)) == 0:
            volume.claim_ref("default", draw(st.sampled_from(CLAIMS)))
        volume.phase(draw(st.sampled_from(("Available", "Available", "Available", "Released"))))
        if draw(st.booleans()):
            kind, fields = draw(st.sampled_from(IN_TREE))
            volume.source(kind).set(f"spec.{kind}", fields)
            if draw(st.booleans()):
                zones = draw(st.lists(st.sampled_from(ZONES), min_size=1, max_size=2))
                volume.label(draw(st.sampled_from((ZONE, BETA_ZONE))), "__".join(zones))
        if draw(st.integers(0, 6)) == 0:
            volume.block()
        objects.append(volume)
    pod = make_pod("p")
    for name in claims:
        pod.pvc(name)
    return nodes, objects, pod.obj()


def _reference_storage(objects: list[Any]) -> reference.Storage:
    raws = [item.obj() for item in objects]
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for raw in raws:
        by_kind.setdefault(raw["kind"], []).append(raw)
    return reference.Storage(
        claims={raw["metadata"]["name"]: raw for raw in by_kind.get("PersistentVolumeClaim", [])},
        volumes=by_kind.get("PersistentVolume", []),
        classes={raw["metadata"]["name"]: raw for raw in by_kind.get("StorageClass", [])},
        drivers={raw["metadata"]["name"]: raw for raw in by_kind.get("CSIDriver", [])},
        capacities=by_kind.get("CSIStorageCapacity", []),
        csi_nodes={raw["metadata"]["name"]: raw for raw in by_kind.get("CSINode", [])},
    )


@settings(max_examples=300, deadline=None)
@given(storage_clusters())
def test_matches_reference(case: tuple[list[dict[str, Any]], list[Any], dict[str, Any]]) -> None:
    nodes, objects, raw_pod = case
    cluster = cluster_with(nodes, objects)
    state = CycleState(cluster)
    plugin = new_plugin(None)
    pod = Pod.from_dict(raw_pod)
    storage = _reference_storage(objects)
    expected = reference.classify(raw_pod, storage)
    pre_filter = plugin.pre_filter(state, pod).status
    if isinstance(expected, str):
        assert pre_filter.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert pre_filter.reasons == (expected,)
        return
    assert pre_filter.is_success
    bound, delayed = expected
    slots = all_slots(state)
    verdicts = plugin.filter(state, pod, slots)
    by_name = {raw["metadata"]["name"]: raw for raw in nodes}
    passing = []
    for index, name in enumerate(names_of(state, slots)):
        outcome = reference.find_pod_volumes(bound, delayed, storage, by_name[name])
        code = Code(int(verdicts.codes[index]))
        if outcome.error is not None:
            assert (code, verdicts.reasons_at(index)) == (Code.ERROR, (outcome.error,))
        elif outcome.reasons:
            assert code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE, name
            assert list(verdicts.reasons_at(index)) == outcome.reasons, name
        else:
            assert code is Code.SUCCESS, (name, verdicts.reasons_at(index))
            passing.append((index, outcome))
    assert plugin.pre_score(state, pod, slots).is_success
    scores = plugin.score(state, pod, slots).tolist()
    shape = [(0, 10), (100, 0)]
    for index, outcome in passing:
        assert scores[index] == reference.score(outcome, shape)
