"""A real local Kubernetes control plane for Berth's tests, demo and benchmarks.

etcd, kube-apiserver, kube-scheduler, kube-controller-manager and kubectl
are built from pinned Go modules by tools/controlplane/build.sh and run here
as child processes on loopback. See LocalControlPlane for the entry point,
objects for bulk Node/Pod helpers and VolumeProvisioner for the stand-in
volume provisioner.
"""

from berth.controlplane.binaries import BinariesNotFound, ControlPlaneBinaries, find_binaries
from berth.controlplane.client import ApiError, KubeClient
from berth.controlplane.cluster import LocalControlPlane
from berth.controlplane.kubeconfig import KubeconfigCredentials
from berth.controlplane.objects import (
    NodeTemplate,
    PodTemplate,
    bind_pods,
    create_namespace,
    create_nodes,
    create_pods,
    node_manifest,
    pod_manifest,
    read_placements,
    wait_for_event,
    wait_for_pods_bound,
)
from berth.controlplane.processes import ProcessFailed
from berth.controlplane.provisioner import VolumeProvisioner

__all__ = [
    "ApiError",
    "BinariesNotFound",
    "ControlPlaneBinaries",
    "KubeClient",
    "KubeconfigCredentials",
    "LocalControlPlane",
    "NodeTemplate",
    "PodTemplate",
    "ProcessFailed",
    "VolumeProvisioner",
    "bind_pods",
    "create_namespace",
    "create_nodes",
    "create_pods",
    "find_binaries",
    "node_manifest",
    "pod_manifest",
    "read_placements",
    "wait_for_event",
    "wait_for_pods_bound",
]
