"""NodeCost: its args, its scores (vectorised = a plain per-node reference), and the installed
package changing where Berth places pods."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.cluster import ClusterState
from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.runtime import build_framework
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.profiles import default_profile_config, load_profile, plugin_registry
from berth.scheduling.simulator import simulate
from berth_plugin_cost import DEFAULT_LABEL, NodeCost, NodeCostArgs, Normalization, parse_args
from berth_plugin_cost.plugin import UNKNOWN, parse_cost

PROFILE = Path(__file__).resolve().parents[1] / "profile.yaml"


def _node(name: str, cost: str | None = None, *, key: str = DEFAULT_LABEL) -> Node:
    labels = {"kubernetes.io/hostname": name}
    if cost is not None:
        labels[key] = cost
    capacity = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return Node.from_dict(
        {
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": capacity, "capacity": capacity},
        }
    )


def _pod(name: str, *, scheduler: str = "default-scheduler") -> Pod:
    return Pod.from_dict(
        {
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {
                "schedulerName": scheduler,
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}],
            },
        }
    )


def _scores(plugin: NodeCost, cluster: ClusterState) -> list[int]:
    """Normalised scores of every node, in slot order, as the framework would ask for them."""
    state = CycleState(cluster)
    slots = np.flatnonzero(cluster.live).astype(np.intp)
    pod = _pod("p")
    raw = plugin.score(state, pod, slots)
    return [int(score) for score in plugin.normalize_scores(state, pod, slots, raw)]


def _cluster(*nodes: Node) -> ClusterState:
    cluster = ClusterState()
    for node in nodes:
        cluster.upsert_node(node)
    return cluster


# ------------------------------------------------------------------ args


def test_args_default_to_the_example_label_and_proportional_scores() -> None:
    assert parse_args(None) == NodeCostArgs(DEFAULT_LABEL, None, Normalization.PROPORTIONAL)
    assert parse_args(
        {"labelKey": "cost", "defaultCost": 7, "normalization": "MinMax"}
    ) == NodeCostArgs("cost", 7, Normalization.MIN_MAX)


@pytest.mark.parametrize(
    ("args", "field", "problem"),
    [
        ({"labelKey": ""}, "labelKey", "must be a non-empty string, got ''"),
        ({"labelKey": "a/b/c"}, "labelKey", "must be a label key, got 'a/b/c'"),
        ({"defaultCost": -1}, "defaultCost", "must be an integer from 0 to"),
        ({"defaultCost": True}, "defaultCost", "must be an integer from 0 to"),
        ({"defaultCost": "5"}, "defaultCost", "must be an integer from 0 to"),
        (
            {"normalization": "Log"},
            "normalization",
            "must be one of Proportional, MinMax, got 'Log'",
        ),
        ({"label": "x"}, "label", "unknown field; NodeCost takes labelKey"),
    ],
    ids=["empty-key", "not-a-key", "negative", "bool", "string", "normalization", "unknown"],
)
def test_bad_args_are_refused_naming_the_field(
    args: dict[str, Any], field: str, problem: str
) -> None:
    with pytest.raises(InvalidPluginArgsError) as refused:
        parse_args(args)
    assert refused.value.field == field
    assert refused.value.problem.startswith(problem)


@pytest.mark.parametrize(
    ("value", "cost"),
    [
        ("0", 0),
        ("12", 12),
        ("007", 7),
        ("", UNKNOWN),
        ("-3", UNKNOWN),
        ("1.5", UNKNOWN),
        ("cheap", UNKNOWN),
        ("1" * 17, UNKNOWN),
    ],
    ids=["zero", "whole", "leading-zeros", "empty", "negative", "decimal", "word", "huge"],
)
def test_label_values_are_whole_numbers(value: str, cost: int) -> None:
    assert parse_cost(value) == cost


# ------------------------------------------------------------------ scores


@pytest.mark.parametrize(
    ("args", "costs", "expected"),
    [
        ({}, ["1", "9"], [89, 0]),
        ({}, ["0", "50", "100"], [100, 50, 0]),
        ({}, ["4", "4"], [0, 0]),
        ({"normalization": "MinMax"}, ["10", "15", "20"], [100, 50, 0]),
        ({"normalization": "MinMax"}, ["4", "4"], [100, 100]),
        ({}, ["1", None, "9"], [89, 0, 0]),  # unlabelled: as dear as the dearest
        ({"defaultCost": 0}, ["1", None, "10"], [90, 100, 0]),
        ({}, [None, "garbage"], [100, 100]),  # nothing known: all equal
    ],
    ids=[
        "proportional",
        "proportional-three",
        "all-equal",
        "min-max",
        "min-max-equal",
        "unlabelled-as-dearest",
        "unlabelled-default",
        "nothing-known",
    ],
)
def test_cheaper_nodes_score_higher(
    args: dict[str, Any], costs: list[str | None], expected: list[int]
) -> None:
    cluster = _cluster(*(_node(f"n{index}", cost) for index, cost in enumerate(costs)))
    assert _scores(NodeCost(parse_args(args)), cluster) == expected


def test_costs_follow_label_changes_and_new_values() -> None:
    plugin = NodeCost(parse_args({}))
    cluster = _cluster(_node("a", "10"), _node("b", "20"))
    assert _scores(plugin, cluster) == [50, 0]
    cluster.upsert_node(_node("b", "5"))  # a value the cluster has not seen before
    cluster.upsert_node(_node("c", "20"))
    assert _scores(plugin, cluster) == [50, 75, 0]


def _reference(costs: list[str | None], args: NodeCostArgs) -> list[int]:
    """Straight from the README, one node at a time."""
    known = [int(c) for c in costs if c is not None and c.isdigit() and int(c) <= 10**15]
    fallback = args.default_cost if args.default_cost is not None else max(known, default=0)
    values = [
        int(c) if c is not None and c.isdigit() and int(c) <= 10**15 else fallback for c in costs
    ]
    if args.normalization is Normalization.PROPORTIONAL:
        highest = max(values)
        return [100 if highest == 0 else 100 - (100 * v) // highest for v in values]
    low, high = min(values), max(values)
    return [100 if high == low else (100 * (high - v)) // (high - low) for v in values]


label_values = st.one_of(
    st.none(),
    st.integers(min_value=0, max_value=10**6).map(str),
    st.sampled_from(["", "-1", "x", "1.5", "9" * 17]),
)


@settings(max_examples=200, deadline=None)
@given(
    costs=st.lists(label_values, min_size=1, max_size=12),
    default_cost=st.one_of(st.none(), st.integers(min_value=0, max_value=10**6)),
    normalization=st.sampled_from(Normalization),
)
def test_vectorised_scores_equal_the_per_node_reference(
    costs: list[str | None], default_cost: int | None, normalization: Normalization
) -> None:
    args = NodeCostArgs(DEFAULT_LABEL, default_cost, normalization)
    cluster = _cluster(*(_node(f"n{index}", cost) for index, cost in enumerate(costs)))
    assert _scores(NodeCost(args), cluster) == _reference(costs, args)


# ------------------------------------------------------------------ installed, in a profile


def test_the_installed_package_places_pods_on_the_cheap_node() -> None:
    """The shipped profile, built with the plugins Berth finds installed: every pod goes to
    the cheap node, where the default profile spreads them."""
    registry = plugin_registry(announce=lambda _line: None)
    profile = load_profile(yaml.safe_load(PROFILE.read_text()), registry=registry)
    nodes = [_node("dear", "9"), _node("cheap", "1")]
    cheap = simulate(
        nodes=nodes,
        pods=[_pod(f"p{index}", scheduler="berth-cheap") for index in range(4)],
        profiles={profile.scheduler_name: profile.framework},
    )
    assert [placement.node for placement in cheap.placements] == ["cheap"] * 4
    spread = simulate(
        nodes=nodes,
        pods=[_pod(f"p{index}") for index in range(4)],
        default=build_framework(default_profile_config(), registry),
    )
    assert sorted(placement.node or "" for placement in spread.placements) == [
        "cheap",
        "cheap",
        "dear",
        "dear",
    ]
