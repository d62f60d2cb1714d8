"""InterPodAffinity PreScore/Score/NormalizeScore, table-driven."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from berth.engine.framework.cycle_state import CycleState
from berth.engine.model.node import Node
from berth.engine.plugins.inter_pod_affinity import new_plugin
from tests.builders import PodBuilder, make_pod
from tests.unit.engine.plugins.inter_pod_affinity_helpers import (
    HOST,
    ZONE,
    World,
    run_score,
    term,
    web_pod,
    zoned,
)

# ---------------------------------------------------------------------- score


@dataclass
class ScoreCase:
    id: str
    pod: PodBuilder
    world: World
    want: dict[str, int] | str  # normalised scores, or "skip"
    raw: dict[str, int] | None = None
    args: dict[str, Any] | None = None


def four_zones() -> list[Node]:
    return [zoned("n1", "a"), zoned("n2", "b"), zoned("n3", "c"), zoned("n4", None)]


SCORE_CASES = [
    ScoreCase(
        "no terms anywhere: skip",
        make_pod("p").labels(app="web"),
        World(four_zones(), [web_pod("e1", "n1")]),
        "skip",
    ),
    ScoreCase(
        "preferred terms matching nothing: skip",
        make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "db"}), weight=10),
        World(four_zones(), [web_pod("e1", "n1")]),
        "skip",
    ),
    ScoreCase(
        "preferred affinity: the matching pod's zone scores 100",
        make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=10),
        World(four_zones(), [web_pod("e1", "n1"), web_pod("e2", "n1")]),
        {"n1": 100, "n2": 0, "n3": 0, "n4": 0},
        raw={"n1": 20, "n2": 0, "n3": 0, "n4": 0},
    ),
    ScoreCase(
        "preferred anti-affinity: the matching pod's zone scores 0",
        make_pod("p").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}), weight=7),
        World(four_zones(), [web_pod("e1", "n2")]),
        {"n1": 100, "n2": 0, "n3": 100, "n4": 100},
        raw={"n1": 0, "n2": -7, "n3": 0, "n4": 0},
    ),
    ScoreCase(
        "existing required affinity adds hardPodAffinityWeight",
        make_pod("p").labels(app="web"),
        World(
            four_zones(),
            [make_pod("e1").node("n3").pod_affinity("podAffinity", term(ZONE, {"app": "web"}))],
        ),
        {"n1": 0, "n2": 0, "n3": 100, "n4": 0},
        raw={"n1": 0, "n2": 0, "n3": 5, "n4": 0},
        args={"hardPodAffinityWeight": 5},
    ),
    ScoreCase(
        "hardPodAffinityWeight 0 ignores existing required affinity",
        make_pod("p").labels(app="web"),
        World(
            four_zones(),
            [make_pod("e1").node("n3").pod_affinity("podAffinity", term(ZONE, {"app": "web"}))],
        ),
        "skip",
        args={"hardPodAffinityWeight": 0},
    ),
    ScoreCase(
        "existing preferred affinity and anti-affinity count for and against",
        make_pod("p").labels(app="web"),
        World(
            four_zones(),
            [
                make_pod("e1")
                .node("n1")
                .pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=30),
                make_pod("e2")
                .node("n2")
                .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}), weight=10),
            ],
        ),
        {"n1": 100, "n2": 0, "n3": 25, "n4": 25},
        raw={"n1": 30, "n2": -10, "n3": 0, "n4": 0},
    ),
    ScoreCase(
        "ignorePreferredTermsOfExistingPods skips pods without preferred terms",
        make_pod("p").labels(app="web"),
        World(
            four_zones(),
            [
                make_pod("e1")
                .node("n1")
                .pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=30)
            ],
        ),
        "skip",
        args={"ignorePreferredTermsOfExistingPods": True},
    ),
    ScoreCase(
        "ignorePreferredTermsOfExistingPods still reads existing terms for pods with preferred terms",
        make_pod("p")
        .labels(app="web")
        .pod_affinity("podAffinity", term(ZONE, {"app": "none"}), weight=1),
        World(
            four_zones(),
            [
                make_pod("e1")
                .node("n1")
                .pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=30)
            ],
        ),
        {"n1": 100, "n2": 0, "n3": 0, "n4": 0},
        args={"ignorePreferredTermsOfExistingPods": True},
    ),
    ScoreCase(
        "normalisation is min-max over the scored nodes, not seeded at 0",
        make_pod("p")
        .pod_affinity("podAffinity", term(HOST, {"app": "web"}), weight=5)
        .pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=5),
        World([zoned("n1", "a"), zoned("n2", "a")], [web_pod("e1", "n1")]),
        {"n1": 100, "n2": 0},
        raw={"n1": 10, "n2": 5},
    ),
    ScoreCase(
        "equal raw scores normalise to 0",
        make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=5),
        World([zoned("n1", "a"), zoned("n2", "a")], [web_pod("e1", "n1")]),
        {"n1": 0, "n2": 0},
        raw={"n1": 5, "n2": 5},
    ),
    ScoreCase(
        "points that cancel out still score (no skip)",
        make_pod("p")
        .pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=5)
        .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}), weight=5),
        World(four_zones(), [web_pod("e1", "n1")]),
        {"n1": 0, "n2": 0, "n3": 0, "n4": 0},
        raw={"n1": 0, "n2": 0, "n3": 0, "n4": 0},
    ),
    ScoreCase(
        "float truncation: thirds",
        make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=1),
        World(
            four_zones(),
            [web_pod("e1", "n1"), web_pod("e2", "n2"), web_pod("e3", "n2"), web_pod("e4", "n2")],
        ),
        {"n1": 33, "n2": 100, "n3": 0, "n4": 0},
        raw={"n1": 1, "n2": 3, "n3": 0, "n4": 0},
    ),
    ScoreCase(
        "a matching pod on a node without the key gives no points",
        make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=3),
        World(four_zones(), [web_pod("e1", "n4")]),
        "skip",
    ),
    ScoreCase(
        "preferred term namespaceSelector {} reaches every namespace",
        make_pod("p", "team-a").pod_affinity(
            "podAffinity", term(ZONE, {"app": "web"}, namespace_selector={}), weight=4
        ),
        World(four_zones(), [web_pod("e1", "n1", "team-b"), web_pod("e2", "n2", "team-a")]),
        {"n1": 100, "n2": 100, "n3": 0, "n4": 0},
    ),
    ScoreCase(
        "preferred term empty namespaces stay in the pod's namespace",
        make_pod("p", "team-a").pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=4),
        World(four_zones(), [web_pod("e1", "n1", "team-b"), web_pod("e2", "n2", "team-a")]),
        {"n1": 0, "n2": 100, "n3": 0, "n4": 0},
    ),
]


@pytest.mark.parametrize("case", SCORE_CASES, ids=[c.id for c in SCORE_CASES])
def test_score(case: ScoreCase) -> None:
    result = run_score(case.world.cluster(), case.pod.build(), case.args)
    if isinstance(case.want, str):
        assert result == case.want
        return
    assert not isinstance(result, str)
    raw, normalized = result
    assert normalized == case.want
    if case.raw is not None:
        assert raw == case.raw


def test_normalize_of_no_nodes_is_empty() -> None:
    world = World(four_zones(), [web_pod("e1", "n1")])
    cluster = world.cluster()
    pod = make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "web"}), weight=1).build()
    plugin = new_plugin(None)
    state = CycleState(cluster)
    assert plugin.pre_score(state, pod, cluster.node_order()).is_success
    empty = np.zeros(0, dtype=np.intp)
    assert plugin.normalize_scores(state, pod, empty, np.zeros(0, dtype=np.int64)).size == 0
