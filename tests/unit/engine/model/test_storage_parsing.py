"""Storage objects parsed once: the fields the volume plugins read, bad input named by object and field."""

from __future__ import annotations

from typing import Any

import pytest

from berth.engine.errors import InvalidObjectError
from berth.engine.model.csi import CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment
from berth.engine.model.labels import LabelSelector
from berth.engine.model.pod import Pod
from berth.engine.model.pod_volumes import PodVolume
from berth.engine.model.storage import (
    AccessMode,
    ClaimRef,
    PersistentVolume,
    PersistentVolumeClaim,
    VolumeMode,
)
from berth.engine.model.storage_class import BindingMode, StorageClass
from berth.engine.model.volume_sources import (
    AWSElasticBlockStoreSource,
    CinderSource,
    CSISource,
    GCEPersistentDiskSource,
    ISCSISource,
    OtherSource,
    PortworxSource,
    RBDSource,
)
from tests.builders import make_pod
from tests.storage_builders import (
    make_attachment,
    make_capacity,
    make_class,
    make_csi_driver,
    make_csi_node,
    make_pv,
    make_pvc,
)

GI = 1024**3


def test_a_local_volume_keeps_what_binding_reads() -> None:
    pv = (
        make_pv("local-1")
        .capacity("10Gi")
        .access_modes("ReadWriteOnce", "ReadOnlyMany")
        .storage_class("local")
        .node_affinity("kubernetes.io/hostname", "n1")
        .claim_ref("ns", "data", uid="u1")
        .label("topology.kubernetes.io/zone", "a")
        .annotation("pv.kubernetes.io/bound-by-controller", "yes")
        .phase("Bound")
        .build()
    )
    assert pv.name == pv.key == "local-1"
    assert pv.capacity == 10 * GI
    assert pv.access_modes == (AccessMode.READ_WRITE_ONCE, AccessMode.READ_ONLY_MANY)
    assert pv.volume_mode is VolumeMode.FILESYSTEM
    assert pv.storage_class == "local"
    assert pv.claim_ref == ClaimRef("ns", "data", "u1")
    assert pv.phase == "Bound"
    assert pv.labels == {"topology.kubernetes.io/zone": "a"}
    assert pv.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert pv.resource_version == "1"
    assert pv.source == OtherSource("hostPath")
    assert pv.node_affinity_matches({"kubernetes.io/hostname": "n1"})
    assert not pv.node_affinity_matches({"kubernetes.io/hostname": "n2"})


def test_the_beta_annotation_decides_a_class_over_the_spec_field() -> None:
    pv = (
        make_pv("p")
        .storage_class("spec-class")
        .annotation("volume.beta.kubernetes.io/storage-class", "annotated")
        .build()
    )
    claim = (
        make_pvc("c")
        .storage_class("spec-class")
        .annotation("volume.beta.kubernetes.io/storage-class", "")
        .build()
    )
    assert (pv.storage_class_name, pv.storage_class) == ("spec-class", "annotated")
    assert (claim.storage_class_name, claim.storage_class) == ("spec-class", "")
    assert make_pvc("unset").build().storage_class_name is None


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ({"csi": {"driver": "d", "volumeHandle": "h"}}, CSISource("d", "h")),
        (
            {"gcePersistentDisk": {"pdName": "pd", "partition": 2, "readOnly": True}},
            GCEPersistentDiskSource("pd", 2, True),
        ),
        (
            {"awsElasticBlockStore": {"volumeID": "aws://a/vol-1"}},
            AWSElasticBlockStoreSource("aws://a/vol-1"),
        ),
        (
            {"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.x", "lun": 0}},
            ISCSISource("10.0.0.1:3260", "iqn.x", 0),
        ),
        (
            {"rbd": {"monitors": ["m1", "m2"], "image": "img"}},
            RBDSource(("m1", "m2"), "img", "rbd"),
        ),
        ({"cinder": {"volumeID": "c1", "fsType": "ext4"}}, CinderSource("c1", fs_type="ext4")),
        ({"portworxVolume": {"volumeID": "p1", "readOnly": True}}, PortworxSource("p1", True)),
        ({"local": {"path": "/mnt"}}, OtherSource("local")),
    ],
    ids=["csi", "gce-pd", "aws-ebs", "iscsi", "rbd-default-pool", "cinder", "portworx", "other"],
)
def test_a_volume_source_is_typed(source: dict[str, Any], expected: object) -> None:
    raw = make_pv("p").obj()
    del raw["spec"]["hostPath"]
    raw["spec"].update(source)
    assert PersistentVolume.from_dict(raw).source == expected


def test_a_claim_keeps_what_binding_reads() -> None:
    claim = (
        make_pvc("data", "ns")
        .request("5Gi")
        .access_modes("ReadWriteOncePod")
        .storage_class("fast")
        .block()
        .selector(tier="gold")
        .selected_node("n1")
        .volume_name("pv-1")
        .owned_by_pod("web-0", "pod-uid")
        .build()
    )
    assert (claim.namespace, claim.name, claim.key) == ("ns", "data", "ns/data")
    assert claim.requested == 5 * GI
    assert claim.access_modes == (AccessMode.READ_WRITE_ONCE_POD,)
    assert claim.volume_mode is VolumeMode.BLOCK
    assert claim.selector is not None and claim.selector.matches({"tier": "gold"})
    assert claim.selected_node == "n1"
    assert claim.volume_name == "pv-1"
    assert not claim.bind_completed  # no bind-completed annotation yet
    assert claim.metadata.controller_uid == "pod-uid"
    assert make_pvc("b").bound_to("pv").build().bind_completed
    assert make_pvc("gone").deleting().build().deleting


def test_a_claim_without_a_selector_takes_any_volume() -> None:
    assert make_pvc("c").build().selector is None
    assert make_pvc("c").set("spec.selector", {}).build().selector == LabelSelector()


def test_a_volume_is_bound_to_a_claim_by_name_and_uid_when_given() -> None:
    claim = make_pvc("c", "ns").uid("u1").build()
    assert make_pv("p").claim_ref("ns", "c").build().is_bound_to(claim)
    assert make_pv("p").claim_ref("ns", "c", "u1").build().is_bound_to(claim)
    assert not make_pv("p").claim_ref("ns", "c", "u2").build().is_bound_to(claim)
    assert not make_pv("p").claim_ref("other", "c").build().is_bound_to(claim)
    assert not make_pv("p").build().is_bound_to(claim)


def test_volume_node_affinity_judges_labels_only() -> None:
    # Upstream judges a PV's affinity against a node made of labels alone: matchFields pass.
    fields_only = make_pv("p").obj()
    fields_only["spec"]["nodeAffinity"] = {
        "required": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["x"]}]}
            ]
        }
    }
    assert PersistentVolume.from_dict(fields_only).node_affinity_matches({})
    empty_term = make_pv("p").set("spec.nodeAffinity", {"required": {"nodeSelectorTerms": [{}]}})
    assert not empty_term.build().node_affinity_matches({"a": "b"})
    bad_term = make_pv("p").node_affinity("k", operator="Gt")  # Gt needs one value
    assert not bad_term.build().node_affinity_matches({"k": "5"})
    assert make_pv("p").build().node_affinity_matches({})


def test_a_storage_class_defaults_like_the_api_server() -> None:
    raw = make_class("fast", "csi.example.com").obj()
    del raw["volumeBindingMode"]
    storage_class = StorageClass.from_dict(raw)
    assert storage_class.volume_binding_mode is BindingMode.IMMEDIATE
    assert storage_class.reclaim_policy == "Delete"
    assert storage_class.provisioner == "csi.example.com"
    assert storage_class.allows_topology({})
    assert make_class("w").wait_for_first_consumer().build().waits_for_first_consumer


def test_allowed_topologies_match_like_upstream() -> None:
    storage_class = (
        make_class("zonal")
        .allowed_topology("topology.kubernetes.io/zone", "a", "b")
        .allowed_topology("rack", "r1")
        .build()
    )
    assert storage_class.allows_topology({"topology.kubernetes.io/zone": "b"})
    assert storage_class.allows_topology({"rack": "r1"})
    assert not storage_class.allows_topology({"topology.kubernetes.io/zone": "c"})
    assert not storage_class.allows_topology({})
    # A term upstream cannot make a selector of (no values) matches nothing.
    empty_values = make_class("e").allowed_topology("zone").build()
    assert not empty_values.allows_topology({"zone": ""})


def test_csi_objects_keep_what_the_plugins_read() -> None:
    csi_node = (
        make_csi_node("n1")
        .driver("ebs.csi.aws.com", count=3, topology_keys=("zone",))
        .driver("nolimit.example.com")
        .annotation("storage.alpha.kubernetes.io/migrated-plugins", "kubernetes.io/aws-ebs")
        .build()
    )
    assert csi_node.volume_limits() == {"ebs.csi.aws.com": 3}
    driver = csi_node.driver("ebs.csi.aws.com")
    assert driver is not None and driver.topology_keys == ("zone",) and driver.node_id == "n1"
    assert csi_node.migrated_plugins == "kubernetes.io/aws-ebs"

    csi_driver = make_csi_driver("d").build()
    assert (csi_driver.attach_required, csi_driver.storage_capacity) == (True, False)
    assert make_csi_driver("d").storage_capacity().build().storage_capacity

    capacity = make_capacity("c1", "fast").topology(zone="a").capacity("100Gi").build()
    assert (capacity.key, capacity.storage_class_name) == ("kube-system/c1", "fast")
    assert capacity.reaches({"zone": "a"}) and not capacity.reaches({"zone": "b"})
    assert capacity.fits(100 * GI) and not capacity.fits(100 * GI + 1)
    limited = make_capacity("c2", "fast").capacity("100Gi").maximum_volume_size("10Gi").build()
    assert limited.volume_limit == 10 * GI
    assert not limited.reaches({})  # no nodeTopology: no node reaches it
    assert not make_capacity("c3", "fast").build().fits(0)  # neither size set

    attachment = make_attachment("va", attacher="d", node="n1", pv="pv1").build()
    assert (attachment.attacher, attachment.node_name) == ("d", "n1")
    assert attachment.persistent_volume_name == "pv1" and attachment.attached
    assert (
        make_attachment("va", attacher="d", node="n1", pv=None).build().persistent_volume_name
        is None
    )


def test_a_pod_lists_its_volumes_claims_and_in_line_sources() -> None:
    pod = (
        make_pod("web-0")
        .pvc("data")
        .ephemeral("scratch")
        .volume("disk", "gcePersistentDisk", pdName="pd1", readOnly=True)
        .volume("config", "configMap", defaultMode=420)
        .build()
    )
    assert pod.claim_names == ("data", "web-0-scratch")
    data, scratch, disk, config = pod.volumes
    assert data == PodVolume("data", claim_name="data")
    assert disk == PodVolume("disk", source=GCEPersistentDiskSource("pd1", read_only=True))
    assert config == PodVolume("config", source=OtherSource("configMap"))
    assert (scratch.name, scratch.claim_name, scratch.ephemeral) == (
        "scratch",
        "web-0-scratch",
        True,
    )
    assert not data.ephemeral


def test_an_ephemeral_volume_keeps_the_claim_its_controller_creates() -> None:
    pod = make_pod("web-0", "ns").uid("pod-uid").ephemeral("scratch", "fast", "2Gi").build()
    (volume,) = pod.volumes
    assert volume.claim_template is not None
    claim = volume.claim_template.from_template(name=volume.claim_name, controller_uid=pod.uid)
    assert (claim.key, claim.metadata.controller_uid) == ("ns/web-0-scratch", "pod-uid")
    assert (claim.storage_class, claim.requested) == ("fast", 2 * GI)
    assert claim.access_modes == (AccessMode.READ_WRITE_ONCE,)
    assert claim.phase == "Pending"


@pytest.mark.parametrize(
    ("parse", "raw", "message"),
    [
        (
            PersistentVolume.from_dict,
            make_pv("p").set("spec.capacity", {"storage": "lots"}).obj(),
            "PersistentVolume p: spec.capacity.storage: invalid quantity 'lots'",
        ),
        (
            PersistentVolume.from_dict,
            make_pv("p").access_modes("ReadWriteSometimes").obj(),
            "PersistentVolume p: spec.accessModes[0]: unknown value 'ReadWriteSometimes' "
            "(expected one of ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ReadWriteOncePod)",
        ),
        (
            PersistentVolume.from_dict,
            make_pv("p").set("spec.claimRef", "ns/c").obj(),
            "PersistentVolume p: spec.claimRef: expected an object, got str",
        ),
        (
            PersistentVolume.from_dict,
            make_pv("p").source("csi", driver=7).obj(),
            "PersistentVolume p: spec.csi.driver: expected a string, got 7",
        ),
        (
            PersistentVolume.from_dict,
            {"metadata": {}},
            "PersistentVolume <unnamed>: metadata.name: must be set",
        ),
        (
            PersistentVolume.from_dict,
            ["not", "an", "object"],
            "PersistentVolume <unnamed>: (object): expected an object, got list",
        ),
        (
            PersistentVolumeClaim.from_dict,
            make_pvc("c", "ns").request("-1Gi").obj(),
            "PersistentVolumeClaim ns/c: spec.resources.requests.storage: "
            "quantity '-1Gi' must not be negative",
        ),
        (
            PersistentVolumeClaim.from_dict,
            make_pvc("c").set("spec.volumeMode", "Raw").obj(),
            "PersistentVolumeClaim default/c: spec.volumeMode: unknown value 'Raw' "
            "(expected one of Filesystem, Block)",
        ),
        (
            PersistentVolumeClaim.from_dict,
            make_pvc("c").set("spec.selector", {"matchExpressions": [{"key": "k"}]}).obj(),
            "PersistentVolumeClaim default/c: spec.selector.matchExpressions[0].operator: "
            "unsupported operator None",
        ),
        (
            StorageClass.from_dict,
            make_class("s").set("volumeBindingMode", "Later").obj(),
            "StorageClass s: volumeBindingMode: unknown value 'Later' "
            "(expected one of Immediate, WaitForFirstConsumer)",
        ),
        (
            StorageClass.from_dict,
            make_class("s").set("allowedTopologies", [{"matchLabelExpressions": [{}]}]).obj(),
            "StorageClass s: allowedTopologies[0].matchLabelExpressions[0].key: must be set",
        ),
        (
            CSINode.from_dict,
            make_csi_node("n")
            .set("spec.drivers", [{"name": "d", "allocatable": {"count": "3"}}])
            .obj(),
            "CSINode n: spec.drivers[0].allocatable.count: expected an integer, got '3'",
        ),
        (
            CSIDriver.from_dict,
            make_csi_driver("d").set("spec.storageCapacity", "yes").obj(),
            "CSIDriver d: spec.storageCapacity: expected true or false, got 'yes'",
        ),
        (
            CSIStorageCapacity.from_dict,
            make_capacity("c", "fast").capacity("big").obj(),
            "CSIStorageCapacity kube-system/c: capacity: invalid quantity 'big'",
        ),
        (
            VolumeAttachment.from_dict,
            make_attachment("va", attacher="d", node="n", pv=None).set("spec.source", []).obj(),
            "VolumeAttachment va: spec.source: expected an object, got list",
        ),
        (
            Pod.from_dict,
            make_pod("p").set("spec.volumes", [{"name": "v", "persistentVolumeClaim": {}}]).obj(),
            "Pod default/p: spec.volumes[0].persistentVolumeClaim.claimName: must be set",
        ),
        (
            Pod.from_dict,
            make_pod("p").ephemeral("v", storage="huge").obj(),
            "Pod default/p: spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources."
            "requests.storage: invalid quantity 'huge'",
        ),
    ],
    ids=[
        "pv-capacity",
        "pv-access-mode",
        "pv-claim-ref",
        "pv-csi-driver",
        "pv-unnamed",
        "pv-not-an-object",
        "pvc-negative-request",
        "pvc-volume-mode",
        "pvc-selector",
        "class-binding-mode",
        "class-topology-key",
        "csinode-count",
        "csidriver-capacity-flag",
        "capacity-quantity",
        "attachment-source",
        "pod-claim-name",
        "pod-ephemeral-template",
    ],
)
def test_a_malformed_object_is_named_with_its_field(parse: Any, raw: Any, message: str) -> None:
    with pytest.raises(InvalidObjectError) as raised:
        parse(raw)
    assert str(raised.value) == message
