"""Offline measures: comparison totals (bound pods count as use; fragmentation by its formula) and the capacity bound."""

from __future__ import annotations

import pytest

from berth.engine.framework.runtime import build_framework
from berth.profiles import default_profile_config
from berth.scheduling.capacity import count_replicas
from berth.scheduling.comparison import totals
from berth.scheduling.simulator import Simulation, simulate
from tests.builders import make_node, make_pod


@pytest.mark.parametrize(
    ("bound_cpu", "expected_cpu"),
    [
        # a full, b half used, c empty: free on used 0+2 of 0+2+4.
        ({"a": "4", "b": "2"}, 2 / 6),
        # Only a runs something and it is full: every free unit is on an empty node.
        ({"a": "4"}, 0.0),
        # Everything full: nothing free, nothing stranded.
        ({"a": "4", "b": "4", "c": "4"}, 0.0),
        # All three half used: all free cpu is on used nodes.
        ({"a": "2", "b": "2", "c": "2"}, 1.0),
    ],
    ids=["full, half, empty", "full and two empty", "all full", "all half"],
)
def test_fragmentation_is_free_on_used_nodes_over_all_free(
    bound_cpu: dict[str, str], expected_cpu: float
) -> None:
    nodes = [make_node(name).capacity(cpu="4", memory="4Gi", pods=10).build() for name in "abc"]
    existing = [
        make_pod(f"on-{node}").req(cpu=cpu).node(node).build() for node, cpu in bound_cpu.items()
    ]
    result = simulate(
        nodes=nodes,
        pods=[make_pod("huge").req(cpu="100").build()],
        existing=existing,
        default=build_framework(default_profile_config()),
    )
    measured = totals(result)
    assert measured.fragmentation["cpu"] == pytest.approx(expected_cpu)
    assert measured.nodes_used == len(bound_cpu)
    assert measured.nodes_empty == 3 - len(bound_cpu)
    assert measured.pods_pending == 1
    # Memory: nothing requested, so free memory on used nodes over all = used nodes / nodes.
    assert measured.fragmentation["memory"] == pytest.approx(len(bound_cpu) / 3)


def test_a_simulation_refuses_a_pod_it_holds_already() -> None:
    simulation = Simulation(
        nodes=[make_node("a").build()],
        existing=[make_pod("web").node("a").build()],
        default=build_framework(default_profile_config()),
    )
    assert simulation.holds("default", "web")
    with pytest.raises(ValueError, match="already in the simulation"):
        simulation.place(make_pod("web").build())


def test_capacity_with_a_zero_bound_places_nothing() -> None:
    simulation = Simulation(
        nodes=[make_node("a").build()], default=build_framework(default_profile_config())
    )
    result = count_replicas(simulation, make_pod("web").build(), limit=0)
    assert (result.fit, result.per_node, result.limit_reached) == (0, {}, True)
    assert not simulation.holds("default", "web-1")
    with pytest.raises(ValueError, match="negative"):
        count_replicas(simulation, make_pod("web").build(), limit=-1)
