"""Generated nodes, pods and profiles, valid per the API but extreme, fed through the live path.

The same intake the kopf handlers call (`BerthApp.on_node_event` / `on_pod_event`, or the
start-up listing `acquire()` takes), the same profile controller, the real scheduling loop
task; then updates and deletions of nodes, pods and profiles while it runs, and a crowd of a
few hundred objects. Afterwards the loop still runs, nothing logged an error, and every pod is
bound (once, within the node's allocatable), pending with a reported reason, gated, refused
with a logged reason naming the field, or not Berth's to schedule (see outcomes.py).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.unit.fuzz.budget import FUZZ
from tests.unit.fuzz.live_path import PROFILES, SCHEDULER_NAMES, LivePath, run_live
from tests.unit.fuzz.outcomes import classify, overcommitted_nodes
from tests.unit.fuzz.strategies.api_values import labels
from tests.unit.fuzz.strategies.nodes import node_sets, raw_nodes
from tests.unit.fuzz.strategies.pods import raw_pods
from tests.unit.fuzz.strategies.profiles import raw_profiles


@dataclass
class Cluster:
    events: list[tuple[str, dict[str, Any]]]  # ("node" | "pod", raw), in arrival order
    start_first: bool  # True: objects arrive as watch events; False: in the start-up listing


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    nodes = draw(node_sets())
    node_names = [raw["metadata"]["name"] for raw in nodes]
    pods = draw(
        st.lists(raw_pods(scheduler_names=SCHEDULER_NAMES, node_names=node_names), max_size=10)
    )
    events = draw(st.permutations([("node", n) for n in nodes] + [("pod", p) for p in pods]))
    return Cluster(events, draw(st.booleans()))


async def _feed(cluster: Cluster, live: LivePath) -> None:
    for profile in PROFILES:
        assert live.apply_profile(profile).accepted
    if cluster.start_first:
        await live.start()
        for kind, raw in cluster.events:
            (live.node_event if kind == "node" else live.pod_event)("ADDED", raw)
    else:
        for kind, raw in cluster.events:
            live.listed(kind, raw)
        await live.start()
    await live.settle()


def _check(live: LivePath) -> None:
    assert live.loop_running()
    for outcome in sorted(set(classify(live).values())):
        event(f"some pod ended {outcome}")
    assert overcommitted_nodes(live) == []


@FUZZ
@given(clusters())
def test_every_generated_pod_ends_bound_pending_or_refused(cluster: Cluster) -> None:
    async def scenario(live: LivePath) -> None:
        await _feed(cluster, live)
        _check(live)

    run_live(scenario)


@dataclass
class ProfiledCluster:
    profiles: list[dict[str, Any]]  # applied before any pod arrives
    nodes: list[dict[str, Any]]
    pods: list[dict[str, Any]]
    edits: list[dict[str, Any] | str]  # then: a new version of a profile, or a deleted name


@st.composite
def profiled_clusters(draw: st.DrawFn) -> ProfiledCluster:
    """Generated profiles (two may claim one schedulerName), nodes and pods for them, then
    edits and deletions of those profiles while their pods wait or bind."""
    generated = st.sampled_from(SCHEDULER_NAMES).flatmap(
        lambda name: raw_profiles(scheduler_name=name)
    )
    profiles = draw(st.lists(generated, min_size=1, max_size=3))
    nodes = draw(node_sets(max_size=3))
    node_names = [raw["metadata"]["name"] for raw in nodes]
    pods = draw(
        st.lists(raw_pods(scheduler_names=SCHEDULER_NAMES, node_names=node_names), max_size=6)
    )
    edits: list[dict[str, Any] | str] = []
    for _ in range(draw(st.integers(0, 2))):
        name = draw(st.sampled_from(profiles))["metadata"]["name"]
        if draw(st.booleans()):
            edits.append(name)
            continue
        edit = draw(generated)
        edit["metadata"]["name"] = name
        edits.append(edit)
    return ProfiledCluster(profiles, nodes, pods, edits)


async def _apply_checked(live: LivePath, document: dict[str, Any]) -> None:
    """Apply and report, as the profile handler does; a refusal names a spec field."""
    verdict = live.apply_profile(document)
    if not verdict.accepted:
        field, _, problem = verdict.message.partition(": ")
        assert field.startswith("spec") and problem, verdict.message
    await live.profiles.report(document, verdict)
    path, body = live.api.patches[-1]
    assert path.endswith(f"/{document['metadata']['name']}/status")
    assert body["status"]["conditions"][0]["message"] == verdict.message


@FUZZ
@given(profiled_clusters())
def test_generated_profiles_are_served_or_refused_naming_the_field(
    cluster: ProfiledCluster,
) -> None:
    async def scenario(live: LivePath) -> None:
        await live.start()
        for document in cluster.profiles:
            await _apply_checked(live, document)
        for raw in cluster.nodes:
            live.node_event("ADDED", raw)
        for raw in cluster.pods:
            live.pod_event("ADDED", raw)
        await live.settle()
        for edit in cluster.edits:
            if isinstance(edit, str):
                live.delete_profile(edit)
            else:
                await _apply_checked(live, edit)
        await live.settle()
        assert live.loop_running()
        classify(live)

    run_live(scenario)


@dataclass
class Churn:
    cluster: Cluster
    changes: list[tuple[str, dict[str, Any]]]  # (event type, raw node or pod), after a settle


@st.composite
def churned_clusters(draw: st.DrawFn) -> Churn:
    """A cluster, then updates and deletions of its objects while the loop runs."""
    cluster = draw(clusters())
    known = [raw for _, raw in cluster.events]
    changes: list[tuple[str, dict[str, Any]]] = []
    for _ in range(draw(st.integers(1, 6))) if known else ():
        raw = draw(st.sampled_from(known))
        kind = raw["kind"]
        action = draw(st.sampled_from(("MODIFIED", "DELETED")))
        if action == "DELETED":
            changes.append(("DELETED", raw))
            continue
        if kind == "Node":  # same name, anything else may change: labels, taints, allocatable
            changed = draw(raw_nodes(name=raw["metadata"]["name"]))
        else:  # what users change on a pending pod: its gates go, its labels change
            changed = copy.deepcopy(raw)
            changed["spec"].pop("schedulingGates", None)
            changed["metadata"]["labels"] = draw(labels())
        # Every change the API server reports carries a new resourceVersion.
        changed["metadata"]["resourceVersion"] = (
            f"{raw['metadata']['resourceVersion']}{len(changes)}"
        )
        changes.append(("MODIFIED", changed))
    return Churn(cluster, changes)


@FUZZ
@given(churned_clusters())
def test_updates_and_deletions_while_the_loop_runs(churn: Churn) -> None:
    async def scenario(live: LivePath) -> None:
        await _feed(churn.cluster, live)
        for event_type, raw in churn.changes:
            (live.node_event if raw["kind"] == "Node" else live.pod_event)(event_type, raw)
        await live.settle()
        _check(live)

    run_live(scenario)


def _copy_named(raw: dict[str, Any], copy_index: int, *, prefix: str) -> dict[str, Any]:
    if copy_index == 0:
        return raw
    duplicate = copy.deepcopy(raw)
    metadata = duplicate["metadata"]
    metadata["name"] = f"{prefix}{copy_index}-{len(metadata['name'])}"
    metadata["uid"] = f"{metadata.get('uid', '')}-copy-{copy_index}"
    labels_ = metadata.get("labels") or {}
    if "kubernetes.io/hostname" in labels_:
        labels_["kubernetes.io/hostname"] = metadata["name"]
    return duplicate


@st.composite
def crowds(draw: st.DrawFn) -> Cluster:
    """Many objects at once: a generated cluster, its nodes copied to a few dozen and its pods
    to a couple of hundred (drawing that many independently overruns Hypothesis' budget)."""
    cluster = draw(clusters().filter(lambda c: len(c.events) >= 6))
    nodes = [raw for kind, raw in cluster.events if kind == "node"]
    pods = [raw for kind, raw in cluster.events if kind == "pod"]
    node_copies = draw(st.integers(5, 8))
    pod_copies = draw(st.integers(15, 25))
    events = [
        ("node", _copy_named(raw, k, prefix=f"node-{i}-copy"))
        for k in range(node_copies)
        for i, raw in enumerate(nodes)
    ]
    events += [
        ("pod", _copy_named(raw, k, prefix=f"pod-{i}-copy"))
        for k in range(pod_copies)
        for i, raw in enumerate(pods)
    ]
    return Cluster(events, cluster.start_first)


@settings(
    FUZZ,
    max_examples=min(FUZZ.max_examples, 5),
    # Big on purpose: the smallest crowd is still a crowd.
    suppress_health_check=[*FUZZ.suppress_health_check, HealthCheck.large_base_example],
)
@given(crowds())
def test_a_crowd_of_generated_pods_all_end_somewhere(cluster: Cluster) -> None:
    event(
        f"{sum(kind == 'node' for kind, _ in cluster.events)} nodes, {len(cluster.events)} objects"
    )

    async def scenario(live: LivePath) -> None:
        await _feed(cluster, live)
        _check(live)

    run_live(scenario)
