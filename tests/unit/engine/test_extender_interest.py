"""Which pods an extender is sent, which resources NodeResourcesFit ignores, how scores count.

As kube-scheduler v1.37's HTTPExtender.IsInterested: an extender with no managed
resources sees every pod; otherwise only pods naming one of them in a container's
or init container's requests or limits (even at zero). Pod-level resources and
overhead do not count.
"""

from __future__ import annotations

import pytest

from berth.engine.extenders import (
    ExtenderConfig,
    ManagedResource,
    extended_resource_name_problem,
    ignored_by_scheduler,
    in_call_order,
    is_interested,
    scaled_extender_score,
)
from berth.engine.model.pod import Pod
from tests.builders import make_pod

GPU = "example.com/gpu"


def _managing(*names: str, ignored: bool = False) -> ExtenderConfig:
    return ExtenderConfig(
        url_prefix="http://x",
        managed_resources=tuple(ManagedResource(name, ignored) for name in names),
    )


@pytest.mark.parametrize(
    ("pod", "interested"),
    [
        (make_pod("p").req(cpu="1").build(), False),
        (make_pod("p").req(cpu="1", example_com__gpu=1).build(), True),
        (make_pod("p").req(cpu="1").req(1, example_com__gpu=1).build(), True),
        (make_pod("p").req(cpu="1").init_container(example_com__gpu=1).build(), True),
        (make_pod("p").req(cpu="1").init_container(sidecar=True, example_com__gpu=1).build(), True),
        (
            make_pod("p")
            .set("spec.containers", [{"name": "c", "resources": {"limits": {GPU: "1"}}}])
            .build(),
            True,
        ),
        (make_pod("p").req(cpu="1", example_com__gpu=0).build(), True),
        (make_pod("p").req(cpu="1").set("spec.overhead", {GPU: "1"}).build(), False),
        (make_pod("p").req(cpu="1", example_com__other=1).build(), False),
    ],
    ids=[
        "no-managed-resource",
        "container-request",
        "second-container",
        "init-container",
        "sidecar",
        "limit-only",
        "zero-request-still-names-it",
        "overhead-does-not-count",
        "another-extended-resource",
    ],
)
def test_interest_follows_managed_resources(pod: Pod, interested: bool) -> None:
    assert is_interested(_managing(GPU), pod) is interested


def test_an_extender_managing_nothing_sees_every_pod() -> None:
    assert is_interested(_managing(), make_pod("p").build())


def test_only_resources_ignored_by_scheduler_are_hidden_from_node_resources_fit() -> None:
    extenders = [
        _managing("example.com/a", "example.com/b", ignored=True),
        _managing("example.com/c"),
        _managing("example.com/d", ignored=True),
    ]
    assert ignored_by_scheduler(extenders) == {"example.com/a", "example.com/b", "example.com/d"}
    assert ignored_by_scheduler([]) == frozenset()


@pytest.mark.parametrize(
    ("score", "weight", "total"),
    [(0, 1, 0), (10, 1, 100), (7, 1, 70), (10, 5, 500), (3, 2, 60)],
)
def test_extender_scores_are_scaled_to_the_framework_range_and_weighted(
    score: int, weight: int, total: int
) -> None:
    assert scaled_extender_score(score, weight) == total


def test_ignorable_extenders_are_called_last() -> None:
    a, b, c = (
        ExtenderConfig(url_prefix="http://a", ignorable=True),
        ExtenderConfig(url_prefix="http://b"),
        ExtenderConfig(url_prefix="http://c"),
    )
    assert in_call_order((a, b, c)) == (b, c, a)


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("example.com/gpu", True),
        ("nvidia.com/gpu", True),
        ("cpu", False),
        ("hugepages-2Mi", False),
        ("kubernetes.io/gpu", False),
        ("foo.kubernetes.io/gpu", False),
        ("requests.example.com/gpu", False),
        ("example.com/", False),
        ("/gpu", False),
        ("example.com/" + "g" * 64, False),
    ],
)
def test_extended_resource_names(name: str, valid: bool) -> None:
    assert (extended_resource_name_problem(name) is None) is valid
