"""Both entry points of a real Berth process read the BERTH_* variables alike.

`berth run` and `kopf run -A -m berth.kube.handlers` start against the real
control plane with the same environment; /configz must report the settings
the variables say, and each replica must lead (BERTH_STANDALONE took effect:
without it, the replica would wait for peering like a production replica).
"""

from __future__ import annotations

import subprocess

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica, install

pytestmark = pytest.mark.cluster

ENVIRONMENT = {
    "BERTH_PARALLEL_BINDS": "9",
    "BERTH_POD_INITIAL_BACKOFF_SECONDS": "0.5",
    "BERTH_POD_MAX_BACKOFF_SECONDS": "4",
    "BERTH_POD_MAX_IN_UNSCHEDULABLE_SECONDS": "120",
    "BERTH_PERCENTAGE_OF_NODES_TO_SCORE": "40",
    "BERTH_PEERING": "elsewhere",
    "BERTH_PEERING_LIFETIME_SECONDS": "20",
    "BERTH_PRIORITY": "11",
    "BERTH_SEED": "7",
    "BERTH_STANDALONE": "true",
}
EXPECTED = {
    "parallel_binds": 9,
    "pod_initial_backoff_seconds": 0.5,
    "pod_max_backoff_seconds": 4.0,
    "pod_max_in_unschedulable_seconds": 120.0,
    "percentage_of_nodes_to_score": 40,
    "peering_name": "elsewhere",
    "peering_lifetime_seconds": 20,
    "priority": 11,
    "seed": 7,
    "standalone": True,
    "metrics_host": "127.0.0.1",
}


@pytest.mark.parametrize("via_kopf_run", [False, True], ids=["berth-run", "kopf-run"])
def test_each_entry_point_runs_with_the_settings_its_variables_say(
    control_plane: LocalControlPlane, via_kopf_run: bool
) -> None:
    try:
        install(control_plane)
    except subprocess.CalledProcessError as error:
        pytest.fail(f"installing Berth failed: {error.cmd}\n{error.stderr}")
    name = "settings-kopf" if via_kopf_run else "settings-berth"
    replica = BerthReplica(control_plane, name, env=ENVIRONMENT, via_kopf_run=via_kopf_run)
    replica.start()
    try:
        replica.wait_leading()
        configz = replica.configz()
    finally:
        replica.stop()
    settings = configz["settings"]
    assert isinstance(settings, dict)
    assert {field: settings[field] for field in EXPECTED} == EXPECTED
    assert settings["metrics_port"] == replica.metrics_port
    assert settings["kubeconfig"].endswith(".kubeconfig")  # from KUBECONFIG, the SA's
