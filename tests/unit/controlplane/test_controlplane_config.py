"""Configuration the control plane writes for its clients and kube-scheduler."""

from __future__ import annotations

from pathlib import Path

from berth.controlplane.commands import scheduler_configuration
from berth.controlplane.kubeconfig import KubeconfigCredentials, write_kubeconfig
from berth.controlplane.objects import NodeTemplate, PodTemplate, node_manifest, pod_manifest
from berth.kube.api import connection_info_from_kubeconfig


def test_written_kubeconfigs_read_back_with_berths_reader(tmp_path: Path) -> None:
    """Every client (Berth, kopf, the test client) reads them through berth.kube.api."""
    with_certificate = KubeconfigCredentials(
        server="https://127.0.0.1:6443",
        ca_path=tmp_path / "ca.crt",
        cert_path=tmp_path / "admin.crt",
        key_path=tmp_path / "admin.key",
    )
    with_token = KubeconfigCredentials(
        server="https://127.0.0.1:6443", ca_path=tmp_path / "ca.crt", token="secret"
    )
    for credentials in (with_certificate, with_token):
        path = write_kubeconfig(tmp_path / "config", credentials, user="someone")
        info, token_file = connection_info_from_kubeconfig(path)
        assert token_file is None
        read_back = KubeconfigCredentials(
            server=info.server,
            ca_path=Path(info.ca_path or ""),
            cert_path=Path(info.certificate_path) if info.certificate_path else None,
            key_path=Path(info.private_key_path) if info.private_key_path else None,
            token=info.token,
        )
        assert read_back == credentials


def test_scheduler_configuration_fills_local_defaults_but_keeps_given_fields() -> None:
    given = {
        "profiles": [{"schedulerName": "berth-reference"}],
        "clientConnection": {"qps": 10},
    }
    document = scheduler_configuration(
        given, kubeconfig=Path("/run/scheduler.kubeconfig"), qps=5000, burst=5000
    )
    assert document["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert document["kind"] == "KubeSchedulerConfiguration"
    assert document["clientConnection"] == {
        "qps": 10,
        "kubeconfig": "/run/scheduler.kubeconfig",
        "burst": 5000,
    }
    assert document["leaderElection"] == {"leaderElect": False}
    assert document["profiles"] == [{"schedulerName": "berth-reference"}]
    assert given == {
        "profiles": [{"schedulerName": "berth-reference"}],
        "clientConnection": {"qps": 10},
    }, "the caller's mapping must not be modified"


def test_simulated_nodes_carry_hostname_zone_and_ready_condition() -> None:
    template = NodeTemplate(allocatable={"cpu": "2", "memory": "4Gi", "pods": "10"})
    nodes = [node_manifest(template, index) for index in range(4)]

    assert [n["metadata"]["name"] for n in nodes] == [
        "node-00000",
        "node-00001",
        "node-00002",
        "node-00003",
    ]
    assert [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes] == [
        "zone-a",
        "zone-b",
        "zone-c",
        "zone-a",
    ]
    first = nodes[0]
    assert first["metadata"]["labels"]["kubernetes.io/hostname"] == "node-00000"
    assert first["status"]["capacity"] == first["status"]["allocatable"]
    assert [(c["type"], c["status"]) for c in first["status"]["conditions"]] == [("Ready", "True")]


def test_pod_manifest_is_bound_only_when_a_node_is_given() -> None:
    template = PodTemplate(requests={"cpu": "1"}, scheduler_name="berth")
    unbound = pod_manifest("p", template)
    bound = pod_manifest("p", template, node_name="node-00001")

    assert "nodeName" not in unbound["spec"]
    assert bound["spec"]["nodeName"] == "node-00001"
    assert unbound["spec"]["schedulerName"] == "berth"
    assert unbound["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "1"}}
