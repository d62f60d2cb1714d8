"""VolumeBinding judges a bound in-tree PV in its CSI form where the node migrated its plugin.

Four nodes in zone us-east1-a (region us-east1) tell the cases apart:
- "migrated": its CSINode lists every in-tree plugin as migrated, and it carries the CSI
  drivers' zone keys as well as Kubernetes' own zone and region labels;
- "bare": its CSINode lists every plugin too, but it has only Kubernetes' labels;
- "plain": no CSINode, so nothing is translated for it;
- "cinder-only": its CSINode lists only Cinder.
Each case gives a PV bound to the pod's claim and the verdict per node.
"""

from __future__ import annotations

from typing import Any

import pytest

from berth.engine.framework.status import Code
from berth.engine.model.pod import Pod
from berth.engine.plugins.volume_binding import new_plugin
from tests.builders import make_node, make_pod
from tests.storage_builders import make_class, make_csi_node, make_pv, make_pvc
from tests.unit.engine.plugins.node_plugin_support import PASS, Judgement, judge
from tests.unit.engine.plugins.volume_binding_support import HOSTNAME, ZONE, cycle_with

REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
CSI_ZONE_KEYS = (
    "topology.gke.io/zone",
    "topology.ebs.csi.aws.com/zone",
    "topology.cinder.csi.openstack.org/zone",
)
ALL_PLUGINS = ",".join(
    f"kubernetes.io/{name}"
    for name in (
        "gce-pd",
        "aws-ebs",
        "azure-disk",
        "azure-file",
        "cinder",
        "portworx-volume",
        "vsphere-volume",
    )
)
NODE_CONFLICT = (
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    ("node(s) didn't match PersistentVolume's node affinity",),
)


def _node(name: str, *, csi_keys: bool) -> dict[str, Any]:
    builder = make_node(name).label(HOSTNAME, name).label(ZONE, "us-east1-a")
    builder.label(REGION, "us-east1")
    for key in CSI_ZONE_KEYS if csi_keys else ():
        builder.label(key, "us-east1-a")
    return builder.obj()


NODES = [
    _node("migrated", csi_keys=True),
    _node("bare", csi_keys=False),
    _node("plain", csi_keys=False),
    _node("cinder-only", csi_keys=False),
]
CSI_NODES = [
    make_csi_node("migrated").annotation(MIGRATED_PLUGINS, ALL_PLUGINS),
    make_csi_node("bare").annotation(MIGRATED_PLUGINS, ALL_PLUGINS),
    make_csi_node("cinder-only").annotation(MIGRATED_PLUGINS, "kubernetes.io/cinder"),
]


def _error(message: str) -> Judgement:
    return (Code.ERROR, (message,))


def _refused(message: str) -> dict[str, Judgement]:
    """The translator's error on the nodes that translate; the others judge the PV as is."""
    return _verdicts(_error(message), _error(message), PASS, PASS)


def _verdicts(
    migrated: Judgement, bare: Judgement, plain: Judgement, cinder_only: Judgement
) -> dict[str, Judgement]:
    return {"migrated": migrated, "bare": bare, "plain": plain, "cinder-only": cinder_only}


def _zone_label(zones: str) -> Any:
    return make_pv("disk").source("gcePersistentDisk", pdName="disk").label(ZONE, zones)


CASES: list[tuple[str, Any, dict[str, Judgement]]] = [
    (
        "gce-pd-zone-affinity-moves-to-the-gke-key",
        make_pv("disk")
        .source("gcePersistentDisk", pdName="disk")
        .node_affinity(ZONE, "us-east1-a"),
        _verdicts(PASS, NODE_CONFLICT, PASS, PASS),
    ),
    (
        "gce-pd-zone-label-becomes-affinity",
        _zone_label("us-east1-a"),
        _verdicts(PASS, NODE_CONFLICT, PASS, PASS),
    ),
    (
        "gce-pd-regional-label-lists-both-zones",
        _zone_label("us-east1-b__us-east1-a"),
        _verdicts(PASS, NODE_CONFLICT, PASS, PASS),
    ),
    (
        "gce-pd-zone-label-of-another-zone",
        _zone_label("us-east1-b"),
        _verdicts(NODE_CONFLICT, NODE_CONFLICT, PASS, PASS),
    ),
    (
        "gce-pd-affinity-values-win-over-the-label",
        _zone_label("us-east1-b").node_affinity(ZONE, "us-east1-a"),
        _verdicts(PASS, NODE_CONFLICT, PASS, PASS),
    ),
    (
        "gce-pd-empty-zone-label-changes-nothing",
        _zone_label(""),
        _verdicts(PASS, PASS, PASS, PASS),
    ),
    (
        "gce-pd-regional-disk-over-two-regions",
        _zone_label("us-east1-a__us-west1-b"),
        _refused(
            "could not translate pv: failed to get region from zones: multiple or no "
            "regions gotten from zones, got: map[us-east1:{} us-west1:{}]"
        ),
    ),
    (
        "gce-pd-zone-in-unexpected-format",
        _zone_label("east__us-east1-a").node_affinity(ZONE, "us-east1-a"),
        _refused(
            "could not translate pv: failed to get region from zones: zone in unexpected "
            "format, expected: {locale}-{region}-{zone}, got: east"
        ),
    ),
    (
        "aws-ebs-beta-zone-and-region-affinity",
        make_pv("disk")
        .source("awsElasticBlockStore", volumeID="aws://us-east1-a/vol-1")
        .set(
            "spec.nodeAffinity",
            {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": BETA_ZONE, "operator": "In", "values": ["us-east1-a"]},
                                {"key": BETA_REGION, "operator": "In", "values": ["us-east1"]},
                            ]
                        }
                    ]
                }
            },
        ),
        # The beta keys are on no node: only the translated affinity (the EBS zone key and
        # the GA region key) is met, and only where the node has the EBS key.
        _verdicts(PASS, NODE_CONFLICT, NODE_CONFLICT, NODE_CONFLICT),
    ),
    (
        "aws-ebs-beta-zone-label-joins-every-term",
        make_pv("disk")
        .source("awsElasticBlockStore", volumeID="vol-1")
        .label(BETA_ZONE, "us-east1-a")
        .node_affinity(HOSTNAME, "migrated", "bare", "plain", "cinder-only")
        .node_affinity(REGION, "us-east1"),
        _verdicts(PASS, NODE_CONFLICT, PASS, PASS),
    ),
    (
        "aws-ebs-bad-volume-id",
        make_pv("disk").source("awsElasticBlockStore", volumeID="aws://us-east1-a/disk-1"),
        _refused(
            "could not translate pv: failed to translate Kubernetes ID to EBS Volume ID "
            "Invalid format for AWS volume (aws://us-east1-a/disk-1)"
        ),
    ),
    (
        "cinder-zone-label-only-where-cinder-is-migrated",
        make_pv("disk").source("cinder", volumeID="v1").label(ZONE, "us-east1-a"),
        _verdicts(PASS, NODE_CONFLICT, PASS, NODE_CONFLICT),
    ),
    (
        "azure-disk-keeps-its-affinity",
        make_pv("disk")
        .source("azureDisk", diskName="d", diskURI="/subscriptions/s/disks/d")
        .node_affinity(ZONE, "us-east1-a"),
        _verdicts(PASS, PASS, PASS, PASS),
    ),
    (
        "azure-disk-of-an-unmanaged-kind",
        make_pv("disk")
        .source("azureDisk", diskName="d", diskURI="u")
        .set("spec.azureDisk.kind", "Dedicated"),
        _refused("could not translate pv: kind(Dedicated) is not supported in csi migration"),
    ),
    (
        "portworx-keeps-its-affinity",
        make_pv("disk").source("portworxVolume", volumeID="v1").node_affinity(ZONE, "us-east1-b"),
        _verdicts(NODE_CONFLICT, NODE_CONFLICT, NODE_CONFLICT, NODE_CONFLICT),
    ),
    (
        "azure-file-is-never-translated",
        make_pv("disk")
        .source("azureFile", secretName="s", shareName="share")
        .label(ZONE, "us-east1-a"),
        _verdicts(PASS, PASS, PASS, PASS),
    ),
    (
        "vsphere-is-never-translated",
        make_pv("disk")
        .source("vsphereVolume", volumePath="[ds] disk.vmdk")
        .node_affinity(ZONE, "us-east1-a"),
        _verdicts(PASS, PASS, PASS, PASS),
    ),
]


def _pod() -> Pod:
    return make_pod("p").pvc("data").build()


@pytest.mark.parametrize(
    ("volume", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_bound_in_tree_volume(volume: Any, expected: dict[str, Judgement]) -> None:
    objects = [*CSI_NODES, volume.claim_ref("default", "data"), make_pvc("data").bound_to("disk")]
    assert judge(new_plugin(None), _pod(), cycle_with(NODES, objects)) == expected


def test_an_error_stops_the_node_before_its_unbound_claims() -> None:
    """A translator error is the node's only verdict: the unbound claim (no volume, no
    provisioner) adds nothing there, and fails the other nodes."""
    objects = [
        *CSI_NODES,
        make_pv("disk")
        .source("azureDisk", diskName="d", diskURI="u")
        .set("spec.azureDisk.kind", "Shared")
        .claim_ref("default", "data"),
        make_pvc("data").bound_to("disk"),
        make_class("local").wait_for_first_consumer(),
        make_pvc("more").storage_class("local"),
    ]
    pod = make_pod("p").pvc("data").pvc("more").build()
    verdicts = judge(new_plugin(None), pod, cycle_with(NODES, objects))
    shared = _error("could not translate pv: kind(Shared) is not supported in csi migration")
    no_volume = (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("node(s) didn't find available persistent volumes to bind",),
    )
    assert verdicts == _verdicts(shared, shared, no_volume, no_volume)
