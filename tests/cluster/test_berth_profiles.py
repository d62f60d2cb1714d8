"""SchedulerProfile lifecycle through kubectl and the API, with Berth running.

A new profile serves its schedulerName without a restart; an invalid edit is
reported on the resource while the last good version keeps serving; deleting
the resource retires its schedulerName; the CRD's schema and CEL rules reject
what they can at `kubectl apply` time; the manifests apply cleanly.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import REPO, BerthReplica
from tests.builders import extender_with_every_field
from tests.cluster.helpers import (
    SCHEDULER,
    create,
    events,
    get_pod,
    make_nodes,
    pod_body,
    poll,
    scheduled_condition,
    unique_name,
    wait_berth_sees_all_nodes,
    wait_bound,
)
from tests.cluster.profile_resources import (
    PROFILES,
    accepted_condition,
    apply,
    get_profile,
    renamed_example,
    wait_verdict,
)

pytestmark = pytest.mark.cluster

BINPACK_EXAMPLE = REPO / "examples" / "profiles" / "berth-binpack.yaml"
ROOMY = {"cpu": "4", "memory": "16Gi", "pods": "110"}


def _binpack(name: str) -> dict[str, Any]:
    return renamed_example(BINPACK_EXAMPLE, name)


def _served(replica: BerthReplica, scheduler_name: str) -> dict[str, Any] | None:
    profiles: Any = replica.configz().get("profiles") or {}
    served = profiles.get(scheduler_name)
    return dict(served) if served else None


@pytest.fixture
def profile_name(control_plane: LocalControlPlane, berth: BerthReplica) -> Iterator[str]:
    """A fresh profile name; the profile, if created, is deleted while Berth still runs."""
    name = unique_name("binpack")
    yield name
    control_plane.kubectl(
        "delete", "schedulerprofile", name, "--ignore-not-found", "--timeout=60s", check=False
    )


def _packed_placements(
    plane: LocalControlPlane, berth: BerthReplica, namespace: str, scheduler: str, prefix: str
) -> dict[str, str]:
    """Three 1-cpu pods of `scheduler` on a fresh group of three 4-cpu nodes; their nodes."""
    group = make_nodes(plane, 3, allocatable=ROOMY)
    wait_berth_sees_all_nodes(plane, berth)
    names = [f"{prefix}-{index}" for index in range(3)]
    create(plane, namespace, *(pod_body(n, group, scheduler=scheduler, cpu="1") for n in names))
    return wait_bound(plane, namespace, names)


def test_new_profile_serves_its_scheduler_name_without_restart(
    control_plane: LocalControlPlane, berth: BerthReplica, namespace: str, profile_name: str
) -> None:
    apply(control_plane, _binpack(profile_name))
    profile = wait_verdict(control_plane, profile_name, generation=1)
    accepted = accepted_condition(profile)
    assert accepted is not None
    assert accepted["status"] == "True", accepted
    assert accepted["observedGeneration"] == 1
    assert profile["status"]["servingGeneration"] == 1
    served = _served(berth, profile_name)
    assert served is not None
    assert served["generation"] == 1

    packed = _packed_placements(control_plane, berth, namespace, profile_name, "packed")
    assert len(set(packed.values())) == 1, f"MostAllocated packs onto one node: {packed}"
    spread = _packed_placements(control_plane, berth, namespace, SCHEDULER, "spread")
    assert len(set(spread.values())) == 3, f"the default profile spreads: {spread}"


def _unknown_plugin(document: dict[str, Any]) -> str:
    document["spec"]["pluginConfig"].append({"name": "NoSuchPlugin", "args": {}})
    return "spec.pluginConfig[1].name: unknown plugin 'NoSuchPlugin'"


def _bad_args(document: dict[str, Any]) -> str:
    document["spec"]["pluginConfig"][0]["args"]["scoringStrategy"]["type"] = "Bogus"
    return "spec.pluginConfig[0].args.scoringStrategy.type: Unsupported value: 'Bogus'"


def _score_without_its_pre_score(document: dict[str, Any]) -> str:
    document["spec"]["plugins"]["preScore"] = {"disabled": [{"name": "InterPodAffinity"}]}
    return "spec.plugins.preScore.disabled[0].name: plugin 'InterPodAffinity' runs at score"


def _extender_tls_that_cannot_load(document: dict[str, Any]) -> str:
    # Every field passes the CRD schema and the document checks; its PEM data cannot load.
    document["spec"]["extenders"] = [extender_with_every_field()]
    return "spec.extenders[0].tlsConfig.caData: cannot load"


def _extender_without_weight(document: dict[str, Any]) -> str:
    document["spec"]["extenders"] = [{"urlPrefix": "http://127.0.0.1:1", "prioritizeVerb": "p"}]
    return "spec.extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"


@pytest.mark.parametrize(
    "spoil",
    [
        _unknown_plugin,
        _bad_args,
        _score_without_its_pre_score,
        _extender_tls_that_cannot_load,
        _extender_without_weight,
    ],
    ids=[
        "unknown-plugin",
        "bad-args",
        "score-without-pre-score",
        "extender-tls-cannot-load",
        "extender-without-weight",
    ],
)
def test_invalid_edit_is_reported_and_the_last_good_version_keeps_serving(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    namespace: str,
    profile_name: str,
    spoil: Any,
) -> None:
    good = _binpack(profile_name)
    apply(control_plane, good)
    wait_verdict(control_plane, profile_name, generation=1)

    bad = copy.deepcopy(good)
    expected_message = spoil(bad)
    apply(control_plane, bad)
    profile = wait_verdict(control_plane, profile_name, generation=2)
    accepted = accepted_condition(profile)
    assert accepted is not None
    assert accepted["status"] == "False"
    assert accepted["reason"] == "Invalid"
    assert accepted["message"].startswith(expected_message), accepted["message"]
    assert profile["status"]["servingGeneration"] == 1
    served = _served(berth, profile_name)
    assert served is not None
    assert served["generation"] == 1

    packed = _packed_placements(control_plane, berth, namespace, profile_name, "still-packed")
    assert len(set(packed.values())) == 1, f"generation 1 (MostAllocated) still serves: {packed}"


def test_deleted_profile_stops_serving_its_scheduler_name(
    control_plane: LocalControlPlane, berth: BerthReplica, namespace: str, profile_name: str
) -> None:
    apply(control_plane, _binpack(profile_name))
    wait_verdict(control_plane, profile_name, generation=1)
    poll(lambda: _served(berth, profile_name), timeout=30, description="the profile served")

    # kopf's daemon finalizer is on the profile, so this waits for Berth to let go of it.
    control_plane.kubectl("delete", "schedulerprofile", profile_name, "--timeout=60s")
    poll(
        lambda: _served(berth, profile_name) is None,
        timeout=30,
        description=f"{profile_name} no longer in /configz",
    )

    group = make_nodes(control_plane, 1)
    create(
        control_plane,
        namespace,
        pod_body("orphan", group, scheduler=profile_name),
        pod_body("control", group),
    )
    wait_bound(control_plane, namespace, ["control"])
    orphan = get_pod(control_plane, namespace, "orphan")
    assert not orphan["spec"].get("nodeName")
    assert scheduled_condition(orphan) is None, "no scheduler may judge an unserved pod"
    assert not events(control_plane, namespace, name="orphan")


# ---------------------------------------------------------------------- apply-time rejection


def _change_scheduler_name(document: dict[str, Any]) -> None:
    document["spec"]["schedulerName"] = "another-name"


def _score_weight(weight: int) -> Any:
    def spoil(document: dict[str, Any]) -> None:
        document["spec"]["plugins"]["score"]["enabled"][0]["weight"] = weight

    return spoil


def _duplicate_plugin(document: dict[str, Any]) -> None:
    enabled = document["spec"]["plugins"]["score"]["enabled"]
    enabled.append(dict(enabled[0]))


def _percentage(document: dict[str, Any]) -> None:
    document["spec"]["percentageOfNodesToScore"] = 101


def _unknown_field(document: dict[str, Any]) -> None:
    document["spec"]["extender"] = [{"urlPrefix": "http://127.0.0.1:1"}]


def _unknown_extender_field(document: dict[str, Any]) -> None:
    document["spec"]["extenders"] = [{"urlPrefix": "http://127.0.0.1:1", "verb": "filter"}]


def _unitless_extender_timeout(document: dict[str, Any]) -> None:
    document["spec"]["extenders"] = [{"urlPrefix": "http://127.0.0.1:1", "httpTimeout": "30"}]


@pytest.mark.parametrize(
    ("spoil", "on_update", "expected"),
    [
        (_change_scheduler_name, True, "schedulerName is immutable"),
        (_score_weight(0), False, "should be greater than or equal to 1"),
        (_score_weight(101), False, "should be less than or equal to 100"),
        (_duplicate_plugin, False, "Duplicate value"),
        (_percentage, False, "should be less than or equal to 100"),
        (_unknown_field, False, 'unknown field "spec.extender"'),
        (_unknown_extender_field, False, 'unknown field "spec.extenders[0].verb"'),
        (_unitless_extender_timeout, False, "spec.extenders[0].httpTimeout in body should match"),
    ],
    ids=[
        "scheduler-name-immutable",
        "weight-0",
        "weight-101",
        "duplicate-plugin",
        "percentage",
        "unknown-field",
        "unknown-extender-field",
        "unitless-extender-timeout",
    ],
)
def test_schema_rejects_at_apply_time(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    profile_name: str,
    spoil: Any,
    on_update: bool,
    expected: str,
) -> None:
    document = _binpack(profile_name)
    if on_update:
        apply(control_plane, document)
    spoil(document)
    result = apply(control_plane, document, check=False)
    assert result.returncode != 0
    assert expected in result.stderr, result.stderr
    if on_update:
        assert get_profile(control_plane, profile_name)["spec"]["schedulerName"] == profile_name
    else:
        missing = control_plane.request("GET", f"{PROFILES}/{profile_name}", ok_statuses=(404,))
        assert missing["code"] == 404


def test_manifests_apply_cleanly_with_a_server_side_dry_run(
    control_plane: LocalControlPlane, berth: BerthReplica
) -> None:
    manifests = Path(REPO) / "manifests"
    result = control_plane.kubectl(
        "apply", "--server-side", "--dry-run=server", "-k", str(manifests), check=False
    )
    assert result.returncode == 0, result.stderr
    assert "schedulerprofile.berth.dev/berth" in result.stdout
