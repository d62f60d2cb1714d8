"""The demo's stateful pods are named and mount claims as a StatefulSet's would, and its summary
says per pod where it went and where its volume is."""

from __future__ import annotations

from berth.cli.demo_storage import STATEFUL_PODS, VolumePlacement, stateful_pods, volume_summary
from berth.controlplane import PodTemplate


def test_each_stateful_pod_mounts_its_own_claim_named_as_a_stateful_set_names_it() -> None:
    pods = stateful_pods(PodTemplate(scheduler_name="berth"))
    assert [pod["metadata"]["name"] for pod in pods] == [f"db-{i}" for i in range(STATEFUL_PODS)]
    claims = [pod["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] for pod in pods]
    assert claims == [f"data-db-{i}" for i in range(STATEFUL_PODS)]
    assert {pod["spec"]["schedulerName"] for pod in pods} == {"berth"}
    (spread,) = pods[0]["spec"]["topologySpreadConstraints"]
    assert spread["topologyKey"] == "topology.kubernetes.io/zone"


def test_the_summary_shows_bound_and_unbound_claims_next_to_their_pods() -> None:
    lines = volume_summary(
        [
            VolumePlacement(
                pod="db-0",
                node="n-1",
                node_zone="zone-b",
                claim="data-db-0",
                volume="pvc-1",
                volume_zone="zone-b",
            ),
            VolumePlacement(
                pod="db-1",
                node=None,
                node_zone=None,
                claim="data-db-1",
                volume=None,
                volume_zone=None,
            ),
        ]
    )
    assert lines == [
        "Claims of class demo-zonal (WaitForFirstConsumer) bound: 1/2",
        "  db-0 on n-1 (zone-b), claim data-db-0 -> pvc-1 in zone-b",
        "  db-1 not scheduled, claim data-db-1 -> not bound",
    ]
