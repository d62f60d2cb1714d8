"""The simulator sees namespace labels and workload selectors when it is given them (as
`berth simulate --from-cluster` does): affinity namespaceSelectors match labelled namespaces, and
the system default topology spread keeps the pods of one Service apart."""

from __future__ import annotations

from berth.engine.cluster import Workload
from berth.engine.framework.runtime import build_framework
from berth.engine.model.node import Node
from berth.profiles import default_profile_config
from berth.scheduling.simulator import simulate
from tests.builders import make_node, make_pod


def _nodes(a_cpu: str = "4") -> list[Node]:
    return [
        make_node("a").capacity(cpu=a_cpu, memory="8Gi", pods=10).zone("zone-a").build(),
        make_node("b").capacity(cpu="4", memory="8Gi", pods=10).zone("zone-b").build(),
    ]


def test_namespace_selector_matches_the_labels_of_the_given_namespaces() -> None:
    anchor = make_pod("anchor", "other").labels(app="anchor").req(cpu="1").node("a").build()
    follower = (
        make_pod("follower")
        .pod_affinity(
            "podAffinity",
            {
                "labelSelector": {"matchLabels": {"app": "anchor"}},
                "namespaceSelector": {"matchLabels": {"team": "blue"}},
                "topologyKey": "kubernetes.io/hostname",
            },
        )
        .build()
    )
    framework = build_framework(default_profile_config())

    def place(namespaces: dict[str, dict[str, str]]) -> str | None:
        result = simulate(
            nodes=_nodes(),
            pods=[follower],
            existing=[anchor],
            default=framework,
            namespaces=namespaces,
        )
        return result.placements[0].node

    assert place({"other": {"team": "blue"}}) == "a"
    assert place({"other": {"team": "red"}}) is None


def test_pods_of_a_given_service_are_spread_by_the_system_defaults() -> None:
    web = make_pod("web-0").labels(app="web").req(cpu="100m").node("a").build()
    new = make_pod("web-1").labels(app="web").req(cpu="100m").build()
    service = Workload(
        kind="Service", namespace="default", name="web", map_selector=(("app", "web"),)
    )
    framework = build_framework(default_profile_config())
    placed = {
        simulate(
            nodes=_nodes(),
            pods=[new],
            existing=[web],
            default=framework,
            seed=seed,
            workloads=[service],
        )
        .placements[0]
        .node
        for seed in range(8)
    }
    assert placed == {"b"}
