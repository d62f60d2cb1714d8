"""Plugins installed as Python packages, in a live Berth.

The example package (examples/berth-plugin-cost, installed in the test venv by
`make venv`) is loaded by `berth run` at start-up and named in a SchedulerProfile:
its NodeCost plugin sends every pod to the cheaper of two otherwise identical nodes,
where the default profile spreads them. A package whose plugin name clashes with an
in-tree plugin stops both entry points at start-up, naming the entry point.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import REPO, BerthReplica
from berth.controlplane.processes import wait_until
from tests.cluster.helpers import (
    SCHEDULER,
    create,
    make_nodes,
    node_kind,
    pod_body,
    unique_name,
    wait_berth_sees_all_nodes,
    wait_bound,
)
from tests.cluster.profile_resources import (
    accepted_condition,
    apply,
    renamed_example,
    wait_verdict,
)

pytestmark = pytest.mark.cluster

EXAMPLE_PROFILE = REPO / "examples" / "berth-plugin-cost" / "profile.yaml"
COST_LABEL = "example.berth.dev/cost"


def _placements(
    plane: LocalControlPlane, berth: BerthReplica, namespace: str, scheduler: str
) -> list[str]:
    """Four small pods of `scheduler` on two fresh, otherwise identical nodes costing 1 and 9:
    the kind of node ("cheap" or "dear") each pod was bound to."""
    group = make_nodes(plane, 1, kind="cheap", labels={COST_LABEL: "1"})
    make_nodes(plane, 1, group=group, kind="dear", labels={COST_LABEL: "9"})
    wait_berth_sees_all_nodes(plane, berth)
    names = [f"{scheduler}-{index}" for index in range(4)]
    create(plane, namespace, *(pod_body(name, group, scheduler=scheduler) for name in names))
    placed = wait_bound(plane, namespace, names)
    return [node_kind(placed[name], group) for name in names]


@pytest.fixture
def profile_name(control_plane: LocalControlPlane, berth: BerthReplica) -> Iterator[str]:
    name = unique_name("cheap")
    yield name
    control_plane.kubectl(
        "delete", "schedulerprofile", name, "--ignore-not-found", "--timeout=60s", check=False
    )


def test_berth_run_logs_the_plugins_it_loaded(berth: BerthReplica) -> None:
    log = berth.process.log_path.read_text()
    assert "loaded plugin NodeCost from distribution berth-plugin-cost version 0.1.0" in log


def test_a_profile_naming_the_installed_plugin_sends_pods_to_the_cheap_node(
    control_plane: LocalControlPlane, berth: BerthReplica, namespace: str, profile_name: str
) -> None:
    apply(control_plane, renamed_example(EXAMPLE_PROFILE, profile_name))
    verdict = accepted_condition(wait_verdict(control_plane, profile_name, generation=1))
    assert verdict is not None and verdict["status"] == "True", verdict

    by_cost = _placements(control_plane, berth, namespace, profile_name)
    assert by_cost == ["cheap"] * 4
    # The same on a fresh pair with the default profile: least-allocated scoring spreads them.
    assert sorted(_placements(control_plane, berth, namespace, SCHEDULER)) == [
        "cheap",
        "cheap",
        "dear",
        "dear",
    ]


def test_bad_args_for_the_installed_plugin_are_reported_on_the_profile(
    control_plane: LocalControlPlane, berth: BerthReplica, profile_name: str
) -> None:
    document = renamed_example(EXAMPLE_PROFILE, profile_name)
    document["spec"]["pluginConfig"][0]["args"]["normalization"] = "Log"
    apply(control_plane, document)
    verdict = accepted_condition(wait_verdict(control_plane, profile_name, generation=1))
    assert verdict is not None
    assert (verdict["status"], verdict["reason"]) == ("False", "Invalid")
    assert verdict["message"] == (
        "spec.pluginConfig[0].args.normalization: must be one of Proportional, MinMax, got 'Log'"
    )


@pytest.mark.parametrize("via_kopf_run", [False, True], ids=["berth-run", "kopf-run"])
def test_a_clashing_plugin_package_stops_the_start(
    control_plane: LocalControlPlane, berth: BerthReplica, tmp_path: Path, via_kopf_run: bool
) -> None:
    # An installed distribution (what pip leaves behind) whose plugin takes an in-tree name.
    info = tmp_path / "berth_clash-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: berth-clash\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[berth.plugins]\nNodeName = berth_clash:new_plugin\n")
    replica = BerthReplica(
        control_plane,
        unique_name("clash"),
        env={"PYTHONPATH": str(tmp_path)},
        via_kopf_run=via_kopf_run,
    )
    replica.process.start()
    try:
        wait_until(
            lambda: replica.process.exit_code() is not None,
            timeout=60,
            description="the replica with a clashing plugin package exits",
        )
        assert replica.process.exit_code() != 0
        if not via_kopf_run:
            assert replica.process.exit_code() == 2
        log = replica.process.log_path.read_text()
        assert (
            "berth.plugins entry point 'NodeName = berth_clash:new_plugin' of distribution "
            "berth-clash 1.0: the name 'NodeName' is an in-tree plugin's" in log
        ), log[-2000:]
    finally:
        replica.stop()
