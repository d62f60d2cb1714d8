"""VolumeBinding Reserve, Unreserve, PreBindPreFlight and PreBind, through a fake volume writer.

The fake stands for the API server; each test's `on_pause` stands for the PV controller
(or the provisioner), changing the watched objects between PreBind's looks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from berth.engine.cluster import ClusterState
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.handle import FrameworkServices
from berth.engine.framework.status import Code
from berth.engine.model.pod import Pod
from berth.engine.plugins.volume_binding import VolumeBinding, new_plugin
from tests.builders import make_pod
from tests.fakes import FakeVolumeWriter
from tests.storage_builders import make_class, make_csi_node, make_pv, make_pvc
from tests.unit.engine.fakes import framework_with
from tests.unit.engine.plugins.node_plugin_support import all_slots
from tests.unit.engine.plugins.volume_binding_support import DRIVER, ZONE, cluster_with, zoned_node

NODES = [zoned_node("a1", "a"), zoned_node("b1", "b")]
SELECTED = "volume.kubernetes.io/selected-node"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"


def _plugin(writer: FakeVolumeWriter, args: dict[str, Any] | None = None) -> VolumeBinding:
    framework = framework_with()
    framework.serve(FrameworkServices(volumes=writer))
    return new_plugin(args, framework)


def _pod(*claims: str, name: str = "p") -> Pod:
    builder = make_pod(name)
    for claim in claims:
        builder.pvc(claim)
    return builder.build()


def _static_cluster() -> ClusterState:
    return cluster_with(
        NODES,
        [
            make_class("local").wait_for_first_consumer(),
            make_pv("pv-a").storage_class("local").node_affinity(ZONE, "a").version("5"),
            make_pvc("data").storage_class("local").uid("claim-uid").version("7"),
        ],
    )


def _provisioning_cluster() -> ClusterState:
    return cluster_with(
        NODES,
        [
            make_class("zonal", DRIVER).wait_for_first_consumer(),
            make_pvc("data").storage_class("zonal").version("7"),
        ],
    )


def _decide(plugin: VolumeBinding, cluster: ClusterState, pod: Pod, node: str) -> CycleState:
    """PreFilter, Filter, Reserve on `node`, and the pod assumed there (as the loop does)."""
    state = CycleState(cluster)
    assert plugin.pre_filter(state, pod).status.is_success
    plugin.filter(state, pod, all_slots(state))
    assert plugin.reserve(state, pod, node).is_success
    cluster.add_pod(pod.assigned_to(node))
    return state


def test_reserve_assumes_the_claim_ref_so_the_next_pod_sees_the_volume_taken() -> None:
    cluster = _static_cluster()
    cluster.storage.upsert(make_pvc("other").storage_class("local").build())
    plugin = _plugin(FakeVolumeWriter())
    state = _decide(plugin, cluster, _pod("data"), "a1")
    assumed = cluster.storage.volume("pv-a")
    assert assumed is not None and assumed.claim_ref is not None
    assert (assumed.claim_ref.name, assumed.claim_ref.uid) == ("data", "claim-uid")
    assert assumed.annotations[BOUND_BY_CONTROLLER] == "yes"

    follower = _pod("other", name="q")
    next_state = CycleState(cluster)
    plugin.pre_filter(next_state, follower)
    assert plugin.filter(next_state, follower, all_slots(next_state)).codes.tolist() != [0, 0]

    plugin.unreserve(state, _pod("data"), "a1")
    restored = cluster.storage.volume("pv-a")
    assert restored is not None and restored.claim_ref is None


def test_a_claim_provisioned_for_a_node_sends_the_next_pod_sharing_it_there() -> None:
    cluster = _provisioning_cluster()
    plugin = _plugin(FakeVolumeWriter())
    _decide(plugin, cluster, _pod("data"), "b1")
    claim = cluster.storage.claim("default", "data")
    assert claim is not None and claim.selected_node == "b1"
    sharer = _pod("data", name="q")
    state = CycleState(cluster)
    plugin.pre_filter(state, sharer)
    assert plugin.filter(state, sharer, all_slots(state)).codes.tolist()[0] != 0


def test_pre_flight_skips_a_pod_whose_claims_are_bound() -> None:
    cluster = cluster_with(
        NODES,
        [
            make_pv("pv-a").claim_ref("default", "data").phase("Bound"),
            make_pvc("data").bound_to("pv-a"),
        ],
    )
    plugin = _plugin(FakeVolumeWriter())
    state = _decide(plugin, cluster, _pod("data"), "a1")
    assert plugin.pre_bind_pre_flight(state, _pod("data"), "a1").is_skip


async def test_pre_bind_writes_the_claim_ref_and_waits_for_the_pv_controller() -> None:
    cluster = _static_cluster()
    writer = FakeVolumeWriter()
    plugin = _plugin(writer)
    pod = _pod("data")
    state = _decide(plugin, cluster, pod, "a1")
    assert plugin.pre_bind_pre_flight(state, pod, "a1").is_success

    def pv_controller() -> None:
        if writer.pauses == 3:  # binds on its third look
            cluster.storage.upsert(
                make_pv("pv-a")
                .storage_class("local")
                .node_affinity(ZONE, "a")
                .claim_ref("default", "data", "claim-uid")
                .phase("Bound")
                .version("200")
                .build()
            )
            cluster.storage.upsert(
                make_pvc("data")
                .storage_class("local")
                .uid("claim-uid")
                .bound_to("pv-a")
                .version("201")
                .build()
            )

    writer.on_pause = pv_controller
    status = await plugin.pre_bind(state, pod, "a1")
    assert status.is_success, status.message
    assert [
        (name, version, ref.name, ref.uid, ref.resource_version, marked)
        for name, version, ref, marked in writer.volumes
    ] == [("pv-a", "5", "data", "claim-uid", "7", True)]
    assert writer.pauses == 3


async def test_pre_bind_annotates_a_claim_to_provision_and_reports_a_failed_provisioning() -> None:
    cluster = _provisioning_cluster()
    writer = FakeVolumeWriter()
    plugin = _plugin(writer)
    pod = _pod("data")
    state = _decide(plugin, cluster, pod, "b1")

    def provisioner_gives_up() -> None:
        # The provisioner moves the claim to another node's annotation... then none at all.
        cluster.storage.upsert(
            make_pvc("data").storage_class("zonal").selected_node("a1").version("300").build()
        )

    writer.on_pause = provisioner_gives_up
    status = await plugin.pre_bind(state, pod, "b1")
    assert writer.claims == [("default", "data", "7", "b1")]
    assert status.code is Code.ERROR
    assert status.message == 'binding volumes: provisioning failed for PVC "data"'


async def test_a_reset_selected_node_annotation_is_reported() -> None:
    cluster = _provisioning_cluster()
    writer = FakeVolumeWriter()
    plugin = _plugin(writer)
    pod = _pod("data")
    state = _decide(plugin, cluster, pod, "b1")
    writer.on_pause = lambda: cluster.storage.upsert(
        make_pvc("data").storage_class("zonal").version("300").build()
    )
    status = await plugin.pre_bind(state, pod, "b1")
    assert status.message == 'binding volumes: selectedNode annotation reset for PVC "data"'


async def test_pre_bind_times_out_after_bind_timeout_seconds() -> None:
    cluster = _provisioning_cluster()
    writer = FakeVolumeWriter()
    plugin = _plugin(writer, {"bindTimeoutSeconds": 5})
    pod = _pod("data")
    state = _decide(plugin, cluster, pod, "b1")
    started = writer.now()
    status = await plugin.pre_bind(state, pod, "b1")
    assert status.code is Code.ERROR
    assert status.message == "binding volumes: context deadline exceeded"
    assert writer.now() - started == 5


async def test_zero_bind_timeout_never_looks() -> None:
    cluster = _provisioning_cluster()
    writer = FakeVolumeWriter()
    plugin = _plugin(writer, {"bindTimeoutSeconds": 0})
    pod = _pod("data")
    state = _decide(plugin, cluster, pod, "b1")
    status = await plugin.pre_bind(state, pod, "b1")
    assert status.message == "binding volumes: context deadline exceeded"
    assert writer.pauses == 0


async def test_a_refused_write_is_the_error_and_undoes_the_assumption() -> None:
    cluster = _static_cluster()
    conflict = (
        'Operation cannot be fulfilled on persistentvolumes "pv-a": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )
    writer = FakeVolumeWriter(refuse={"pv-a": conflict})
    plugin = _plugin(writer)
    pod = _pod("data")
    state = _decide(plugin, cluster, pod, "a1")
    status = await plugin.pre_bind(state, pod, "a1")
    assert status.code is Code.ERROR
    assert status.message == conflict
    volume = cluster.storage.volume("pv-a")
    assert volume is not None and volume.claim_ref is None


async def test_a_pod_deleted_while_waiting_fails_its_binding() -> None:
    cluster = _provisioning_cluster()
    writer = FakeVolumeWriter()
    plugin = _plugin(writer)
    pod = _pod("data")
    state = _decide(plugin, cluster, pod, "b1")
    writer.on_pause = lambda: cluster.remove_pod(pod.uid) and None
    status = await plugin.pre_bind(state, pod, "b1")
    assert status.message == 'binding volumes: pod does not exist any more: pod "p" not found'


async def test_a_volume_whose_claim_ref_was_dropped_is_reported() -> None:
    cluster = _static_cluster()
    writer = FakeVolumeWriter()
    plugin = _plugin(writer)
    pod = _pod("data")
    state = _decide(plugin, cluster, pod, "a1")
    writer.on_pause = lambda: cluster.storage.upsert(
        make_pv("pv-a").storage_class("local").node_affinity(ZONE, "a").version("500").build()
    )
    status = await plugin.pre_bind(state, pod, "a1")
    assert status.message == 'binding volumes: ClaimRef got reset for pv "pv-a"'


async def test_an_unserved_profile_cannot_bind_volumes() -> None:
    cluster = _static_cluster()
    plugin = new_plugin(None, framework_with())
    pod = _pod("data")
    state = _decide(plugin, cluster, pod, "a1")
    status = await plugin.pre_bind(state, pod, "a1")
    assert status.message == "this profile is not served by a scheduler"


def test_reserve_reports_an_out_of_date_volume() -> None:
    cluster = _static_cluster()
    plugin = _plugin(FakeVolumeWriter())
    pod = _pod("data")
    state = CycleState(cluster)
    plugin.pre_filter(state, pod)
    plugin.filter(state, pod, all_slots(state))
    # The watch brings a newer version between Filter and Reserve (cannot happen live,
    # where the cycle runs without a pause; the assume cache still refuses it).
    current = cluster.storage.volumes.get_api("pv-a")
    assert current is not None
    cluster.storage.upsert(
        dataclasses.replace(
            current, metadata=dataclasses.replace(current.metadata, resource_version="6")
        )
    )
    status = plugin.reserve(state, pod, "a1")
    assert status.code is Code.ERROR
    assert status.message == '"pv-a" is out of sync (stored: 6, assume: 5)'


def _provisioner_creates(cluster: ClusterState, volume: Any) -> Callable[[], None]:
    """What the provisioner and the PV controller do on PreBind's first pause: `volume`
    (a builder) is created for claim "data", which names it."""

    def provisioned() -> None:
        cluster.storage.upsert(volume.claim_ref("default", "data").build())
        cluster.storage.upsert(
            make_pvc("data")
            .storage_class("zonal")
            .selected_node("b1")
            .volume_name("pvc-data")
            .version("300")
            .build()
        )

    return provisioned


async def test_a_provisioned_volume_out_of_the_nodes_reach_is_reported() -> None:
    cluster = _provisioning_cluster()
    writer = FakeVolumeWriter()
    plugin = _plugin(writer)
    pod = _pod("data")
    state = _decide(plugin, cluster, pod, "b1")

    writer.on_pause = _provisioner_creates(cluster, make_pv("pvc-data").node_affinity(ZONE, "a"))
    status = await plugin.pre_bind(state, pod, "b1")
    assert status.message == (
        'binding volumes: pv "pvc-data" node affinity doesn\'t match node "b1": '
        "no matching NodeSelectorTerms"
    )


async def test_a_provisioned_claim_is_bound_once_the_pv_controller_says_so() -> None:
    cluster = _provisioning_cluster()
    writer = FakeVolumeWriter()
    plugin = _plugin(writer)
    pod = _pod("data")
    state = _decide(plugin, cluster, pod, "b1")

    def bound() -> None:
        cluster.storage.upsert(
            make_pv("pvc-data").node_affinity(ZONE, "b").claim_ref("default", "data").build()
        )
        cluster.storage.upsert(
            make_pvc("data")
            .storage_class("zonal")
            .selected_node("b1")
            .bound_to("pvc-data")
            .version("300")
            .build()
        )

    writer.on_pause = bound
    assert (await plugin.pre_bind(state, pod, "b1")).is_success
    assert writer.pauses == 1


MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"


async def test_a_static_in_tree_volume_the_translator_refuses_fails_the_binding() -> None:
    """Filter matched the GCE PD by its own (empty) affinity; PreBind translates it, because
    a1's CSINode lists the plugin as migrated, and the translator refuses the zone label."""
    in_tree = make_pv("pv-a").storage_class("local").source("gcePersistentDisk", pdName="pd")
    cluster = cluster_with(
        NODES,
        [
            make_class("local").wait_for_first_consumer(),
            in_tree.label(ZONE, "a__b").version("5"),
            make_pvc("data").storage_class("local").uid("claim-uid").version("7"),
            make_csi_node("a1").annotation(MIGRATED_PLUGINS, "kubernetes.io/gce-pd"),
        ],
    )
    writer = FakeVolumeWriter()
    plugin = _plugin(writer)
    pod = _pod("data")
    state = _decide(plugin, cluster, pod, "a1")

    def pv_controller() -> None:
        cluster.storage.upsert(
            in_tree.claim_ref("default", "data", "claim-uid").version("200").build()
        )

    writer.on_pause = pv_controller
    status = await plugin.pre_bind(state, pod, "a1")
    assert status.message == (
        "binding volumes: failed to translate pv to csi: could not translate pv: failed to get "
        "region from zones: zone in unexpected format, expected: {locale}-{region}-{zone}, got: a"
    )


async def test_a_provisioned_in_tree_volume_is_judged_in_its_csi_form() -> None:
    """The Cinder volume's zone label becomes the Cinder driver's zone key, which b1 lacks."""
    cluster = _provisioning_cluster()
    cluster.storage.upsert(
        make_csi_node("b1").annotation(MIGRATED_PLUGINS, "kubernetes.io/cinder").build()
    )
    writer = FakeVolumeWriter()
    plugin = _plugin(writer)
    pod = _pod("data")
    state = _decide(plugin, cluster, pod, "b1")

    cinder = make_pv("pvc-data").source("cinder", volumeID="v").label(ZONE, "b")
    writer.on_pause = _provisioner_creates(cluster, cinder)
    status = await plugin.pre_bind(state, pod, "b1")
    assert status.message == (
        'binding volumes: pv "pvc-data" node affinity doesn\'t match node "b1": '
        "no matching NodeSelectorTerms"
    )
