"""ClusterState.volume_usage: nodes with volume-holding pods, and the claims placed pods use."""

from __future__ import annotations

from berth.engine.cluster import ClusterState
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from tests.builders import make_node
from tests.unit.engine.plugins.volume_objects import (
    claim_volume,
    ephemeral_volume,
    inline,
    pod_with,
)


def _cluster() -> ClusterState:
    cluster = ClusterState(capacity=2)
    for name in ("a", "b"):
        cluster.upsert_node(Node.from_dict(make_node(name).obj()))
    return cluster


def test_claims_in_use_follow_pods_and_skip_ephemeral_ones() -> None:
    cluster = _cluster()
    usage = cluster.volume_usage
    cluster.add_pod(Pod.from_dict(pod_with("p", claim_volume("data"), node="a", uid="p")))
    cluster.add_pod(Pod.from_dict(pod_with("q", claim_volume("data"), node="b", uid="q")))
    cluster.add_pod(Pod.from_dict(pod_with("r", ephemeral_volume("tmp"), node="b", uid="r")))
    assert usage.claim_in_use("default", "data")
    assert not usage.claim_in_use("default", "r-tmp")
    assert not usage.claim_in_use("other", "data")
    cluster.remove_pod("p")
    assert usage.claim_in_use("default", "data")
    cluster.remove_pod("q")
    assert not usage.claim_in_use("default", "data")


def test_nodes_holding_volume_pods_are_counted() -> None:
    cluster = _cluster()
    usage = cluster.volume_usage
    cluster.add_pod(
        Pod.from_dict(pod_with("p", {"name": "c", "configMap": {"name": "c"}}, node="a"))
    )
    disk = inline("d", "gcePersistentDisk", pdName="pd")
    cluster.add_pod(Pod.from_dict(pod_with("q", disk, node="b", uid="q")))
    a, b = cluster.slot_of("a"), cluster.slot_of("b")
    assert a is not None and b is not None
    assert (usage.pods_with_volumes[a], usage.pods_with_volumes[b]) == (0, 1)
    cluster.remove_pod("q")
    assert usage.pods_with_volumes[b] == 0


def test_pods_on_unknown_nodes_and_trials_leave_no_trace() -> None:
    cluster = _cluster()
    usage = cluster.volume_usage
    cluster.add_pod(Pod.from_dict(pod_with("ghost", claim_volume("data"), node="gone", uid="g")))
    assert not usage.claim_in_use("default", "data")
    with cluster.trial():
        cluster.add_pod(Pod.from_dict(pod_with("p", claim_volume("data"), node="a", uid="p")))
        assert usage.claim_in_use("default", "data")
    assert not usage.claim_in_use("default", "data")
    cluster.upsert_node(Node.from_dict(make_node("gone").obj()))
    assert usage.claim_in_use("default", "data")
