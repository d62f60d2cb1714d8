"""Nominated pods: a node promised to an equal or higher priority pod is judged with it placed."""

from __future__ import annotations

import random

import pytest

from berth.engine.algorithm import Scheduled, SearchState, Unschedulable, schedule_one
from berth.engine.framework.runtime import build_framework
from berth.profiles import default_profile_config
from tests.builders import make_node, make_pod
from tests.unit.engine.fakes import cluster_of


@pytest.mark.parametrize(
    ("rival_priority", "fits"),
    [(100, False), (50, False), (10, True)],
    ids=[
        "higher-priority-rival-blocks",
        "equal-priority-rival-blocks",
        "lower-priority-rival-ignored",
    ],
)
def test_rivals_nominated_to_a_node_hold_their_capacity(rival_priority: int, fits: bool) -> None:
    cluster = cluster_of(make_node("only").capacity(cpu="1", memory="4Gi", pods=110).obj())
    rival = make_pod("rival").req(cpu="800m").priority(rival_priority).nominated("only").build()
    pod = make_pod("p").req(cpu="500m").priority(50).build()
    decision = schedule_one(
        build_framework(default_profile_config()),
        cluster,
        pod,
        search=SearchState(),
        rng=random.Random(1),
        nominated={"only": (rival,)},
    )
    if fits:
        assert isinstance(decision, Scheduled)
    else:
        assert isinstance(decision, Unschedulable)
        assert decision.message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert cluster.pod(rival.uid) is None, "the trial must leave the cluster as it was"


def test_the_nominated_pod_itself_is_not_its_own_rival() -> None:
    cluster = cluster_of(make_node("only").capacity(cpu="1", memory="4Gi", pods=110).obj())
    pod = make_pod("p").req(cpu="800m").priority(100).nominated("only").build()
    decision = schedule_one(
        build_framework(default_profile_config()),
        cluster,
        pod,
        search=SearchState(),
        rng=random.Random(1),
        nominated={"only": (pod,)},
    )
    assert isinstance(decision, Scheduled)
    assert decision.node_name == "only"
