"""Vectorised node-selector and taint checks equal the per-node model methods."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.cluster import ClusterState
from berth.engine.model.node import Node, TaintEffect
from berth.engine.model.pod import Pod
from berth.engine.nodematch import (
    matches_required_node_affinity,
    pod_has_node_requirements,
    untolerated_taint_mask,
)
from tests.builders import make_node, make_pod

OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]


def _cluster(raw_nodes: list[dict[str, Any]]) -> ClusterState:
    cluster = ClusterState(capacity=2)
    for raw in raw_nodes:
        cluster.upsert_node(Node.from_dict(raw))
    return cluster


@st.composite
def node_list(draw: st.DrawFn) -> list[dict[str, Any]]:
    result = []
    for index in range(draw(st.integers(1, 6))):
        builder = make_node(f"n{index}")
        for key in ("a", "b"):
            value = draw(st.sampled_from([None, "1", "5", "x", ""]))
            if value is not None:
                builder.label(key, value)
        for effect in draw(
            st.lists(st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule"]), max_size=2)
        ):
            builder.taint(
                draw(st.sampled_from(["t1", "t2"])), draw(st.sampled_from(["", "v"])), effect
            )
        result.append(builder.obj())
    return result


@st.composite
def expression(draw: st.DrawFn) -> dict[str, Any]:
    operator = draw(st.sampled_from(OPERATORS))
    raw: dict[str, Any] = {"key": draw(st.sampled_from(["a", "b", "c"])), "operator": operator}
    if operator in ("In", "NotIn"):
        raw["values"] = draw(st.lists(st.sampled_from(["1", "5", "x", "", "zz"]), min_size=1))
    elif operator in ("Gt", "Lt"):
        raw["values"] = [draw(st.sampled_from(["0", "3", "7", "bad"]))]
    return raw


@st.composite
def pods(draw: st.DrawFn) -> Pod:
    builder = make_pod("p")
    if draw(st.booleans()):
        builder.node_selector(
            **{draw(st.sampled_from(["a", "b"])): draw(st.sampled_from(["1", "x"]))}
        )
    if draw(st.booleans()):
        terms = []
        for _ in range(draw(st.integers(0, 3))):
            term: dict[str, Any] = {
                "matchExpressions": draw(st.lists(expression(), max_size=2)),
            }
            if draw(st.integers(0, 3)) == 0:
                term["matchFields"] = [
                    {
                        "key": "metadata.name",
                        "operator": draw(st.sampled_from(["In", "NotIn"])),
                        "values": [draw(st.sampled_from(["n0", "n1", "gone"]))],
                    }
                ]
            terms.append(term)
        builder.required_node_terms(*terms)
    for _ in range(draw(st.integers(0, 2))):
        builder.toleration(
            draw(st.sampled_from(["", "t1", "t2"])),
            draw(st.sampled_from(["Equal", "Exists"])),
            "",
            draw(st.sampled_from(["", "NoSchedule", "NoExecute"])),
        )
    return _with_valid_tolerations(builder.obj())


def _with_valid_tolerations(raw: dict[str, Any]) -> Pod:
    # An empty key with Equal is invalid in the API; make it Exists as the API would demand.
    for toleration in raw["spec"].get("tolerations", []):
        if not toleration["key"]:
            toleration["operator"] = "Exists"
    return Pod.from_dict(raw)


@settings(max_examples=200, deadline=None)
@given(node_list(), pods())
def test_node_affinity_mask_equals_model(raw_nodes: list[dict[str, Any]], pod: Pod) -> None:
    cluster = _cluster(raw_nodes)
    slots = cluster.node_order()
    got = matches_required_node_affinity(cluster, pod, slots)
    for index, slot in enumerate(slots.tolist()):
        node = cluster.node_at(slot)
        want = all(node.labels.get(k) == v for k, v in pod.node_selector.items()) and (
            pod.required_node_affinity is None
            or pod.required_node_affinity.matches(node.labels, node.name)
        )
        assert bool(got[index]) == want, node


@settings(max_examples=200, deadline=None)
@given(node_list(), pods())
def test_untolerated_taint_mask_equals_model(raw_nodes: list[dict[str, Any]], pod: Pod) -> None:
    cluster = _cluster(raw_nodes)
    slots = cluster.node_order()
    mask = untolerated_taint_mask(cluster, pod.tolerations, slots)
    got = np.zeros(slots.size, dtype=bool) if mask is None else mask
    for index, slot in enumerate(slots.tolist()):
        want = any(
            taint.effect in (TaintEffect.NO_SCHEDULE, TaintEffect.NO_EXECUTE)
            and not any(t.tolerates(taint) for t in pod.tolerations)
            for taint in cluster.node_at(slot).taints
        )
        assert bool(got[index]) == want


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        pytest.param(make_pod("p"), [True, True], id="no-requirements"),
        pytest.param(make_pod("p").node_selector(a="1"), [True, False], id="node-selector"),
        pytest.param(make_pod("p").node_selector(a="unseen"), [False, False], id="unknown-value"),
        pytest.param(make_pod("p").required_node_terms(), [False, False], id="no-terms"),
        pytest.param(make_pod("p").required_node_terms({}), [False, False], id="empty-term"),
        pytest.param(
            make_pod("p").node_affinity_in("a", "2", operator="Lt"), [True, False], id="lt"
        ),
    ],
)
def test_node_affinity_mask_cases(pod: Any, expected: list[bool]) -> None:
    cluster = _cluster([make_node("n0").label("a", "1").obj(), make_node("n1").obj()])
    slots = np.asarray([cluster.slot_of("n0"), cluster.slot_of("n1")], dtype=np.intp)
    assert matches_required_node_affinity(cluster, pod.build(), slots).tolist() == expected


def test_pod_has_node_requirements() -> None:
    assert not pod_has_node_requirements(make_pod("p").build())
    assert pod_has_node_requirements(make_pod("p").node_selector(a="1").build())
    assert pod_has_node_requirements(make_pod("p").required_node_terms().build())


@pytest.mark.parametrize(
    ("label", "operator", "bound", "expected"),
    [
        pytest.param("abc", "Gt", "1", False, id="non-integer-label"),
        pytest.param("", "Gt", "-1", False, id="empty-label"),
        pytest.param(None, "Lt", "1", False, id="missing-label"),
        pytest.param("007", "Gt", "6", True, id="leading-zeros"),
        pytest.param("+5", "Gt", "3", True, id="label-with-leading-plus-parses"),
        pytest.param("-3", "Lt", "0", True, id="negative-label"),
        pytest.param(" 5", "Gt", "3", False, id="label-with-space"),
        pytest.param("5 ", "Gt", "3", False, id="label-with-trailing-space"),
        pytest.param("1e3", "Gt", "3", False, id="label-in-exponent-form"),
        pytest.param("9223372036854775807", "Gt", "9223372036854775806", True, id="int64-max"),
        pytest.param("9223372036854775808", "Gt", "1", False, id="label-beyond-int64"),
        pytest.param("5", "Lt", "99999999999999999999", False, id="bound-beyond-int64"),
        # labels.NewRequirement wants every value to be a label value, so these terms are
        # parse errors and never match, although Go's ParseInt would accept the number.
        pytest.param("5", "Gt", "+3", False, id="bound-with-leading-plus"),
        pytest.param("5", "Gt", "-3", False, id="negative-bound"),
        pytest.param("5", "Gt", " 3", False, id="bound-with-space"),
        pytest.param("5", "Gt", "3", True, id="plain"),
        pytest.param("5", "Lt", "5", False, id="lt-is-strict"),
    ],
)
def test_gt_lt_parse_both_sides_as_go_int64(
    label: str | None, operator: str, bound: str, expected: bool
) -> None:
    """kube-scheduler v1.37 (apimachinery labels.Requirement): Gt/Lt parse the node's label and
    the single value with strconv.ParseInt(s, 10, 64); anything unparsable matches nothing."""
    node = make_node("n0")
    if label is not None:
        node.label("size", label)
    cluster = _cluster([node.obj()])
    pod = make_pod("p").node_affinity_in("size", bound, operator=operator).build()
    slots = cluster.node_order()
    assert matches_required_node_affinity(cluster, pod, slots).tolist() == [expected]
    assert pod.required_node_affinity is not None
    assert (
        pod.required_node_affinity.matches(cluster.node_at(int(slots[0])).labels, "n0") is expected
    )


def test_a_value_that_is_no_label_value_makes_the_term_match_nothing() -> None:
    """Even NotIn, which a node without the label would otherwise pass."""
    cluster = _cluster([make_node("n0").obj()])
    pod = make_pod("p").node_affinity_in("size", "not a label value", operator="NotIn").build()
    assert matches_required_node_affinity(cluster, pod, cluster.node_order()).tolist() == [False]
