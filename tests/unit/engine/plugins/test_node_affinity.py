"""NodeAffinity: nodeSelector AND required terms (ORed), addedAffinity, the metadata.name PreFilter
narrowing, preferred-term scoring, args, hints, and equality with the per-node reference."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.cluster import ClusterState
from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import Action, ClusterEvent, QueueingHint, Resource
from berth.engine.framework.status import Code
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.plugins.node_affinity import (
    REASON_CONFLICT,
    REASON_ENFORCED,
    REASON_POD,
    new_plugin,
)
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.engine.plugins.node_plugin_support import (
    PASS,
    Judgement,
    all_slots,
    cycle_over,
    judge,
    names_of,
)
from tests.unit.engine.plugins.node_strategies import LABEL_KEYS, LABEL_VALUES, raw_nodes
from tests.unit.engine.reference import node_affinity as reference

POD_FAIL: Judgement = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON_POD,))
ENFORCED_FAIL: Judgement = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON_ENFORCED,))
SKIPPED: dict[str, Judgement] = {"*": (Code.SKIP, ())}


def _nodes() -> CycleState:
    return cycle_over(
        make_node("a").labels(zone="z1", tier="web", cores="8").obj(),
        make_node("b").labels(zone="z2", tier="db", cores="16").obj(),
        make_node("c").labels(zone="z1", cores="abc").obj(),
    )


def _expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    expression: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        expression["values"] = list(values)
    return expression


def _term(*expressions: dict[str, Any], fields: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    term: dict[str, Any] = {}
    if expressions:
        term["matchExpressions"] = list(expressions)
    if fields:
        term["matchFields"] = list(fields)
    return term


def _name(operator: str, *names: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": operator, "values": list(names)}


def _required(*terms: dict[str, Any]) -> PodBuilder:
    return make_pod("p").required_node_terms(*terms)


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        (make_pod("p"), SKIPPED),
        (make_pod("p").node_selector(zone="z1"), {"a": PASS, "b": POD_FAIL, "c": PASS}),
        (
            make_pod("p").node_selector(zone="z1", tier="web"),
            {"a": PASS, "b": POD_FAIL, "c": POD_FAIL},
        ),
        (
            make_pod("p").node_selector(zone="nowhere"),
            {"a": POD_FAIL, "b": POD_FAIL, "c": POD_FAIL},
        ),
        (_required(_term(_expr("tier", "In", "web", "db"))), {"a": PASS, "b": PASS, "c": POD_FAIL}),
        (_required(_term(_expr("tier", "NotIn", "web"))), {"a": POD_FAIL, "b": PASS, "c": PASS}),
        (_required(_term(_expr("tier", "Exists"))), {"a": PASS, "b": PASS, "c": POD_FAIL}),
        (
            _required(_term(_expr("tier", "DoesNotExist"))),
            {"a": POD_FAIL, "b": POD_FAIL, "c": PASS},
        ),
        (_required(_term(_expr("cores", "Gt", "8"))), {"a": POD_FAIL, "b": PASS, "c": POD_FAIL}),
        (_required(_term(_expr("cores", "Lt", "10"))), {"a": PASS, "b": POD_FAIL, "c": POD_FAIL}),
        (_required(_term(_expr("tier", "Gt", "1"))), {"a": POD_FAIL, "b": POD_FAIL, "c": POD_FAIL}),
        (
            _required(_term(_expr("zone", "In", "z1"), _expr("tier", "Exists"))),
            {"a": PASS, "b": POD_FAIL, "c": POD_FAIL},
        ),
        (
            _required(_term(_expr("tier", "In", "db")), _term(_expr("cores", "In", "abc"))),
            {"a": POD_FAIL, "b": PASS, "c": PASS},
        ),
        (_required(_term()), {"a": POD_FAIL, "b": POD_FAIL, "c": POD_FAIL}),
        (_required(), {"a": POD_FAIL, "b": POD_FAIL, "c": POD_FAIL}),
        (
            _required(_term(_expr("zone", "Foo", "z1")), _term(_expr("tier", "In", "db"))),
            {"a": POD_FAIL, "b": PASS, "c": POD_FAIL},
        ),
        (
            _required(_term(_expr("tier", "In", "web"))).node_selector(zone="z2"),
            {"a": POD_FAIL, "b": POD_FAIL, "c": POD_FAIL},
        ),
        (
            _required(_term(fields=(_name("NotIn", "a"),))),
            {"a": POD_FAIL, "b": PASS, "c": PASS},
        ),
        (
            _required(_term(_expr("zone", "In", "z1"), fields=(_name("In", "c"),))),
            {"a": POD_FAIL, "b": POD_FAIL, "c": PASS},
        ),
    ],
    ids=[
        "nothing-skips",
        "node-selector",
        "node-selector-anded",
        "node-selector-unknown-value",
        "in",
        "notin-matches-missing-label",
        "exists",
        "doesnotexist",
        "gt-integer-only",
        "lt-integer-only",
        "gt-non-integer-label",
        "expressions-anded",
        "terms-ored",
        "empty-term-matches-nothing",
        "no-terms-matches-nothing",
        "invalid-term-never-matches",
        "selector-and-affinity",
        "match-fields-notin",
        "match-fields-and-labels",
    ],
)
def test_filter(pod: PodBuilder, expected: dict[str, Judgement]) -> None:
    assert judge(new_plugin(None), pod.build(), _nodes()) == expected


@pytest.mark.parametrize(
    ("terms", "names"),
    [
        ((_term(_expr("zone", "In", "z1")),), None),
        ((_term(fields=(_name("In", "a"),)),), frozenset({"a"})),
        ((_term(fields=(_name("In", "a"),)), _term(fields=(_name("In", "b"),))), frozenset("ab")),
        ((_term(fields=(_name("In", "a"),)), _term(_expr("zone", "In", "z1"))), None),
        ((_term(fields=(_name("In", "a"), _name("In", "a"))),), frozenset({"a"})),
        ((_term(fields=(_name("NotIn", "a"),)),), None),
        ((), None),
    ],
    ids=[
        "labels-only",
        "one-name",
        "union-of-terms",
        "a-term-without-names-allows-all",
        "same-name-twice",
        "notin-does-not-narrow",
        "no-terms",
    ],
)
def test_pre_filter_node_names(
    terms: tuple[dict[str, Any], ...], names: frozenset[str] | None
) -> None:
    result = new_plugin(None).pre_filter(_nodes(), _required(*terms).build())
    assert result.status.is_success
    assert result.node_names == names


def test_pre_filter_conflicting_names() -> None:
    pod = _required(_term(fields=(_name("In", "a"), _name("In", "b")))).build()
    result = new_plugin(None).pre_filter(_nodes(), pod)
    assert result.status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert result.status.reasons == (REASON_CONFLICT,)


ADDED = {
    "addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [_term(_expr("zone", "In", "z1"))]
        }
    }
}


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        (make_pod("p"), {"a": PASS, "b": ENFORCED_FAIL, "c": PASS}),
        (make_pod("p").node_selector(tier="web"), {"a": PASS, "b": ENFORCED_FAIL, "c": POD_FAIL}),
    ],
    ids=["added-only-no-skip", "added-checked-first"],
)
def test_added_affinity(pod: PodBuilder, expected: dict[str, Judgement]) -> None:
    assert judge(new_plugin(ADDED), pod.build(), _nodes()) == expected


def _scores(plugin: Any, pod: Pod, state: CycleState) -> dict[str, tuple[int, int]] | str:
    slots = all_slots(state)
    status = plugin.pre_score(state, pod, slots)
    if not status.is_success:
        return str(status.code.name)
    raw = plugin.score(state, pod, slots)
    normalized = plugin.normalize_scores(state, pod, slots, raw)
    return {
        n: (int(r), int(s)) for n, r, s in zip(names_of(state, slots), raw, normalized, strict=True)
    }


def test_score_sums_matching_weights_and_scales_to_max() -> None:
    pod = (
        make_pod("p")
        .preferred_node_term(20, _term(_expr("zone", "In", "z1")))
        .preferred_node_term(60, _term(_expr("tier", "Exists")))
        .preferred_node_term(0, _term(_expr("tier", "In", "db")))
        .preferred_node_term(50, _term())
        .build()
    )
    assert _scores(new_plugin(None), pod, _nodes()) == {
        "a": (80, 100),
        "b": (60, 75),
        "c": (20, 25),
    }


def test_score_all_zero_stays_zero_and_skip_without_terms() -> None:
    pod = make_pod("p").preferred_node_term(5, _term(_expr("zone", "In", "nowhere"))).build()
    assert _scores(new_plugin(None), pod, _nodes()) == {"a": (0, 0), "b": (0, 0), "c": (0, 0)}
    assert _scores(new_plugin(None), make_pod("p").build(), _nodes()) == "SKIP"


def test_score_invalid_preferred_term_is_an_error() -> None:
    pod = make_pod("p").preferred_node_term(5, _term(_expr("zone", "Foo", "x"))).build()
    assert _scores(new_plugin(None), pod, _nodes()) == "ERROR"


def test_score_adds_added_preferred_terms() -> None:
    plugin = new_plugin(
        {
            "addedAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "preference": _term(_expr("tier", "In", "db"))},
                    {"weight": 0, "preference": _term(_expr("tier", "In", "web"))},
                ]
            }
        }
    )
    assert _scores(plugin, make_pod("p").build(), _nodes()) == {
        "a": (0, 0),
        "b": (10, 100),
        "c": (0, 0),
    }


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"bogus": 1}, "bogus"),
        ({"addedAffinity": []}, "addedAffinity"),
        ({"addedAffinity": {"other": {}}}, "addedAffinity.other"),
        (
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [_term(_expr("zone", "Foo", "x"))]
                    }
                }
            },
            "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]",
        ),
        (
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "preference": _term(_expr("zone", "Gt", "x"))}
                    ]
                }
            },
            "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference",
        ),
        (
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": "1"}]
                }
            },
            "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
        ),
    ],
    ids=[
        "unknown-key",
        "added-not-object",
        "added-unknown-key",
        "bad-required",
        "bad-preferred",
        "bad-weight",
    ],
)
def test_invalid_args(args: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidPluginArgsError) as raised:
        new_plugin(args)
    assert raised.value.field == field
    assert raised.value.plugin == "NodeAffinity"


def test_default_args() -> None:
    plugin = new_plugin(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeAffinityArgs"}
    )
    assert plugin.args.added_required is None
    assert plugin.args.added_preferred == ()


@pytest.mark.parametrize(
    ("old_zone", "new_zone", "added", "hint"),
    [
        (None, "z1", False, QueueingHint.QUEUE),
        (None, "z2", False, QueueingHint.SKIP),
        ("z2", "z1", False, QueueingHint.QUEUE),
        ("z1", "z1", False, QueueingHint.SKIP),
        ("z1", "z2", False, QueueingHint.SKIP),
        (None, "z1", True, QueueingHint.SKIP),
    ],
    ids=[
        "add-matching",
        "add-other",
        "label-now-matches",
        "matched-before",
        "no-longer",
        "added-affinity-blocks",
    ],
)
def test_node_hint(old_zone: str | None, new_zone: str, added: bool, hint: QueueingHint) -> None:
    plugin = new_plugin(
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [_term(_expr("tier", "Exists"))]
                }
            }
        }
        if added
        else None
    )
    (registration,) = plugin.events_to_register()
    assert registration.event == ClusterEvent(Resource.NODE, Action.ADD | Action.UPDATE_NODE_LABEL)
    assert registration.hint is not None
    pod = make_pod("p").node_selector(zone="z1").build()
    old = None if old_zone is None else make_node("n").labels(zone=old_zone).build()
    new = make_node("n").labels(zone=new_zone).build()
    assert registration.hint(pod, old, new) is hint


# ---------------------------------------------------------------------- property test

expression_st = st.builds(
    lambda key, operator, values: _expr(key, operator, *values),
    st.sampled_from((*LABEL_KEYS, "missing")),
    st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")),
    st.lists(st.sampled_from(LABEL_VALUES), max_size=2, unique=True),
)  # malformed expressions included: their term never matches
field_st = st.builds(
    _name,
    st.sampled_from(("In", "NotIn")),
    st.sampled_from(("n0", "n1", "n5", "gone")),
)
term_st = st.builds(
    lambda expressions, fields: _term(*expressions, fields=tuple(fields)),
    st.lists(expression_st, max_size=3),
    st.lists(field_st, max_size=1),
)
valid_term_st = st.builds(
    lambda expressions: _term(*expressions),
    st.lists(
        expression_st.filter(lambda e: reference.expression_matches(e, {}) is not None),
        min_size=1,
        max_size=2,
    ),
)


@st.composite
def raw_affinity_pods(draw: st.DrawFn) -> dict[str, Any]:
    builder = make_pod("incoming")
    for key, value in draw(
        st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), max_size=2)
    ).items():
        builder.node_selector(**{key: value})
    if draw(st.booleans()):
        builder.required_node_terms(*draw(st.lists(term_st, max_size=3)))
    for weight, term in draw(st.lists(st.tuples(st.integers(0, 100), term_st), max_size=3)):
        builder.preferred_node_term(weight, term)
    return builder.obj()


@settings(max_examples=150, deadline=None)
@given(
    nodes=raw_nodes(max_size=10),
    pods=st.lists(raw_affinity_pods(), min_size=1, max_size=3),
    added=st.one_of(st.none(), st.lists(valid_term_st, min_size=1, max_size=2)),
)
def test_matches_reference(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]], added: list[dict[str, Any]] | None
) -> None:
    cluster = ClusterState(capacity=2)
    for raw in nodes:
        cluster.upsert_node(Node.from_dict(raw))
    added_required = None if added is None else {"nodeSelectorTerms": added}
    plugin = new_plugin(
        None
        if added_required is None
        else {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": added_required}}
    )
    for raw_pod in pods:
        state = CycleState(cluster)
        pod = Pod.from_dict(raw_pod)
        slots = all_slots(state)
        raw_by_name = {raw["metadata"]["name"]: raw for raw in nodes}
        ordered = [raw_by_name[name] for name in names_of(state, slots)]
        verdicts = plugin.filter(state, pod, slots)
        got = [verdicts.reasons_at(i)[0] if verdicts.codes[i] else None for i in range(slots.size)]
        assert got == [reference.passes(raw_pod, node, added_required) for node in ordered]
        pre_filter = plugin.pre_filter(state, pod)
        if pre_filter.node_names is not None:
            # Every node outside the narrowed set must fail the pod's own terms anyway.
            for name, verdict in zip(names_of(state, slots), got, strict=True):
                if name not in pre_filter.node_names:
                    assert verdict is not None
        if plugin.pre_score(state, pod, slots).is_success:
            scores = plugin.normalize_scores(state, pod, slots, plugin.score(state, pod, slots))
            assert scores.tolist() == reference.normalized_scores(raw_pod, ordered)
