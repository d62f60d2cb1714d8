"""Generated nodes and pods, valid per the API but extreme, fed through the live path.

The same intake the kopf handlers call (`BerthApp.on_node_event` / `on_pod_event`), the same
profile controller, the real scheduling loop task: afterwards the loop still runs, nothing
logged an error, and every pod is bound (once, within the node's allocatable), pending with a
reported reason, gated, or refused with a logged reason naming the field.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import os
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from tests.unit.fuzz.live_path import LivePath, captured_logs
from tests.unit.fuzz.outcomes import classify, overcommitted_nodes
from tests.unit.fuzz.strategies.nodes import node_sets
from tests.unit.fuzz.strategies.pods import raw_pods

FUZZ = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,  # CI sees the same examples every run
    database=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate] if os.environ.get("FUZZ_NO_SHRINK") else list(Phase),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

SCHEDULER_NAMES = ["berth", "berth-binpack"]
PROFILES = [
    {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": "default", "generation": 1},
        "spec": {"schedulerName": "berth"},
    },
    {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": "binpack", "generation": 1},
        "spec": {
            "schedulerName": "berth-binpack",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {"scoringStrategy": {"type": "MostAllocated"}},
                }
            ],
        },
    },
]


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
    async def scenario() -> None:
        with captured_logs() as logs:
            live = LivePath(logs)
            try:
                await _feed(cluster, live)
                _check(live)
            finally:
                await live.stop()

    asyncio.run(scenario())
