"""InterPodAffinity Filter: every branch and reason, table-driven."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from berth.engine.cluster.value_totals import TotalsFollower
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.status import Code
from berth.engine.plugins.inter_pod_affinity import (
    REASON_AFFINITY_RULES_NOT_MATCH as AFFINITY,
)
from berth.engine.plugins.inter_pod_affinity import (
    REASON_ANTI_AFFINITY_RULES_NOT_MATCH as ANTI,
)
from berth.engine.plugins.inter_pod_affinity import (
    REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH as EXISTING,
)
from berth.engine.plugins.inter_pod_affinity import new_plugin
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.engine.plugins.inter_pod_affinity_helpers import (
    HOST,
    UU,
    ZONE,
    U,
    World,
    run_filter,
    term,
    three_nodes,
    web_pod,
    zoned,
)

# ---------------------------------------------------------------------- filter


@dataclass
class FilterCase:
    id: str
    pod: PodBuilder
    world: World
    want: dict[str, tuple[Code, str] | None] | str


FILTER_CASES = [
    FilterCase(
        "no terms and nothing existing: skip",
        make_pod("p").labels(app="web"),
        World(three_nodes(), [web_pod("e1", "n1")]),
        "skip",
    ),
    FilterCase(
        "existing anti-affinity that does not match the pod: skip",
        make_pod("p").labels(app="db"),
        World(
            three_nodes(),
            [web_pod("e1", "n1").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}))],
        ),
        "skip",
    ),
    FilterCase(
        "existing anti-affinity whose node lacks the key is not counted: skip",
        make_pod("p").labels(app="web"),
        World(
            three_nodes(),
            [web_pod("e1", "n4").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}))],
        ),
        "skip",
    ),
    FilterCase(
        "affinity: only nodes in the matching pod's zone pass",
        make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "web"})),
        World(three_nodes(), [web_pod("e1", "n1"), make_pod("e2").labels(app="db").node("n3")]),
        {"n1": None, "n2": None, "n3": (UU, AFFINITY), "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "affinity: first pod passes on nodes carrying the key",
        make_pod("p").labels(app="web").pod_affinity("podAffinity", term(ZONE, {"app": "web"})),
        World(three_nodes(), [make_pod("e1").labels(app="db").node("n1")]),
        {"n1": None, "n2": None, "n3": None, "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "affinity: no first-pod exception when the pod does not match its own terms",
        make_pod("p").labels(app="db").pod_affinity("podAffinity", term(ZONE, {"app": "web"})),
        World(three_nodes(), []),
        {"n1": (UU, AFFINITY), "n2": (UU, AFFINITY), "n3": (UU, AFFINITY), "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "affinity: no first-pod exception once a matching pod exists elsewhere",
        make_pod("p").labels(app="web").pod_affinity("podAffinity", term(ZONE, {"app": "web"})),
        World(three_nodes(), [web_pod("e1", "n3")]),
        {"n1": (UU, AFFINITY), "n2": (UU, AFFINITY), "n3": None, "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "affinity: a matching pod on a node without the key leaves the first-pod rule on",
        make_pod("p").labels(app="web").pod_affinity("podAffinity", term(ZONE, {"app": "web"})),
        World(three_nodes(), [web_pod("e1", "n4")]),
        {"n1": None, "n2": None, "n3": None, "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "affinity: one pod must match every term",
        make_pod("p")
        .labels(app="other")
        .pod_affinity("podAffinity", term(ZONE, {"app": "web"}))
        .pod_affinity("podAffinity", term(ZONE, {"tier": "front"})),
        World(
            three_nodes(),
            [
                web_pod("e1", "n1"),
                make_pod("e2").labels(tier="front").node("n2"),
                web_pod("e3", "n3", tier="front"),
            ],
        ),
        {"n1": (UU, AFFINITY), "n2": (UU, AFFINITY), "n3": None, "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "affinity: every term's domain must hold a counting pod",
        make_pod("p")
        .pod_affinity("podAffinity", term(ZONE, {"app": "web"}))
        .pod_affinity("podAffinity", term(HOST, {"app": "web"})),
        World(three_nodes(), [web_pod("e1", "n1")]),
        {"n1": None, "n2": (UU, AFFINITY), "n3": (UU, AFFINITY), "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "affinity: a nil label selector matches no pod, not even the pod itself",
        make_pod("p").labels(app="web").pod_affinity("podAffinity", term(ZONE, nil_selector=True)),
        World(three_nodes(), [web_pod("e1", "n1")]),
        {"n1": (UU, AFFINITY), "n2": (UU, AFFINITY), "n3": (UU, AFFINITY), "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "affinity: terminating pods still count",
        make_pod("p").pod_affinity("podAffinity", term(ZONE, {"app": "web"})),
        World(three_nodes(), [web_pod("e1", "n3").terminating()]),
        {"n1": (UU, AFFINITY), "n2": (UU, AFFINITY), "n3": None, "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "anti-affinity: the matching pod's zone fails; nodes without the key pass",
        make_pod("p").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})),
        World(three_nodes(), [web_pod("e1", "n1"), web_pod("e2", "n4")]),
        {"n1": (U, ANTI), "n2": (U, ANTI), "n3": None, "n4": None},
    ),
    FilterCase(
        "anti-affinity: no matching pod anywhere, all pass",
        make_pod("p").pod_affinity("podAntiAffinity", term(HOST, {"app": "db"})),
        World(three_nodes(), [web_pod("e1", "n1")]),
        {"n1": None, "n2": None, "n3": None, "n4": None},
    ),
    FilterCase(
        "anti-affinity: a nil label selector never conflicts",
        make_pod("p").pod_affinity("podAntiAffinity", term(HOST, nil_selector=True)),
        World(three_nodes(), [web_pod("e1", "n1")]),
        {"n1": None, "n2": None, "n3": None, "n4": None},
    ),
    FilterCase(
        "symmetry: an existing pod's anti-affinity rejects its zone",
        make_pod("p").labels(app="web"),
        World(
            three_nodes(),
            [make_pod("e1").node("n3").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}))],
        ),
        {"n1": None, "n2": None, "n3": (U, EXISTING), "n4": None},
    ),
    FilterCase(
        "symmetry: hostname-scoped anti-affinity rejects only its node",
        make_pod("p").labels(app="web"),
        World(
            three_nodes(),
            [make_pod("e1").node("n2").pod_affinity("podAntiAffinity", term(HOST, {"app": "web"}))],
        ),
        {"n1": None, "n2": (U, EXISTING), "n3": None, "n4": None},
    ),
    FilterCase(
        "order: affinity is reported before anti-affinity and symmetry",
        make_pod("p")
        .labels(app="web")
        .pod_affinity("podAffinity", term(ZONE, {"app": "db"}))
        .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})),
        World(
            three_nodes(),
            [
                make_pod("db").labels(app="db").node("n1"),
                make_pod("w")
                .labels(app="web")
                .node("n3")
                .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})),
            ],
        ),
        {"n1": None, "n2": None, "n3": (UU, AFFINITY), "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "order: anti-affinity is reported before symmetry",
        make_pod("p").labels(app="web").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})),
        World(
            three_nodes(),
            [
                make_pod("w")
                .labels(app="web")
                .node("n3")
                .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})),
                make_pod("x")
                .node("n1")
                .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})),
            ],
        ),
        {"n1": (U, EXISTING), "n2": (U, EXISTING), "n3": (U, ANTI), "n4": None},
    ),
    FilterCase(
        "namespaces: empty namespaces mean the pod's own namespace",
        make_pod("p", "team-a").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})),
        World(three_nodes(), [web_pod("e1", "n1", "team-b"), web_pod("e2", "n3", "team-a")]),
        {"n1": None, "n2": None, "n3": (U, ANTI), "n4": None},
    ),
    FilterCase(
        "namespaces: namespaceSelector {} means every namespace",
        make_pod("p", "team-a").pod_affinity(
            "podAntiAffinity", term(ZONE, {"app": "web"}, namespace_selector={})
        ),
        World(three_nodes(), [web_pod("e1", "n1", "team-b"), web_pod("e2", "n3", "team-c")]),
        {"n1": (U, ANTI), "n2": (U, ANTI), "n3": (U, ANTI), "n4": None},
    ),
    FilterCase(
        "namespaces: listed namespaces replace the pod's own",
        make_pod("p", "team-a").pod_affinity(
            "podAntiAffinity", term(ZONE, {"app": "web"}, namespaces=["team-b"])
        ),
        World(three_nodes(), [web_pod("e1", "n1", "team-b"), web_pod("e2", "n3", "team-a")]),
        {"n1": (U, ANTI), "n2": (U, ANTI), "n3": None, "n4": None},
    ),
    FilterCase(
        "namespaces: namespaceSelector picks namespaces by their labels",
        make_pod("p", "team-a").pod_affinity(
            "podAffinity",
            term(ZONE, {"app": "web"}, namespace_selector={"matchLabels": {"env": "prod"}}),
        ),
        World(
            three_nodes(),
            [web_pod("e1", "n1", "team-b"), web_pod("e2", "n3", "team-c")],
            namespaces={"team-a": {}, "team-b": {"env": "dev"}, "team-c": {"env": "prod"}},
        ),
        {"n1": (UU, AFFINITY), "n2": (UU, AFFINITY), "n3": None, "n4": (UU, AFFINITY)},
    ),
    FilterCase(
        "symmetry: an existing term's namespaceSelector reads the incoming pod's namespace labels",
        make_pod("p", "team-a").labels(app="web"),
        World(
            three_nodes(),
            [
                make_pod("e1", "team-b")
                .node("n1")
                .pod_affinity(
                    "podAntiAffinity",
                    term(ZONE, {"app": "web"}, namespace_selector={"matchLabels": {"env": "prod"}}),
                )
            ],
            namespaces={"team-a": {"env": "prod"}, "team-b": {}},
        ),
        {"n1": (U, EXISTING), "n2": (U, EXISTING), "n3": None, "n4": None},
    ),
    FilterCase(
        "symmetry: an existing term's empty namespaces mean the existing pod's namespace",
        make_pod("p", "team-a").labels(app="web"),
        World(
            three_nodes(),
            [
                make_pod("e1", "team-b")
                .node("n1")
                .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}))
            ],
        ),
        "skip",
    ),
    FilterCase(
        "matchLabelKeys: only pods sharing the pod's value count",
        make_pod("p")
        .labels(app="web", version="v2")
        .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}, match_label_keys=["version"])),
        World(
            three_nodes(), [web_pod("e1", "n1", version="v1"), web_pod("e2", "n3", version="v2")]
        ),
        {"n1": None, "n2": None, "n3": (U, ANTI), "n4": None},
    ),
    FilterCase(
        "mismatchLabelKeys: only pods with another value count",
        make_pod("p")
        .labels(app="web", version="v2")
        .pod_affinity(
            "podAntiAffinity", term(ZONE, {"app": "web"}, mismatch_label_keys=["version"])
        ),
        World(
            three_nodes(), [web_pod("e1", "n1", version="v1"), web_pod("e2", "n3", version="v2")]
        ),
        {"n1": (U, ANTI), "n2": (U, ANTI), "n3": None, "n4": None},
    ),
]


@pytest.mark.parametrize("case", FILTER_CASES, ids=[c.id for c in FILTER_CASES])
def test_filter(case: FilterCase) -> None:
    assert run_filter(case.world.cluster(), case.pod.build()) == case.want


def test_filter_reads_cluster_changes_between_cycles() -> None:
    world = World(three_nodes(), [web_pod("e1", "n1").uid("e1")])
    cluster = world.cluster()
    pod = make_pod("p").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})).build()
    assert run_filter(cluster, pod) == {"n1": (U, ANTI), "n2": (U, ANTI), "n3": None, "n4": None}
    cluster.add_pod(web_pod("e1", "n3").uid("e1").build())
    assert run_filter(cluster, pod) == {"n1": None, "n2": None, "n3": (U, ANTI), "n4": None}


def test_filter_state_keeps_its_cycle_view_when_the_cluster_moves_on() -> None:
    # A nominated-pods re-check runs PreFilter again in a trial while the outer cycle's
    # state is still in use: that state must not follow the later changes.
    cluster = World(three_nodes(), [web_pod("e1", "n1")]).cluster()
    pod = make_pod("p").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})).build()
    plugin = new_plugin(None)
    earlier = CycleState(cluster)
    plugin.pre_filter(earlier, pod)
    cluster.add_pod(web_pod("e2", "n3").build())
    assert run_filter(cluster, pod, plugin) == {
        "n1": (U, ANTI),
        "n2": (U, ANTI),
        "n3": (U, ANTI),
        "n4": None,
    }
    slots = cluster.node_order()
    verdicts = plugin.filter(earlier, pod, slots)
    names = [cluster.node_at(slot).name for slot in slots.tolist()]
    codes = dict(zip(names, verdicts.codes.tolist(), strict=True))
    assert codes == {"n1": U, "n2": U, "n3": 0, "n4": 0}


def test_domain_emptied_over_several_cycles() -> None:
    cluster = World(three_nodes(), [web_pod("e1", "n1").uid("e1")]).cluster()
    pod = make_pod("p").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})).build()
    zone_a_taken = {"n1": (U, ANTI), "n2": (U, ANTI), "n3": None, "n4": None}
    assert run_filter(cluster, pod) == zone_a_taken
    cluster.add_pod(web_pod("e2", "n2").uid("e2").build())
    assert run_filter(cluster, pod) == zone_a_taken
    cluster.remove_pod("e1")
    assert run_filter(cluster, pod) == zone_a_taken
    cluster.remove_pod("e2")
    assert run_filter(cluster, pod) == dict.fromkeys(("n1", "n2", "n3", "n4"))


def test_many_pods_placed_between_cycles() -> None:
    nodes = [make_node(f"n{i:02d}").build() for i in range(80)]
    world = World(nodes, [web_pod("e0", "n00")])
    cluster = world.cluster()
    pod = make_pod("p").labels(app="web").pod_affinity("podAffinity", term(HOST, {"app": "web"}))
    pod = pod.pod_affinity("podAntiAffinity", term(HOST, {"app": "db"})).build()
    assert run_filter(cluster, pod) == run_filter(world.cluster(), pod)
    for index in range(1, 75):
        placed = web_pod(f"e{index}", f"n{index:02d}")
        world.pods.append(placed)
        cluster.add_pod(placed.build())
    cluster.add_pod(make_pod("d").labels(app="db").node("n01").build())
    world.pods.append(make_pod("d").labels(app="db").node("n01"))
    assert run_filter(cluster, pod) == run_filter(world.cluster(), pod)


def test_node_relabelled_between_cycles() -> None:
    world = World(three_nodes(), [web_pod("e1", "n1")])
    cluster = world.cluster()
    pod = make_pod("p").pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"})).build()
    assert run_filter(cluster, pod) == {"n1": (U, ANTI), "n2": (U, ANTI), "n3": None, "n4": None}
    cluster.upsert_node(zoned("n1", "b"))
    assert run_filter(cluster, pod) == {"n1": (U, ANTI), "n2": None, "n3": (U, ANTI), "n4": None}


def test_followed_folds_forget_everything_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TotalsFollower, "_MAX_ENTRIES", 1)
    cluster = World(three_nodes(), [web_pod("e1", "n1")]).cluster()
    pod = (
        make_pod("p")
        .pod_affinity("podAntiAffinity", term(ZONE, {"app": "web"}))
        .pod_affinity("podAntiAffinity", term(HOST, {"app": "web"}))
        .build()
    )
    for _ in range(2):
        assert run_filter(cluster, pod) == {
            "n1": (U, ANTI),
            "n2": (U, ANTI),
            "n3": None,
            "n4": None,
        }
