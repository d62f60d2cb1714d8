"""Regression tests for what the live-path fuzzing found, each on the example it shrank to.

Quantities beyond int64 (``8Ei`` of CPU is 2^63 cores, so far more millicores; or several
containers' memory summed) reached the node table's int64 columns as Python ints and raised
OverflowError out of the watch intake, and out of `acquire()` when such a pod was in the
start-up listing, so the scheduling loop never started. Amounts now follow kube-scheduler's own
int64 arithmetic (saturated at parse time, wrapped when summed; see engine/model/quantity_form.py
and the oracle comparison in tests/cluster/test_quantity_overflow.py), so they always fit. A container image of the wrong type
was refused under the field "image" instead of its container's path, and a deleted Node whose
metadata was not an object raised AttributeError out of the intake.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from berth.engine.errors import InvalidObjectError
from berth.engine.model.pod import Pod
from berth.engine.model.quantity_form import INT64_MAX
from berth.engine.model.resources import canonical_amount
from tests.unit.fuzz.live_path import PROFILES, LivePath, run_live
from tests.unit.fuzz.outcomes import Outcome, classify

INT64_MIN = -(2**63)


@pytest.mark.parametrize(
    ("name", "quantity"),
    [
        ("cpu", "8Ei"),
        ("cpu", "9223372036854775807"),
        ("memory", "9223372036854775808"),
        ("memory", "1E19"),
        ("example.com/gpu", 2**64),
    ],
    ids=["cpu-8Ei", "cpu-int64-max-cores", "memory-int64-max-plus-one", "memory-1E19", "gpu-2^64"],
)
def test_amounts_beyond_int64_still_fit_the_node_table(name: str, quantity: object) -> None:
    assert INT64_MIN <= canonical_amount(name, quantity) <= INT64_MAX


def test_summed_container_requests_still_fit_the_node_table() -> None:
    memory = {"resources": {"requests": {"memory": "7Ei"}}}
    pod = Pod.from_dict(
        {
            "metadata": {"name": "p", "uid": "u"},
            "spec": {
                "containers": [{"name": "a", **memory}, {"name": "b", **memory}],
                "overhead": {"memory": "7Ei"},
            },
        }
    )
    assert INT64_MIN <= pod.requests["memory"] <= INT64_MAX


def _node(name: str) -> dict[str, Any]:
    return {
        "kind": "Node",
        "metadata": {"name": name, "uid": name, "resourceVersion": "1"},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
    }


def _pod(uid: str, *, cpu: str, node_name: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": "berth",
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
    }
    if node_name:
        spec["nodeName"] = node_name
    return {
        "kind": "Pod",
        "metadata": {"name": uid, "namespace": "default", "uid": uid, "resourceVersion": "1"},
        "spec": spec,
        "status": {"phase": "Running" if node_name else "Pending"},
    }


def test_a_listed_pod_with_8Ei_of_cpu_does_not_stop_the_loop_from_starting() -> None:
    async def scenario(live: LivePath) -> dict[str, Outcome]:
        for profile in PROFILES:
            live.apply_profile(profile)
        live.listed("node", _node("n1"))
        live.listed("pod", _pod("resident", cpu="8Ei", node_name="n1"))
        live.listed("pod", _pod("pending", cpu="1"))
        await live.start()
        await live.settle()
        assert live.loop_running()
        return classify(live)

    outcomes = run_live(scenario)
    # kube-scheduler's int64 arithmetic: 8Ei saturates at 2^63-1 cores, whose MilliValue wraps
    # to -1000 millicores, so the resident frees CPU rather than filling n1 (canonical_amount).
    assert canonical_amount("cpu", "8Ei") == -1000
    assert outcomes == {"resident": Outcome.ASSIGNED, "pending": Outcome.BOUND}


def test_a_watched_pod_with_8Ei_of_cpu_is_taken_in() -> None:
    async def scenario(live: LivePath) -> dict[str, Outcome]:
        live.apply_profile(PROFILES[0])
        await live.start()
        live.node_event("ADDED", _node("n1"))
        live.pod_event("ADDED", _pod("huge", cpu="8Ei"))
        live.pod_event("ADDED", _pod("resident", cpu="8Ei", node_name="n1"))
        await live.settle()
        assert live.loop_running()
        return classify(live)

    # As kube-scheduler counts it, 8Ei of CPU is -1000 millicores: the pod fits (see above).
    assert run_live(scenario) == {"huge": Outcome.BOUND, "resident": Outcome.ASSIGNED}


@pytest.mark.parametrize(
    ("section", "field"),
    [
        ("containers", "spec.containers[1].image"),
        ("initContainers", "spec.initContainers[1].image"),
    ],
)
def test_an_image_of_the_wrong_type_is_refused_naming_its_container(
    section: str, field: str
) -> None:
    # Found as: broke spec.containers[2].image, error names image.
    raw = _pod("p", cpu="1")
    raw["spec"][section] = [{"name": "a", "image": "nginx"}, {"name": "b", "image": 7}]
    with pytest.raises(InvalidObjectError) as refused:
        Pod.from_dict(raw)
    assert refused.value.field == field


def test_a_deleted_node_without_readable_metadata_is_ignored_with_a_warning() -> None:
    # Found as: AttributeError: 'str' object has no attribute 'get' out of on_node_event.
    async def scenario(live: LivePath) -> list[str]:
        await live.start()
        live.app.on_node_event("DELETED", {"kind": "Node", "metadata": "x"})
        await live.settle()
        assert live.loop_running()
        return live.logs.messages(logging.WARNING)

    assert any("metadata.name" in message for message in run_live(scenario))
