"""VolumeBinding PreFilter, Filter and Score: every message kube-scheduler v1.37 gives, per case."""

from __future__ import annotations

from typing import Any

import pytest

from berth.engine.framework.status import Code
from berth.engine.model.pod import Pod
from berth.engine.plugins.volume_binding import new_plugin
from tests.builders import make_pod
from tests.storage_builders import make_capacity, make_class, make_csi_driver, make_pv, make_pvc
from tests.unit.engine.plugins.node_plugin_support import Judgement, all_slots, judge, names_of
from tests.unit.engine.plugins.volume_binding_support import (
    DRIVER,
    HOSTNAME,
    ZONE,
    cycle_with,
    zoned_node,
)

NODES = [zoned_node("a1", "a"), zoned_node("b1", "b"), zoned_node("c1", "c")]
UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
NO_SPACE = "node(s) did not have enough free storage"
PV_GONE = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


def wffc(name: str = "local", provisioner: str = "kubernetes.io/no-provisioner") -> Any:
    return make_class(name, provisioner).wait_for_first_consumer()


def pod_with(*claims: str) -> Pod:
    builder = make_pod("p")
    for claim in claims:
        builder.pvc(claim)
    return builder.build()


def ephemeral_pod() -> Pod:
    return (
        make_pod("p")
        .uid("pod-uid")
        .set("spec.volumes", [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}])
        .build()
    )


PRE_FILTER_CASES: list[tuple[str, Pod, list[Any], Judgement]] = [
    ("no-claims-skip", make_pod("p").build(), [], (Code.SKIP, ())),
    (
        "missing-claim",
        pod_with("data"),
        [],
        (UNRESOLVABLE, ('persistentvolumeclaim "data" not found',)),
    ),
    (
        "missing-ephemeral-claim",
        ephemeral_pod(),
        [],
        (
            UNRESOLVABLE,
            (
                "waiting for ephemeral volume controller to create the persistentvolumeclaim "
                '"p-scratch"',
            ),
        ),
    ),
    (
        "lost-claim",
        pod_with("data"),
        [make_pvc("data").volume_name("pv-gone").set("status.phase", "Lost")],
        (
            UNRESOLVABLE,
            ('persistentvolumeclaim "data" bound to non-existent persistentvolume "pv-gone"',),
        ),
    ),
    (
        "deleting-claim",
        pod_with("data"),
        [make_pvc("data").deleting()],
        (UNRESOLVABLE, ('persistentvolumeclaim "data" is being deleted',)),
    ),
    (
        "ephemeral-claim-of-another-pod",
        ephemeral_pod(),
        [make_pvc("p-scratch").owned_by_pod("p", "other-uid")],
        (
            UNRESOLVABLE,
            ("PVC default/p-scratch was not created for pod default/p (pod is not owner)",),
        ),
    ),
    (
        "unbound-immediate",
        pod_with("data"),
        [make_class("fast"), make_pvc("data").storage_class("fast")],
        (UNRESOLVABLE, ("pod has unbound immediate PersistentVolumeClaims",)),
    ),
    (
        "prebound-by-volume-name-counts-as-immediate",
        pod_with("data"),
        [wffc(), make_pvc("data").storage_class("local").volume_name("pv1")],
        (UNRESOLVABLE, ("pod has unbound immediate PersistentVolumeClaims",)),
    ),
    (
        "no-class-is-immediate",
        pod_with("data"),
        [make_pvc("data")],
        (UNRESOLVABLE, ("pod has unbound immediate PersistentVolumeClaims",)),
    ),
    (
        "missing-class-is-immediate",
        pod_with("data"),
        [make_pvc("data").storage_class("nowhere")],
        (UNRESOLVABLE, ("pod has unbound immediate PersistentVolumeClaims",)),
    ),
]


@pytest.mark.parametrize(
    ("pod", "objects", "expected"),
    [case[1:] for case in PRE_FILTER_CASES],
    ids=[case[0] for case in PRE_FILTER_CASES],
)
def test_pre_filter_rejections(pod: Pod, objects: list[Any], expected: Judgement) -> None:
    state = cycle_with(NODES, objects)
    assert judge(new_plugin(None), pod, state) == {"*": expected}


def _pass() -> Judgement:
    return (Code.SUCCESS, ())


def _fail(*reasons: str) -> Judgement:
    return (UNRESOLVABLE, reasons)


FILTER_CASES: list[tuple[str, Pod, list[Any], dict[str, Judgement]]] = [
    (
        "bound-claim-goes-where-its-volume-is",
        pod_with("data"),
        [
            make_pv("pv-b").node_affinity(ZONE, "b").claim_ref("default", "data").phase("Bound"),
            make_pvc("data").bound_to("pv-b"),
        ],
        {"a1": _fail(NODE_CONFLICT), "b1": _pass(), "c1": _fail(NODE_CONFLICT)},
    ),
    (
        "bound-claim-whose-volume-is-gone",
        pod_with("data"),
        [make_pvc("data").bound_to("pv-gone")],
        {name: _fail(PV_GONE) for name in ("a1", "b1", "c1")},
    ),
    (
        "local-volume-on-one-node",
        pod_with("data"),
        [
            wffc(),
            make_pv("local-b1").storage_class("local").node_affinity(HOSTNAME, "b1"),
            make_pvc("data").storage_class("local"),
        ],
        {"a1": _fail(BIND_CONFLICT), "b1": _pass(), "c1": _fail(BIND_CONFLICT)},
    ),
    (
        "volume-too-small-or-wrong-mode",
        pod_with("data"),
        [
            wffc(),
            make_pv("small").storage_class("local").capacity("1Gi"),
            make_pv("rwx-only")
            .storage_class("local")
            .capacity("9Gi")
            .access_modes("ReadWriteMany"),
            make_pv("block").storage_class("local").capacity("9Gi").block(),
            make_pvc("data").storage_class("local").request("2Gi"),
        ],
        {name: _fail(BIND_CONFLICT) for name in ("a1", "b1", "c1")},
    ),
    (
        "both-a-bound-and-an-unbound-conflict",
        pod_with("data", "logs"),
        [
            wffc(),
            make_pv("pv-b").node_affinity(ZONE, "b").claim_ref("default", "data").phase("Bound"),
            make_pvc("data").bound_to("pv-b"),
            make_pv("local-a1").storage_class("local").node_affinity(HOSTNAME, "a1"),
            make_pvc("logs").storage_class("local"),
        ],
        {
            "a1": _fail(NODE_CONFLICT),
            "b1": _fail(BIND_CONFLICT),
            "c1": _fail(NODE_CONFLICT, BIND_CONFLICT),
        },
    ),
    (
        "provisioning-within-allowed-topologies",
        pod_with("data"),
        [
            wffc("zonal", DRIVER).allowed_topology(ZONE, "a", "b"),
            make_pvc("data").storage_class("zonal"),
        ],
        {"a1": _pass(), "b1": _pass(), "c1": _fail(BIND_CONFLICT)},
    ),
    (
        "claim-selected-for-another-node",
        pod_with("data"),
        [wffc("zonal", DRIVER), make_pvc("data").storage_class("zonal").selected_node("b1")],
        {"a1": _fail(BIND_CONFLICT), "b1": _pass(), "c1": _fail(BIND_CONFLICT)},
    ),
    (
        "capacity-too-small-in-one-zone",
        pod_with("data"),
        [
            wffc("zonal", DRIVER),
            make_csi_driver(DRIVER).storage_capacity(),
            make_capacity("cap-a", "zonal").topology(**{ZONE: "a"}).capacity("1Gi"),
            make_capacity("cap-b", "zonal").topology(**{ZONE: "b"}).capacity("10Gi"),
            make_capacity("cap-c", "zonal")
            .topology(**{ZONE: "c"})
            .capacity("10Gi")
            .maximum_volume_size("2Gi"),
            make_pvc("data").storage_class("zonal").request("5Gi"),
        ],
        {"a1": _fail(NO_SPACE), "b1": _pass(), "c1": _fail(NO_SPACE)},
    ),
    (
        "capacity-not-tracked-by-the-driver",
        pod_with("data"),
        [
            wffc("zonal", DRIVER),
            make_csi_driver(DRIVER),
            make_capacity("cap-a", "zonal").topology(**{ZONE: "a"}).capacity("1Gi"),
            make_pvc("data").storage_class("zonal").request("5Gi"),
        ],
        {name: _pass() for name in ("a1", "b1", "c1")},
    ),
    (
        "a-static-match-spares-provisioning",
        pod_with("data"),
        [
            wffc("zonal", DRIVER),
            make_csi_driver(DRIVER).storage_capacity(),
            make_pv("pv-a").storage_class("zonal").capacity("5Gi").node_affinity(ZONE, "a"),
            make_pvc("data").storage_class("zonal").request("5Gi"),
        ],
        {"a1": _pass(), "b1": _fail(NO_SPACE), "c1": _fail(NO_SPACE)},
    ),
    (
        "two-claims-cannot-share-one-volume",
        pod_with("one", "two"),
        [
            wffc(),
            make_pv("only").storage_class("local").capacity("5Gi"),
            make_pvc("one").storage_class("local"),
            make_pvc("two").storage_class("local"),
        ],
        {name: _fail(BIND_CONFLICT) for name in ("a1", "b1", "c1")},
    ),
    (
        "volume-of-a-selector",
        pod_with("data"),
        [
            wffc(),
            make_pv("fast-a").storage_class("local").labels(speed="fast").node_affinity(ZONE, "a"),
            make_pv("slow-b").storage_class("local").labels(speed="slow").node_affinity(ZONE, "b"),
            make_pvc("data").storage_class("local").selector(speed="slow"),
        ],
        {"a1": _fail(BIND_CONFLICT), "b1": _pass(), "c1": _fail(BIND_CONFLICT)},
    ),
    (
        "pre-bound-volume-out-of-reach-is-no-match",
        pod_with("data"),
        [
            wffc(),
            make_pv("mine")
            .storage_class("local")
            .node_affinity(ZONE, "a")
            .claim_ref("default", "data"),
            make_pv("any").storage_class("local"),
            make_pvc("data").storage_class("local"),
        ],
        {"a1": _pass(), "b1": _fail(BIND_CONFLICT), "c1": _fail(BIND_CONFLICT)},
    ),
    (
        "match-fields-are-not-looked-at",
        pod_with("data"),
        [
            wffc(),
            make_pv("named")
            .storage_class("local")
            .set(
                "spec.nodeAffinity",
                {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": ["a1"]}
                                ]
                            }
                        ]
                    }
                },
            ),
            make_pvc("data").storage_class("local"),
        ],
        {name: _pass() for name in ("a1", "b1", "c1")},
    ),
]


@pytest.mark.parametrize(
    ("pod", "objects", "expected"),
    [case[1:] for case in FILTER_CASES],
    ids=[case[0] for case in FILTER_CASES],
)
def test_filter(pod: Pod, objects: list[Any], expected: dict[str, Judgement]) -> None:
    state = cycle_with(NODES, objects)
    assert judge(new_plugin(None), pod, state) == expected


def test_smallest_fit_feeds_the_score() -> None:
    """The 2Gi volume is the smallest that fits a 2Gi claim: utilization 100% scores 0; a
    node reaching only a 4Gi volume is at 50% and scores 50 (default shape)."""
    state = cycle_with(
        NODES,
        [
            wffc(),
            make_pv("big-a").storage_class("local").capacity("8Gi").node_affinity(ZONE, "a"),
            make_pv("fit-a").storage_class("local").capacity("2Gi").node_affinity(ZONE, "a"),
            make_pv("half-b").storage_class("local").capacity("4Gi").node_affinity(ZONE, "b"),
            make_pvc("data").storage_class("local").request("2Gi"),
        ],
    )
    plugin = new_plugin(None)
    pod = pod_with("data")
    assert plugin.pre_filter(state, pod).status.is_success
    slots = all_slots(state)
    verdicts = plugin.filter(state, pod, slots)
    assert verdicts.codes.tolist() == [0, 0, UNRESOLVABLE]
    assert plugin.pre_score(state, pod, slots).is_success
    scores = dict(
        zip(names_of(state, slots), plugin.score(state, pod, slots).tolist(), strict=True)
    )
    assert scores == {"a1": 0, "b1": 50, "c1": 0}


def test_provisioning_scores_by_the_capacity_left() -> None:
    state = cycle_with(
        NODES,
        [
            wffc("zonal", DRIVER),
            make_csi_driver(DRIVER).storage_capacity(),
            make_capacity("cap-a", "zonal").topology(**{ZONE: "a"}).capacity("10Gi"),
            make_capacity("cap-b", "zonal").topology(**{ZONE: "b"}).capacity("4Gi"),
            make_pvc("data").storage_class("zonal").request("2Gi"),
        ],
    )
    plugin = new_plugin(None)
    pod = pod_with("data")
    plugin.pre_filter(state, pod)
    slots = all_slots(state)
    plugin.filter(state, pod, slots)
    scores = dict(
        zip(names_of(state, slots), plugin.score(state, pod, slots).tolist(), strict=True)
    )
    assert scores == {"a1": 80, "b1": 50, "c1": 0}


def test_a_pod_without_claims_scores_zero_everywhere() -> None:
    state = cycle_with(NODES, [])
    plugin = new_plugin(None)
    pod = make_pod("p").build()
    assert plugin.pre_filter(state, pod).status.is_skip
    slots = all_slots(state)
    assert plugin.pre_score(state, pod, slots).is_success
    assert plugin.score(state, pod, slots).tolist() == [0, 0, 0]
