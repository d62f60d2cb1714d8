"""ImageLocality: size x spread per present image, clamped to [23 MiB, 1000 MiB x images], no normalisation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.engine.cluster import ClusterState
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.interfaces import NormalizeScorePlugin
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.plugins.image_locality import (
    image_priority,
    new_plugin,
    normalized_image_name,
    scaled_image_score,
)
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.engine.plugins.node_plugin_support import all_slots, cycle_over, names_of
from tests.unit.engine.plugins.node_strategies import IMAGES, raw_nodes
from tests.unit.engine.reference import image_locality as reference

MB = 1024 * 1024


def _scores(pod: Pod, state: CycleState) -> dict[str, int]:
    slots = all_slots(state)
    scores = new_plugin(None).score(state, pod, slots)
    return dict(zip(names_of(state, slots), scores.tolist(), strict=True))


@pytest.mark.parametrize(
    ("name", "normalized"),
    [
        ("nginx", "nginx:latest"),
        ("nginx:1.25", "nginx:1.25"),
        ("example.com:5000/app", "example.com:5000/app:latest"),
        ("example.com:5000/app:v1", "example.com:5000/app:v1"),
        ("app@sha256:abc", "app@sha256:abc"),
        ("", ":latest"),
    ],
    ids=["bare", "tagged", "registry-port-untagged", "registry-port-tagged", "digest", "empty"],
)
def test_normalized_image_name(name: str, normalized: str) -> None:
    assert normalized_image_name(name) == normalized


@pytest.mark.parametrize(
    ("sum_mb", "images", "score"),
    [
        (0, 1, 0),
        (23, 1, 0),
        (24, 1, 0),
        (500, 1, 48),
        (1000, 1, 100),
        (5000, 1, 100),
        (1000, 2, 49),
    ],
    ids=[
        "nothing",
        "at-min",
        "just-above-min",
        "half",
        "at-max",
        "over-max",
        "two-images-max-grows",
    ],
)
def test_image_priority(sum_mb: int, images: int, score: int) -> None:
    assert image_priority(np.asarray([sum_mb * MB], dtype=np.int64), images).tolist() == [score]


def test_scaled_image_score_truncates_float_product() -> None:
    assert scaled_image_score(100, 1, 3) == 33
    assert scaled_image_score(500 * MB, 2, 4) == 250 * MB


def test_scores_by_size_and_spread() -> None:
    state = cycle_over(
        make_node("big").image(800 * MB, "app:v1").obj(),
        make_node("small").image(100 * MB, "sidecar:v1").obj(),
        make_node("none").obj(),
        make_node("both").image(800 * MB, "app:v1").image(100 * MB, "sidecar:v1").obj(),
    )
    pod = make_pod("p").image("app:v1").container("sidecar:v1").build()
    # app: 800 MiB x 2/4 = 400 MiB; sidecar: 100 MiB x 2/4 = 50 MiB; max = 2000 MiB.
    assert _scores(pod, state) == {
        "big": 100 * (400 - 23) // (2000 - 23),
        "small": 100 * (50 - 23) // (2000 - 23),
        "none": 0,
        "both": 100 * (450 - 23) // (2000 - 23),
    }


@pytest.mark.parametrize(
    ("pod", "node_image", "score"),
    [
        (make_pod("p").image("nginx"), "nginx:latest", 100),
        (make_pod("p").image("nginx"), "nginx", 0),
        (make_pod("p").image("nginx:latest"), "nginx:latest", 100),
        (make_pod("p").image("other:v1").init_container(), "busybox:latest", 49),
        (
            make_pod("p")
            .image("busybox")
            .set("spec.volumes", [{"name": "v", "image": {"reference": "data:v1"}}]),
            "data:v1",
            49,
        ),
    ],
    ids=[
        "untagged-pod-matches-latest",
        "untagged-node-name-not-normalised",
        "explicit-latest",
        "init-container-image-counts",
        "image-volume-counts",
    ],
)
def test_which_images_count(pod: PodBuilder, node_image: str, score: int) -> None:
    state = cycle_over(make_node("n").image(1000 * MB, node_image).obj())
    assert _scores(pod.build(), state) == {"n": score}


def test_size_is_the_first_recorded_for_a_name() -> None:
    state = cycle_over(
        make_node("first").image(500 * MB, "app:v1").obj(),
        make_node("second").image(900 * MB, "app:v1").obj(),
    )
    pod = make_pod("p").image("app:v1").build()
    expected = 100 * (500 - 23) // (1000 - 23)
    assert _scores(pod, state) == {"first": expected, "second": expected}


def test_follows_node_changes_and_has_no_normalisation() -> None:
    state = cycle_over(make_node("a").image(1000 * MB, "app:v1").obj(), make_node("b").obj())
    pod = make_pod("p").image("app:v1").build()
    assert _scores(pod, state) == {"a": 48, "b": 0}
    state.cluster.upsert_node(Node.from_dict(make_node("b").image(1000 * MB, "app:v1").obj()))
    assert _scores(pod, state) == {"a": 100, "b": 100}
    state.cluster.remove_node("a")
    assert _scores(pod, state) == {"b": 100}
    assert not isinstance(new_plugin(None), NormalizeScorePlugin)


@st.composite
def raw_image_pods(draw: st.DrawFn) -> dict[str, Any]:
    images = draw(
        st.lists(st.sampled_from((*IMAGES, "nginx:latest", "redis")), min_size=1, max_size=3)
    )
    builder = make_pod("incoming").image(images[0])
    for image in images[1:]:
        builder.container(image)
    if draw(st.booleans()):
        builder.init_container()
    return builder.obj()


@settings(max_examples=150, deadline=None)
@given(nodes=raw_nodes(max_size=10), pods=st.lists(raw_image_pods(), min_size=1, max_size=3))
def test_matches_reference(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> None:
    cluster = ClusterState(capacity=2)
    for raw in nodes:
        cluster.upsert_node(Node.from_dict(raw))
    for raw_pod in pods:
        state = CycleState(cluster)
        slots = all_slots(state)
        by_name = {raw["metadata"]["name"]: raw for raw in nodes}
        scores = new_plugin(None).score(state, Pod.from_dict(raw_pod), slots)
        assert scores.tolist() == [
            reference.score(raw_pod, by_name[name], nodes) for name in names_of(state, slots)
        ]
