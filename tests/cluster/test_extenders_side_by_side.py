"""Scheduler extenders, called by Berth and by the reference kube-scheduler alike.

One set of test extenders (tests/extender_server.py) serves both schedulers on
the same control plane: kube-scheduler gets them in its --config, Berth in a
SchedulerProfile's spec.extenders. Each extender manages its own extended
resource (ignoredByScheduler, so nodes need not have it), so a pod reaches
exactly the extender its scenario is about, and a pod requesting none reaches
none. For each scenario the same pod goes to each scheduler: the same node, or
byte for byte the same FailedScheduling message.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from berth.controlplane import LocalControlPlane
from berth.controlplane.berth_process import BerthReplica
from tests.cluster.helpers import (
    DEFAULT_SCHEDULER,
    create,
    create_priority_class,
    make_nodes,
    pod_body,
    wait_berth_sees_all_nodes,
    wait_bound,
    wait_unschedulable,
)
from tests.cluster.profile_resources import accepted_condition, apply, wait_verdict
from tests.extender_capture import api_binder
from tests.extender_server import ExtenderScript, ExtenderServer, VerbScript

pytestmark = pytest.mark.cluster

PROFILE = "berth-extenders"
PREFERRED_LABEL = "extender-test/preferred"
# Longer than the slow extenders' httpTimeout: their filter calls time out.
SLOW_ANSWER_SECONDS = 3.0


def _resource(name: str) -> str:
    return f"example.com/{name}"


def _extender(server: ExtenderServer, name: str, **fields: Any) -> dict[str, Any]:
    return {
        "urlPrefix": server.url,
        "managedResources": [{"name": _resource(name), "ignoredByScheduler": True}],
        **fields,
    }


SCENARIOS = ("full", "cached", "w1", "w5", "binder", "slow", "slow-ignorable", "preempter")


@pytest.fixture(scope="module")
def servers(control_plane: LocalControlPlane) -> Iterator[dict[str, ExtenderServer]]:
    started: dict[str, ExtenderServer] = {}
    try:
        for name in SCENARIOS:
            started[name] = ExtenderServer(ExtenderScript()).start()
        slow = VerbScript(delay=SLOW_ANSWER_SECONDS)
        started["slow"].script.verbs["filter"] = slow
        started["slow-ignorable"].script.verbs["filter"] = slow
        started["binder"].script.bind = api_binder(control_plane)
        yield started
    finally:
        for server in started.values():
            server.stop()


@pytest.fixture(scope="module")
def extenders(servers: dict[str, ExtenderServer]) -> list[dict[str, Any]]:
    """One KubeSchedulerConfiguration `extenders:` list, for both schedulers."""
    return [
        _extender(servers["full"], "full", filterVerb="filter"),
        _extender(servers["cached"], "cached", filterVerb="filter", nodeCacheCapable=True),
        _extender(servers["w1"], "w1", prioritizeVerb="prioritize", weight=1),
        _extender(servers["w5"], "w5", prioritizeVerb="prioritize", weight=5),
        _extender(servers["binder"], "binder", bindVerb="bind"),
        _extender(servers["slow"], "slow", filterVerb="filter", httpTimeout="1s"),
        _extender(
            servers["slow-ignorable"],
            "slow-ignorable",
            filterVerb="filter",
            httpTimeout="1s",
            ignorable=True,
        ),
        _extender(servers["preempter"], "preempter", preemptVerb="preempt"),
    ]


@pytest.fixture(scope="module")
def reference(control_plane: LocalControlPlane, extenders: list[dict[str, Any]]) -> Iterator[None]:
    """The reference kube-scheduler, restarted with the extenders for this module (and put
    back as it was afterwards, for the modules that share it)."""
    was_running = "kube-scheduler" in control_plane.processes
    control_plane.stop_kube_scheduler()
    control_plane.start_kube_scheduler({"extenders": extenders})
    try:
        yield
    finally:
        control_plane.stop_kube_scheduler()
        if was_running:
            control_plane.start_kube_scheduler()


@pytest.fixture(scope="module")
def profile(
    control_plane: LocalControlPlane, berth: BerthReplica, extenders: list[dict[str, Any]]
) -> str:
    """Berth's profile with the same extenders in spec.extenders."""
    apply(
        control_plane,
        {
            "apiVersion": "berth.dev/v1alpha1",
            "kind": "SchedulerProfile",
            "metadata": {"name": PROFILE},
            "spec": {"schedulerName": PROFILE, "extenders": extenders},
        },
    )
    verdict = wait_verdict(control_plane, PROFILE, generation=1)
    condition = accepted_condition(verdict) or {}
    assert condition.get("status") == "True", condition
    return PROFILE


def _pod(name: str, group: str, scheduler: str, *, resource: str | None) -> dict[str, Any]:
    """A pod preferring the group's `preferred` node (node affinity, weight 100) and, when
    `resource` is given, requesting one of that scenario's managed resource."""
    preference = {"matchExpressions": [{"key": PREFERRED_LABEL, "operator": "Exists"}]}
    affinity = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "preference": preference}
            ]
        }
    }
    body = pod_body(name, group, scheduler=scheduler, affinity=affinity)
    if resource is not None:
        resources = body["spec"]["containers"][0]["resources"]
        resources["requests"][_resource(resource)] = "1"
        resources["limits"] = {_resource(resource): "1"}
    return body


def _pods_called(server: ExtenderServer, verb: str) -> set[str]:
    names = set()
    for body in server.bodies(verb):
        pod = body.get("Pod") or {}
        names.add((pod.get("metadata") or {}).get("name") or body.get("PodName"))
    return names


@dataclass
class Scene:
    """Both schedulers with the extenders, a namespace, and the same pod given to each."""

    plane: LocalControlPlane
    berth: BerthReplica
    servers: dict[str, ExtenderServer]
    namespace: str

    def two_nodes(self) -> tuple[str, str, str]:
        """A node group of one node the pods prefer and one other: (group, preferred, other)."""
        group = make_nodes(self.plane, 1, kind="preferred", labels={PREFERRED_LABEL: "yes"})
        make_nodes(self.plane, 1, group=group, kind="other")
        return group, f"{group}-preferred-00000", f"{group}-other-00000"

    def _both(self, group: str, name: str, resource: str | None) -> tuple[str, str]:
        """The same pod for Berth (`<name>-ours`) and for kube-scheduler (`<name>-theirs`)."""
        wait_berth_sees_all_nodes(self.plane, self.berth)
        ours, theirs = f"{name}-ours", f"{name}-theirs"
        create(
            self.plane,
            self.namespace,
            _pod(ours, group, PROFILE, resource=resource),
            _pod(theirs, group, DEFAULT_SCHEDULER, resource=resource),
        )
        return ours, theirs

    def placed(self, group: str, name: str, *, resource: str | None) -> tuple[str, str]:
        """Where each scheduler bound its pod: (Berth's node, kube-scheduler's node)."""
        ours, theirs = self._both(group, name, resource)
        bound = wait_bound(self.plane, self.namespace, [ours, theirs])
        return bound[ours], bound[theirs]

    def refused(self, group: str, name: str, *, resource: str) -> tuple[str, str]:
        """Each scheduler's PodScheduled=False message: (Berth's, kube-scheduler's)."""
        ours, theirs = self._both(group, name, resource)
        return (
            wait_unschedulable(self.plane, self.namespace, ours),
            wait_unschedulable(self.plane, self.namespace, theirs),
        )


@pytest.fixture
def scene(
    control_plane: LocalControlPlane,
    berth: BerthReplica,
    reference: None,
    profile: str,
    servers: dict[str, ExtenderServer],
    namespace: str,
) -> Scene:
    return Scene(control_plane, berth, servers, namespace)


@pytest.mark.parametrize("scenario", ["full", "cached"], ids=["node-objects", "node-cache"])
def test_an_extender_filters_nodes_out_as_for_kube_scheduler(scene: Scene, scenario: str) -> None:
    group, preferred, other = scene.two_nodes()
    server = scene.servers[scenario]
    server.script.failed[preferred] = "no licence here"
    server.script.unresolvable[other] = "wrong rack"
    ours, theirs = scene.refused(group, "refused", resource=scenario)
    # Other tests' nodes share the cluster and add their own reasons between these two.
    assert "1 no licence here, " in theirs and "1 wrong rack, " in theirs
    assert ours == theirs
    del server.script.unresolvable[other]
    # The extender steers the pods away from the node the plugins prefer.
    assert scene.placed(group, "steered", resource=scenario) == (other, other)
    cached = scenario == "cached"
    assert all((body["NodeNames"] is not None) == cached for body in server.bodies("filter"))
    assert {"steered-ours", "steered-theirs"} <= _pods_called(server, "filter")


def test_an_extender_managing_resources_is_not_called_for_a_pod_without_them(
    scene: Scene,
) -> None:
    group, preferred, _ = scene.two_nodes()
    scene.servers["full"].script.failed[preferred] = "no licence here"
    assert scene.placed(group, "plain", resource=None) == (preferred, preferred)
    called = set().union(*(_pods_called(server, "filter") for server in scene.servers.values()))
    assert not {"plain-ours", "plain-theirs"} & called


@pytest.mark.parametrize(("weight", "wins"), [(1, "preferred"), (5, "other")])
def test_extender_scores_count_with_their_weight_as_for_kube_scheduler(
    scene: Scene, weight: int, wins: str
) -> None:
    # NodeAffinity gives the preferred node 100 x 2; the extender gives the other node
    # 10 x weight x 10: 100 does not beat 200, 500 does.
    group, preferred, other = scene.two_nodes()
    server = scene.servers[f"w{weight}"]
    server.script.scores[other] = 10
    expected = preferred if wins == "preferred" else other
    assert scene.placed(group, f"w{weight}", resource=f"w{weight}") == (expected, expected)
    assert {f"w{weight}-ours", f"w{weight}-theirs"} <= _pods_called(server, "prioritize")


def test_a_binding_extender_binds_for_both_schedulers(scene: Scene) -> None:
    group, preferred, _ = scene.two_nodes()
    assert scene.placed(group, "bound", resource="binder") == (preferred, preferred)
    bindings = {(body["PodName"], body["Node"]) for body in scene.servers["binder"].bodies("bind")}
    assert {("bound-ours", preferred), ("bound-theirs", preferred)} <= bindings


def test_an_extender_that_times_out_fails_the_attempt_unless_ignorable(scene: Scene) -> None:
    group, preferred, _ = scene.two_nodes()
    ours, theirs = scene.refused(group, "late", resource="slow")
    url = scene.servers["slow"].url
    assert theirs == (
        f'Post "{url}/filter": context deadline exceeded '
        "(Client.Timeout exceeded while awaiting headers)"
    )
    assert ours == theirs
    assert scene.placed(group, "skipped", resource="slow-ignorable") == (preferred, preferred)


def test_a_preempting_extender_is_sent_the_victims_by_both_schedulers(scene: Scene) -> None:
    plane = scene.plane
    low = create_priority_class(plane, 10)
    high = create_priority_class(plane, 1000)
    nodes = {}
    for who, scheduler in (("ours", PROFILE), ("theirs", DEFAULT_SCHEDULER)):
        group = make_nodes(plane, 1, allocatable={"cpu": "1", "memory": "4Gi", "pods": "9"})
        node = nodes[who] = f"{group}-n-00000"
        victim = pod_body(f"victim-{who}", group, cpu="800m", priorityClassName=low)
        victim["spec"]["nodeName"] = node  # created bound: neither scheduler placed it
        preemptor = _pod(f"preemptor-{who}", group, scheduler, resource="preempter")
        preemptor["spec"]["priorityClassName"] = high
        preemptor["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "800m"
        wait_berth_sees_all_nodes(plane, scene.berth)
        create(plane, scene.namespace, victim, preemptor)
        bound = wait_bound(plane, scene.namespace, [f"preemptor-{who}"])
        assert bound == {f"preemptor-{who}": node}
    sent = {
        body["Pod"]["metadata"]["name"]: {
            name: [pod["metadata"]["name"] for pod in victims["Pods"]]
            for name, victims in body["NodeNameToVictims"].items()
        }
        for body in scene.servers["preempter"].bodies("preempt")
    }
    # Whole victims (the extender has no node cache), as kube-scheduler sends them.
    assert sent["preemptor-ours"] == {nodes["ours"]: ["victim-ours"]}
    assert sent["preemptor-theirs"] == {nodes["theirs"]: ["victim-theirs"]}
