"""The extender protocol's JSON, checked against bodies captured from kube-scheduler v1.37.

tests/data/extender/ was written by `python -m tests.extender_capture`: the real
kube-scheduler called two test extenders (one sent full Node objects, one
nodeCacheCapable and sent names) while scheduling pods `plain`, `foo`, `victim`
and `preemptor`; `api-objects.json` holds the pods and nodes as the API server
returned them. Berth's encoding of those API objects must equal what
kube-scheduler sent, and Berth must read replies the way Go's decoder does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from berth.engine.extenders import (
    HostPriority,
    MetaVictims,
    Victims,
    WireError,
    decode_binding_result,
    decode_filter_result,
    decode_host_priority_list,
    decode_preemption_result,
    encode_binding_args,
    encode_extender_args,
    encode_preemption_args,
)

DATA = Path(__file__).parents[2] / "data" / "extender"


def _load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


OBJECTS = _load("api-objects.json")
NODES = {node["metadata"]["name"]: node for node in OBJECTS["nodes"]}


def _calls(extender: str, verb: str) -> list[dict[str, Any]]:
    return [call["body"] for call in _load(f"calls-{extender}.json") if call["verb"] == verb]


def _of_created_pods(bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The calls that carry a pod as created (api-objects.json has no later versions)."""
    return [
        body
        for body in bodies
        if body["Pod"]["metadata"]["resourceVersion"]
        == OBJECTS["pods"][body["Pod"]["metadata"]["name"]]["metadata"]["resourceVersion"]
    ]


def _sent_names(body: dict[str, Any]) -> list[str]:
    if body["NodeNames"] is not None:
        return list(body["NodeNames"])
    return [node["metadata"]["name"] for node in body["Nodes"]["items"]]


@pytest.mark.parametrize(
    ("extender", "verb", "node_cache_capable"),
    [
        ("full", "filter", False),
        ("full", "prioritize", False),
        ("cached", "filter", True),
        ("cached", "prioritize", True),
    ],
)
def test_extender_args_equal_kube_schedulers(
    extender: str, verb: str, node_cache_capable: bool
) -> None:
    captured = _of_created_pods(_calls(extender, verb))
    assert {body["Pod"]["metadata"]["name"] for body in captured} >= {"foo"}
    for body in captured:
        pod = OBJECTS["pods"][body["Pod"]["metadata"]["name"]]
        nodes = [NODES[name] for name in _sent_names(body)]
        encoded = encode_extender_args(pod=pod, nodes=nodes, node_cache_capable=node_cache_capable)
        assert encoded == body


def test_the_capture_shows_the_shapes_kube_scheduler_uses() -> None:
    """What the encoding above reproduces, spelt out: Go field names, null for the unused form."""
    (full, *_) = _calls("full", "filter")
    assert set(full) == {"Pod", "Nodes", "NodeNames"} and full["NodeNames"] is None
    assert set(full["Nodes"]) == {"metadata", "items"} and full["Nodes"]["metadata"] == {}
    assert "kind" not in full["Pod"] and "managedFields" not in full["Pod"]["metadata"]
    assert "kind" not in full["Nodes"]["items"][0]
    assert "managedFields" in full["Nodes"]["items"][0]["metadata"]  # nodes keep theirs
    (cached, *_) = _calls("cached", "filter")
    assert cached["Nodes"] is None and all(isinstance(n, str) for n in cached["NodeNames"])


def test_only_pods_requesting_a_managed_resource_reached_the_managing_extender() -> None:
    sent = {body["Pod"]["metadata"]["name"] for body in _calls("cached", "filter")}
    assert sent == {"foo", "preemptor"}
    assert {body["Pod"]["metadata"]["name"] for body in _calls("full", "filter")} == {
        "plain",
        "foo",
        "victim",
        "preemptor",
    }


def test_binding_args_equal_kube_schedulers() -> None:
    captured = _calls("full", "bind")
    assert len(captured) == 4
    for body in captured:
        pod = OBJECTS["pods"][body["PodName"]]["metadata"]
        encoded = encode_binding_args(
            namespace=pod["namespace"],
            name=pod["name"],
            uid=pod["uid"],
            node=OBJECTS["bound"][pod["name"]],
        )
        assert encoded == body


@pytest.mark.parametrize(("extender", "node_cache_capable"), [("full", False), ("cached", True)])
def test_preemption_args_equal_kube_schedulers(extender: str, node_cache_capable: bool) -> None:
    (body,) = _calls(extender, "preempt")
    preemptor = OBJECTS["pods"]["preemptor"]
    node = OBJECTS["bound"]["victim"]
    # The victim as kube-scheduler's informer held it (bound, so not its created version).
    (full_body,) = _calls("full", "preempt")
    victim = full_body["NodeNameToVictims"][node]["Pods"][0]
    encoded = encode_preemption_args(
        pod=preemptor,
        victims={node: Victims(pods=(victim,), num_pdb_violations=0)},
        node_cache_capable=node_cache_capable,
    )
    assert encoded == body
    if node_cache_capable:
        assert body["NodeNameToMetaVictims"][node]["Pods"] == [{"UID": victim["metadata"]["uid"]}]


# ------------------------------------------------------------------ reading replies


def test_filter_result_with_names_when_the_extender_caches_nodes() -> None:
    result = decode_filter_result(
        {
            "Nodes": None,
            "NodeNames": ["a", "b"],
            "FailedNodes": {"c": "no licence"},
            "FailedAndUnresolvableNodes": {"d": "wrong rack"},
            "Error": "",
        },
        node_cache_capable=True,
    )
    assert result.node_names == ("a", "b") and not result.from_node_objects
    assert result.failed == {"c": "no licence"}
    assert result.failed_and_unresolvable == {"d": "wrong rack"}


def test_filter_result_with_node_objects_when_it_does_not() -> None:
    node = {"metadata": {"name": "a"}, "status": {}}
    result = decode_filter_result(
        {"Nodes": {"items": [node]}, "NodeNames": ["ignored"]}, node_cache_capable=False
    )
    assert result.node_names == ("a",) and result.from_node_objects
    assert result.node_objects == (node,)


def test_a_caching_extender_may_answer_with_node_objects() -> None:
    result = decode_filter_result(
        {"Nodes": {"items": [{"metadata": {"name": "a"}}]}}, node_cache_capable=True
    )
    assert result.node_names == ("a",) and result.from_node_objects


def test_no_nodes_at_all_means_none_passed() -> None:
    result = decode_filter_result({"FailedNodes": {"a": "x"}}, node_cache_capable=True)
    assert result.node_names == () and not result.from_node_objects


def test_fields_match_case_insensitively_as_in_go() -> None:
    result = decode_filter_result(
        {"nodenames": ["a"], "failednodes": {"b": "r"}, "error": "boom"}, node_cache_capable=True
    )
    assert (result.node_names, dict(result.failed), result.error) == (("a",), {"b": "r"}, "boom")
    assert decode_host_priority_list([{"host": "a", "score": 3}]) == (HostPriority("a", 3),)
    assert decode_binding_result({"error": "nope"}) == "nope"


def test_host_priorities() -> None:
    assert decode_host_priority_list([{"Host": "a", "Score": 10}, {"Host": "b"}]) == (
        HostPriority("a", 10),
        HostPriority("b", 0),
    )
    assert decode_host_priority_list(None) == ()
    assert decode_host_priority_list([{"Host": "a", "Score": 4.0}]) == (HostPriority("a", 4),)


def test_binding_result() -> None:
    assert decode_binding_result({"Error": ""}) == ""
    assert decode_binding_result({}) == ""
    assert decode_binding_result(None) == ""


def test_preemption_result_by_uid() -> None:
    decoded = decode_preemption_result(
        {
            "NodeNameToMetaVictims": {
                "n": {"Pods": [{"UID": "u1"}, {"UID": "u2"}], "NumPDBViolations": 1}
            }
        }
    )
    assert decoded == {"n": MetaVictims(("u1", "u2"), 1)}
    assert decode_preemption_result({"NodeNameToMetaVictims": None}) == {}


@pytest.mark.parametrize(
    ("decode", "body"),
    [
        (lambda b: decode_filter_result(b, node_cache_capable=True), []),
        (lambda b: decode_filter_result(b, node_cache_capable=True), {"NodeNames": "a"}),
        (lambda b: decode_filter_result(b, node_cache_capable=True), {"FailedNodes": ["a"]}),
        (lambda b: decode_filter_result(b, node_cache_capable=True), {"Error": 5}),
        (lambda b: decode_filter_result(b, node_cache_capable=False), {"Nodes": {"items": [5]}}),
        (decode_host_priority_list, {"Host": "a"}),
        (decode_host_priority_list, [{"Host": "a", "Score": "10"}]),
        (decode_host_priority_list, [{"Host": "a", "Score": 1.5}]),
        (decode_binding_result, "bound"),
        (decode_preemption_result, {"NodeNameToMetaVictims": {"n": None}}),
        (decode_preemption_result, {"NodeNameToMetaVictims": {"n": {"Pods": {"UID": "u"}}}}),
    ],
    ids=[
        "filter-list",
        "names-string",
        "failed-list",
        "error-number",
        "node-number",
        "priorities-object",
        "score-string",
        "score-fraction",
        "binding-string",
        "null-victims",
        "pods-object",
    ],
)
def test_replies_of_the_wrong_shape_are_wire_errors(decode: Any, body: Any) -> None:
    with pytest.raises(WireError):
        decode(body)
