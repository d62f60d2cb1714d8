"""PodDisruptionBudgets steer live preemption in Berth exactly as they steer kube-scheduler's.

Each case stages the same scene twice, in a namespace and node group per scheduler:
one-CPU nodes holding low-priority victims (bound directly, labelled `app`), an
optional budget over `app=protected`, then a high-priority preemptor that only
fits by evicting. Both schedulers must nominate the same node (by its kind, `a`
or `b`) and evict the same victims. Paired cases run one scene without and with
its budget, so the budget is what changes the answer.

The scenes are built so that kube-scheduler's answer is deterministic: every
potential node is dry-run (fewer than 100), candidates are told apart before the
random last tie-break, and victims on one node have distinct priorities (none has
a start time without a kubelet, so equal priorities would sort arbitrarily).

There is no kube-controller-manager here, so the test writes each budget's status
through the status subresource, as the disruption controller would. Neither
scheduler shows when its budget watch has caught up, so the budget is written
first: node and victim creation and the wait for Berth's node count (about a
second) separate it from the preemptor, far longer than a watch event takes.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica
from tests.cluster.helpers import (
    DEFAULT_SCHEDULER,
    SCHEDULER,
    create,
    create_namespace,
    create_priority_class,
    get_pod,
    list_all,
    make_nodes,
    node_kind,
    patch,
    pod_body,
    poll,
    unique_name,
    wait_berth_sees_all_nodes,
)

pytestmark = pytest.mark.cluster

ONE_CPU = {"cpu": "1", "memory": "4Gi", "pods": "110"}
PREEMPTOR_PRIORITY = 1000
PREEMPTOR = "preemptor"
PROTECTED = "protected"
BUDGET = "protect"
# A victim keeps terminating (no kubelet finishes it), so the preemptor stays nominated.
VICTIM_GRACE_SECONDS = 300
# kube-controller-manager's stamp for a pod it has already counted as disrupted.
DISRUPTED_AT = "2026-01-01T00:00:00Z"


@dataclass(frozen=True)
class Victim:
    name: str
    node: str  # node kind: "a" or "b"
    priority: int
    cpu: str = "800m"
    app: str = PROTECTED


@dataclass(frozen=True)
class Budget:
    """status.disruptionsAllowed and status.disruptedPods, as kube-controller-manager writes them."""

    allowed: int
    disrupted: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scene:
    nodes: tuple[str, ...]
    victims: tuple[Victim, ...]
    budget: Budget | None
    preemptor_cpu: str = "800m"


Outcome = tuple[str, tuple[str, ...]]  # (nominated node kind, evicted victims, sorted)

# (a) The budget protects the lower-priority victim on a; b's victim violates nothing.
STEERED = (Victim("a-low", "a", 10), Victim("b-mid", "b", 20, app="free"))
# (b) Every victim is protected: a evicts one, b two (of lower priority).
ALL_PROTECTED = (
    Victim("a-one", "a", 20),
    Victim("b-one", "b", 10, cpu="400m"),
    Victim("b-two", "b", 5, cpu="400m"),
)
# (d) One node: only one of its two victims must go; reprieve tries protected ones first.
ONE_NODE = (
    Victim("a-protected", "a", 10, cpu="500m"),
    Victim("a-free", "a", 20, cpu="500m", app="free"),
)

CASES = [
    pytest.param(Scene(("a", "b"), STEERED, None), ("a", ("a-low",)), id="a-without-budget"),
    pytest.param(Scene(("a", "b"), STEERED, Budget(0)), ("b", ("b-mid",)), id="a-budget-protects"),
    pytest.param(
        Scene(("a", "b"), ALL_PROTECTED, None), ("b", ("b-one", "b-two")), id="b-without-budget"
    ),
    pytest.param(
        Scene(("a", "b"), ALL_PROTECTED, Budget(0)),
        ("a", ("a-one",)),
        id="b-fewest-violations-win",
    ),
    pytest.param(
        Scene(("a", "b"), STEERED, Budget(1)), ("a", ("a-low",)), id="c-budget-allows-one"
    ),
    pytest.param(
        Scene(("a", "b"), STEERED, Budget(0, disrupted=("a-low",))),
        ("a", ("a-low",)),
        id="c-victim-already-counted-as-disrupted",
    ),
    pytest.param(
        Scene(("a",), ONE_NODE, None, preemptor_cpu="500m"),
        ("a", ("a-protected",)),
        id="d-without-budget",
    ),
    pytest.param(
        Scene(("a",), ONE_NODE, Budget(0), preemptor_cpu="500m"),
        ("a", ("a-free",)),
        id="d-reprieve-spares-protected",
    ),
]


@pytest.fixture(scope="module")
def priority_classes(control_plane: LocalControlPlane) -> dict[int, str]:
    values = {PREEMPTOR_PRIORITY} | {
        victim.priority for victims in (STEERED, ALL_PROTECTED, ONE_NODE) for victim in victims
    }
    return {value: create_priority_class(control_plane, value) for value in sorted(values)}


def _write_budget(plane: LocalControlPlane, namespace: str, scene: Scene) -> None:
    """Create the budget, then set its status as kube-controller-manager's disruption controller would."""
    assert scene.budget is not None
    covered = sum(victim.app == PROTECTED for victim in scene.victims)
    path = f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets"
    body = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": BUDGET},
        "spec": {
            "maxUnavailable": scene.budget.allowed,
            "selector": {"matchLabels": {"app": PROTECTED}},
        },
    }
    created = plane.request("POST", path, body)
    status = {
        "observedGeneration": created["metadata"]["generation"],
        "disruptionsAllowed": scene.budget.allowed,
        "currentHealthy": covered,
        "desiredHealthy": covered - scene.budget.allowed,
        "expectedPods": covered,
        "disruptedPods": dict.fromkeys(scene.budget.disrupted, DISRUPTED_AT),
    }
    patch(plane, f"{path}/{BUDGET}/status", {"status": status})


@dataclass(frozen=True)
class Stage:
    scheduler: str
    namespace: str
    group: str


def _stage(
    plane: LocalControlPlane, scene: Scene, scheduler: str, classes: dict[int, str]
) -> Stage:
    """Budget first, then nodes and bound victims; the preemptor comes later (`_preempt`)."""
    namespace = create_namespace(plane, f"budgets-{scheduler}")
    if scene.budget is not None:
        _write_budget(plane, namespace, scene)
    group = unique_name("g")
    for kind in scene.nodes:
        make_nodes(plane, 1, group=group, kind=kind, allocatable=ONE_CPU)
    for victim in scene.victims:
        create(
            plane,
            namespace,
            pod_body(
                victim.name,
                group,
                cpu=victim.cpu,
                labels={"app": victim.app},
                nodeName=f"{group}-{victim.node}-00000",
                priorityClassName=classes[victim.priority],
                terminationGracePeriodSeconds=VICTIM_GRACE_SECONDS,
            ),
        )
    return Stage(scheduler, namespace, group)


def _preempt(plane: LocalControlPlane, stage: Stage, scene: Scene, classes: dict[int, str]) -> None:
    body = pod_body(
        PREEMPTOR,
        stage.group,
        scheduler=stage.scheduler,
        cpu=scene.preemptor_cpu,
        priorityClassName=classes[PREEMPTOR_PRIORITY],
    )
    create(plane, stage.namespace, body)


def _outcome(plane: LocalControlPlane, stage: Stage) -> Outcome:
    nominated = get_pod(plane, stage.namespace, PREEMPTOR)["status"].get("nominatedNodeName", "")
    pods = list_all(plane, f"/api/v1/namespaces/{stage.namespace}/pods")
    evicted = sorted(
        pod["metadata"]["name"] for pod in pods if pod["metadata"].get("deletionTimestamp")
    )
    return (node_kind(nominated, stage.group) if nominated else "", tuple(evicted))


def _settled_outcome(plane: LocalControlPlane, stage: Stage, expected: Outcome) -> Outcome:
    """The outcome once it equals `expected`, else as it stands at the deadline.

    Victims are deleted one API call at a time, so an outcome read too early
    misses some; waiting for the expected one, and otherwise reporting what is
    there at the deadline, keeps a wrong answer readable.
    """
    seen: list[Outcome] = []

    def probe() -> bool:
        seen.append(_outcome(plane, stage))
        return seen[-1] == expected

    with contextlib.suppress(TimeoutError):
        poll(probe, timeout=30, description=f"{stage.scheduler}'s preemption")
    return seen[-1]


@pytest.mark.parametrize(("scene", "expected"), CASES)
def test_budgets_steer_preemption_like_kube_scheduler(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    kube_scheduler: object,
    priority_classes: dict[int, str],
    scene: Scene,
    expected: Outcome,
) -> None:
    ours = _stage(control_plane, scene, SCHEDULER, priority_classes)
    theirs = _stage(control_plane, scene, DEFAULT_SCHEDULER, priority_classes)
    wait_berth_sees_all_nodes(control_plane, berth)
    for stage in (ours, theirs):
        _preempt(control_plane, stage, scene, priority_classes)

    their_outcome = _settled_outcome(control_plane, theirs, expected)
    our_outcome = _settled_outcome(control_plane, ours, expected)

    assert their_outcome == expected, "the scene does not pin kube-scheduler's answer"
    assert our_outcome == their_outcome
