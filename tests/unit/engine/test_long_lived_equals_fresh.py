"""A ClusterState changed for a long time answers exactly like one built fresh from the same objects.

Berth keeps incremental per-node indexes (image holders, taint groups, per-value
totals, resource states, label columns...). A restart must never change a
placement: after every batch of node and pod adds, updates and deletes (nodes
deleted and re-created under the same name with other labels, taints, images
and capacity, as autoscaled pools do), every default plugin must give the
long-lived cluster and a fresh one the same verdicts and scores.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

from berth.engine.cluster import ClusterState
from tests.builders import make_node, make_pod
from tests.unit.engine.churn import Objects, answers, default_framework, history_st, probe_pods

PROBES = probe_pods()


def _check_against_fresh(history: list[list[tuple[Any, ...]]]) -> None:
    long_lived = ClusterState(capacity=2)
    framework = default_framework()
    objects = Objects()
    for step, batch in enumerate(history):
        for change in batch:
            objects.apply(change, long_lived)
        fresh = objects.fresh()
        fresh_framework = default_framework()
        for pod in PROBES:
            got = answers(framework, long_lived, pod)
            want = answers(fresh_framework, fresh, pod)
            for key in sorted(set(got) | set(want)):
                assert got.get(key) == want.get(key), (
                    f"step {step}, probe {pod.name}, {key}: long-lived {got.get(key)!r} "
                    f"!= fresh {want.get(key)!r}"
                )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history_st)
def test_long_lived_cluster_answers_like_a_fresh_one(history: list[list[tuple[Any, ...]]]) -> None:
    _check_against_fresh(history)


def test_image_size_comes_back_with_a_node_recreated_between_decisions() -> None:
    """The drift from the bug report: both holders of an image go and come back (other size)
    before the next decision; the image must score with the new size, as after a restart."""

    def node(name: str, size: int) -> dict[str, Any]:
        return make_node(name).image(size, "nginx:latest").obj()

    mib = 1024 * 1024
    _check_against_fresh(
        [
            [("node", "n0", node("n0", 30 * mib)), ("node", "n1", node("n1", 30 * mib))],
            [("node", "n2", make_node("n2").obj())],
            [
                ("delete-node", "n1"),
                ("node", "n0", node("n0", 900 * mib)),
            ],
        ]
    )


def test_taint_groups_start_over_after_many_taint_sets() -> None:
    """Taint sets no node uses any more pile up until the index starts over; answers stay."""
    history: list[list[tuple[Any, ...]]] = [[("node", "n1", make_node("n1").obj())]]
    for index in range(80):
        tainted = make_node("n0").taint(f"t{index}", "", "NoSchedule").taint("dedicated", "db")
        history.append([("node", "n0", tainted.obj())])
    _check_against_fresh(history)


def test_resource_states_start_over_after_many_states() -> None:
    """Every pod change can mint a resource state; past a bound the ids are handed out anew."""
    node = make_node("n0").capacity(cpu="64", memory="64Gi", pods=2000).obj()
    churn: list[tuple[Any, ...]] = []
    for index in range(1200):
        pod = make_pod(f"p{index}").uid(f"u{index % 7}").node("n0").req(cpu=f"{index + 1}m")
        churn.append(("pod", f"u{index % 7}", pod.obj()))
    _check_against_fresh([[("node", "n0", node), ("node", "n1", make_node("n1").obj())], churn])
