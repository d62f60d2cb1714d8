"""Hypothesis strategies for the selector shapes inside a Pod spec: label selectors, node
selector terms with every operator, pod (anti-)affinity terms and topology spread constraints.

Each shape is legal per the API's validation (In/NotIn with values, Exists without, Gt/Lt with
one label-value that need not be an integer, empty selectors, ``namespaceSelector: {}``).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.unit.fuzz.strategies.api_values import (
    COMMON_KEYS,
    COMMON_VALUES,
    label_values,
    qualified_names,
)

_SET_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
# Gt/Lt values only have to be label values: "abc" and "1.5" are legal and never match.
_ORDER_VALUES = ("0", "1", "7", "007", "9223372036854775807", "99999999999999999999", "abc", "1.5")


def _keys() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(COMMON_KEYS), qualified_names())


def _values() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(COMMON_VALUES), label_values())


@st.composite
def requirements(draw: st.DrawFn, *, ordered: bool) -> dict[str, Any]:
    operators = (*_SET_OPERATORS, "Gt", "Lt") if ordered else _SET_OPERATORS
    operator = draw(st.sampled_from(operators))
    requirement: dict[str, Any] = {"key": draw(_keys()), "operator": operator}
    if operator in ("In", "NotIn"):
        requirement["values"] = draw(st.lists(_values(), min_size=1, max_size=3))
    elif operator in ("Gt", "Lt"):
        requirement["values"] = [draw(st.sampled_from(_ORDER_VALUES))]
    return requirement


@st.composite
def label_selectors(draw: st.DrawFn) -> dict[str, Any]:
    """``{}`` (everything) is as likely as a real selector."""
    selector: dict[str, Any] = {}
    if draw(st.booleans()):
        selector["matchLabels"] = draw(st.dictionaries(_keys(), _values(), max_size=2))
    if draw(st.booleans()):
        selector["matchExpressions"] = draw(st.lists(requirements(ordered=False), max_size=2))
    return selector


@st.composite
def node_selector_terms(draw: st.DrawFn, *, node_names: list[str]) -> dict[str, Any]:
    term: dict[str, Any] = {}
    if draw(st.booleans()):
        term["matchExpressions"] = draw(st.lists(requirements(ordered=True), max_size=3))
    if node_names and draw(st.integers(0, 3)) == 0:
        term["matchFields"] = [
            {
                "key": "metadata.name",
                "operator": draw(st.sampled_from(("In", "NotIn"))),
                "values": [draw(st.sampled_from(node_names))],
            }
        ]
    return term  # may be {}: legal, and it matches no node


@st.composite
def node_affinities(draw: st.DrawFn, *, node_names: list[str]) -> dict[str, Any]:
    affinity: dict[str, Any] = {}
    terms = node_selector_terms(node_names=node_names)
    if draw(st.booleans()):
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": draw(st.lists(terms, min_size=1, max_size=3))
        }
    if draw(st.booleans()):
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": draw(st.integers(1, 100)), "preference": draw(terms)}
            for _ in range(draw(st.integers(1, 3)))
        ]
    return affinity


@st.composite
def pod_affinity_terms(draw: st.DrawFn) -> dict[str, Any]:
    term: dict[str, Any] = {"topologyKey": draw(_keys())}
    selector = draw(st.one_of(st.none(), label_selectors()))
    if selector is not None:
        term["labelSelector"] = selector
        if draw(st.integers(0, 3)) == 0:
            # Keys may not repeat those of the selector's expressions; COMMON_KEYS[1] never does.
            term["matchLabelKeys"] = [COMMON_KEYS[1]]
    scope = draw(st.integers(0, 3))
    if scope == 1:
        term["namespaceSelector"] = {}  # every namespace
    elif scope == 2:
        term["namespaceSelector"] = draw(label_selectors())
    elif scope == 3:
        term["namespaces"] = draw(
            st.lists(st.sampled_from(("default", "kube-system", "x")), max_size=2)
        )
    return term


@st.composite
def pod_affinities(draw: st.DrawFn) -> dict[str, Any]:
    affinity: dict[str, Any] = {}
    if draw(st.booleans()):
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = draw(
            st.lists(pod_affinity_terms(), max_size=2)
        )
    if draw(st.booleans()):
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": draw(st.integers(1, 100)), "podAffinityTerm": draw(pod_affinity_terms())}
            for _ in range(draw(st.integers(1, 2)))
        ]
    return affinity


@st.composite
def spread_constraints(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Unique (topologyKey, whenUnsatisfiable) pairs; minDomains only with DoNotSchedule."""
    constraints: dict[tuple[str, str], dict[str, Any]] = {}
    for _ in range(draw(st.integers(0, 3))):
        key = draw(_keys())
        action = draw(st.sampled_from(("DoNotSchedule", "ScheduleAnyway")))
        constraint: dict[str, Any] = {
            "maxSkew": draw(st.one_of(st.integers(1, 3), st.just(2**31 - 1))),
            "topologyKey": key,
            "whenUnsatisfiable": action,
        }
        selector = draw(st.one_of(st.none(), label_selectors()))
        if selector is not None:
            constraint["labelSelector"] = selector
            if draw(st.integers(0, 3)) == 0:
                constraint["matchLabelKeys"] = [COMMON_KEYS[1]]
        if action == "DoNotSchedule" and draw(st.booleans()):
            constraint["minDomains"] = draw(st.one_of(st.integers(1, 5), st.just(2**31 - 1)))
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            if draw(st.booleans()):
                constraint[policy] = draw(st.sampled_from(("Honor", "Ignore")))
        constraints[(key, action)] = constraint
    return list(constraints.values())
