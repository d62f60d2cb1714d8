"""Which kube-controller-manager controllers the local control plane runs, and its command line.

A real cluster's PV controller is what turns a scheduler's volume decisions
into bound claims: kube-scheduler's VolumeBinding (and Berth's) writes a PV's
`claimRef` or a claim's selected-node annotation in PreBind and then waits for
the PV controller to report the claims bound. Without it no pod with a claim
could ever finish binding, and namespaces would never finish deleting.

But this control plane has fake nodes and no kubelet, and tests compare two
schedulers on it, so only the controllers whose work Berth's behaviour
depends on run (`CONTROLLERS`). The others would fight the tests
(`LEFT_OUT` says how).

Every controller acts under its own ServiceAccount with upstream's bootstrap
`system:controller:*` role (`--use-service-account-credentials`), exactly as
in a kubeadm cluster: kube-controller-manager's own user only has the rights
to mint those tokens, which the apiserver issues with the signing key it
already has. None of the chosen controllers reads a service-account key
file; that is only the (left out) token controller's need.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = ["CONTROLLERS", "LEFT_OUT", "controller_manager_argv"]

# Name -> why Berth's behaviour needs it.
CONTROLLERS: dict[str, str] = {
    "persistentvolume-binder-controller": (
        "binds claims to volumes: completes the PV claimRef / selected-node writes of a "
        "scheduler's VolumeBinding PreBind, and hands claims to external provisioners"
    ),
    "ephemeral-volume-controller": (
        "creates the claim of a pod's generic ephemeral volume, which VolumeBinding waits for"
    ),
    "namespace-controller": "deletes a deleted namespace's contents so the namespace goes away",
    "garbage-collector-controller": (
        "deletes objects whose owner is gone (an ephemeral volume's claim after its pod, "
        "a pod's generated ResourceClaims)"
    ),
    "resourceclaim-controller": (
        "creates ResourceClaims from a pod's ResourceClaimTemplates and releases claims "
        "whose pods are gone (dynamic resource allocation)"
    ),
}

# Controllers a real cluster runs that are deliberately off here, and why.
LEFT_OUT: dict[str, str] = {
    "node-lifecycle-controller": (
        "no kubelet heartbeats: it would taint every fake node not-ready/unreachable"
    ),
    "taint-eviction-controller": "would evict pods from nodes that carry NoExecute taints",
    "pod-garbage-collector-controller": (
        "would delete pods bound to nodes a test removed (node churn tests keep them)"
    ),
    "disruption-controller": (
        "would overwrite the PodDisruptionBudget status that preemption tests write"
    ),
    "deployment/replicaset/statefulset/daemonset/job controllers": (
        "would create pods from workload objects (Berth's own Deployment among them), "
        "changing the nodes' contents and FailedScheduling counts under side-by-side tests"
    ),
    "serviceaccount and token controllers": (
        "the ServiceAccount admission plugin is off; tests create the accounts they use"
    ),
    "persistentvolume(claim)-protection controllers": (
        "the StorageObjectInUseProtection admission plugin is off, so there is nothing to remove"
    ),
}


def controller_manager_argv(
    binary: Path,
    *,
    kubeconfig: Path,
    port: int,
    cert_dir: Path,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """kube-controller-manager on loopback with `CONTROLLERS` only.

    It serves /healthz on `port` with a self-signed certificate of its own;
    `kubeconfig` identifies `system:kube-controller-manager`, whose bootstrap
    role lets it create the controllers' ServiceAccounts and their tokens.
    """
    return [
        str(binary),
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        "--use-service-account-credentials=true",
        f"--controllers={','.join(CONTROLLERS)}",
        "--leader-elect=false",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        f"--cert-dir={cert_dir}",
        # As for kube-scheduler: client-side throttling must never be what a test waits on.
        "--kube-api-qps=1000",
        "--kube-api-burst=1000",
        "--v=1",
        *extra_args,
    ]
