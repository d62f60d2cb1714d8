"""Hypothesis strategies for SchedulerProfile documents as the API server stores them.

Valid per the CRD's schema (schedulerName a DNS subdomain up to 253 characters, weights 1-100,
list sizes within maxItems), which leaves plenty the controller itself must check: unknown or
doubly listed plugins, ``disabled: [{name: "*"}]``, queueSort changes, and every plugin's args
from plausible to absurd.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from berth.engine.framework import names
from berth.engine.profile import ALL_POINTS
from tests.unit.fuzz.strategies.api_values import dns_subdomains
from tests.unit.fuzz.strategies.selectors import node_affinities

KNOWN_PLUGINS = tuple(
    value for key, value in vars(names).items() if key.isupper() and isinstance(value, str)
)
_PLUGIN_NAMES = st.one_of(st.sampled_from(KNOWN_PLUGINS), st.sampled_from(("*", "NoSuchPlugin")))
_RESOURCE_NAMES = st.sampled_from(("cpu", "memory", "example.com/gpu", "ephemeral-storage"))


@st.composite
def plugin_sets(draw: st.DrawFn) -> dict[str, Any]:
    plugin_set: dict[str, Any] = {}
    if draw(st.booleans()):
        enabled = []
        for name in draw(st.lists(_PLUGIN_NAMES, max_size=3)):
            entry: dict[str, Any] = {"name": name}
            if draw(st.booleans()):
                entry["weight"] = draw(st.integers(1, 100))
            enabled.append(entry)
        plugin_set["enabled"] = enabled
    if draw(st.booleans()):
        plugin_set["disabled"] = [
            {"name": name} for name in draw(st.lists(_PLUGIN_NAMES, max_size=3))
        ]
    return plugin_set


def _resource_specs(max_weight: int) -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(
        st.fixed_dictionaries(
            {"name": _RESOURCE_NAMES}, optional={"weight": st.integers(0, max_weight)}
        ),
        max_size=3,
    )


def _fit_args() -> st.SearchStrategy[dict[str, Any]]:
    shape = st.lists(
        st.fixed_dictionaries({"utilization": st.integers(-1, 101), "score": st.integers(-1, 11)}),
        max_size=4,
    )
    strategy = st.fixed_dictionaries(
        {"type": st.sampled_from(("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"))},
        optional={
            "resources": _resource_specs(101),
            "requestedToCapacityRatio": st.fixed_dictionaries({"shape": shape}),
        },
    )
    return st.fixed_dictionaries(
        {},
        optional={
            "scoringStrategy": strategy,
            "ignoredResources": st.lists(_RESOURCE_NAMES, max_size=2),
            "ignoredResourceGroups": st.lists(
                st.sampled_from(("example.com", "hugepages")), max_size=1
            ),
        },
    )


def _spread_args() -> st.SearchStrategy[dict[str, Any]]:
    constraint = st.fixed_dictionaries(
        {
            "maxSkew": st.integers(0, 3),
            "topologyKey": st.sampled_from(("zone", "kubernetes.io/hostname", "")),
            "whenUnsatisfiable": st.sampled_from(("DoNotSchedule", "ScheduleAnyway")),
        }
    )
    return st.fixed_dictionaries(
        {},
        optional={
            "defaultingType": st.sampled_from(("System", "List")),
            "defaultConstraints": st.lists(constraint, max_size=2),
        },
    )


@st.composite
def plugin_args(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    choices: dict[str, st.SearchStrategy[dict[str, Any]]] = {
        names.NODE_RESOURCES_FIT: _fit_args(),
        names.NODE_RESOURCES_BALANCED_ALLOCATION: st.fixed_dictionaries(
            {}, optional={"resources": _resource_specs(2)}
        ),
        names.INTER_POD_AFFINITY: st.fixed_dictionaries(
            {},
            optional={
                "hardPodAffinityWeight": st.integers(-1, 101),
                "ignorePreferredTermsOfExistingPods": st.booleans(),
            },
        ),
        names.POD_TOPOLOGY_SPREAD: _spread_args(),
        names.NODE_AFFINITY: st.fixed_dictionaries(
            {}, optional={"addedAffinity": node_affinities(node_names=["n1"])}
        ),
        names.DEFAULT_PREEMPTION: st.fixed_dictionaries(
            {},
            optional={
                "minCandidateNodesPercentage": st.integers(-1, 101),
                "minCandidateNodesAbsolute": st.integers(-1, 2**31 - 1),
            },
        ),
    }
    name = draw(st.sampled_from(sorted(choices)))
    return name, draw(choices[name])


@st.composite
def raw_profiles(draw: st.DrawFn, *, scheduler_name: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": scheduler_name if scheduler_name is not None else draw(dns_subdomains())
    }
    if draw(st.booleans()):
        spec["percentageOfNodesToScore"] = draw(st.integers(0, 100))
    if draw(st.booleans()):
        points = draw(st.lists(st.sampled_from(ALL_POINTS), unique=True, max_size=3))
        spec["plugins"] = {point: draw(plugin_sets()) for point in points}
    if draw(st.integers(0, 3)):
        configured = draw(st.lists(plugin_args(), max_size=3, unique_by=lambda item: item[0]))
        spec["pluginConfig"] = [{"name": name, "args": args} for name, args in configured]
    return {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {
            "name": draw(dns_subdomains()),
            "generation": draw(st.integers(1, 2**40)),
            "uid": "profile-uid",
        },
        "spec": spec,
    }
