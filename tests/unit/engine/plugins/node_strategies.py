"""Hypothesis strategies for random nodes and pods that exercise labels, taints, tolerations, ports, images."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.builders import make_node, make_pod

LABEL_KEYS = ("zone", "tier", "gpu", "size")
LABEL_VALUES = ("a", "b", "c", "1", "7", "12", "-3", "+4", "x9", "")
TAINT_KEYS = ("dedicated", "gpu", "node.kubernetes.io/unschedulable", "spot")
TAINT_VALUES = ("", "yes", "no")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
IMAGES = ("nginx", "nginx:1.25", "redis:7", "busybox:1.36", "example.com:5000/app", "app@sha256:ab")

labels_st = st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), max_size=4)
taint_st = st.tuples(
    st.sampled_from(TAINT_KEYS), st.sampled_from(TAINT_VALUES), st.sampled_from(EFFECTS)
)
toleration_st = st.tuples(
    st.sampled_from(("", *TAINT_KEYS)),
    st.sampled_from(("Equal", "Exists")),
    st.sampled_from(TAINT_VALUES),
    st.sampled_from(("", *EFFECTS)),
).filter(lambda t: t[0] != "" or t[1] == "Exists")  # the API requires Exists with an empty key


@st.composite
def raw_nodes(draw: st.DrawFn, *, min_size: int = 1, max_size: int = 8) -> list[dict[str, Any]]:
    count = draw(st.integers(min_size, max_size))
    nodes = []
    for index in range(count):
        builder = make_node(f"n{index}")
        for key, value in draw(labels_st).items():
            builder.label(key, value)
        for key, value, effect in draw(st.lists(taint_st, max_size=3)):
            builder.taint(key, value, effect)
        builder.unschedulable(draw(st.booleans()))
        for image in draw(st.lists(st.sampled_from(IMAGES), max_size=3, unique=True)):
            builder.image(draw(st.integers(0, 3000)) * 1024 * 1024, image)
        nodes.append(builder.obj())
    return nodes


def with_tolerations(builder: Any, tolerations: list[tuple[str, str, str, str]]) -> Any:
    for key, operator, value, effect in tolerations:
        builder.toleration(key, operator, "" if operator == "Exists" else value, effect)
    return builder


tolerations_st = st.lists(toleration_st, max_size=3)
raw_pod_st = st.builds(
    lambda tolerations: with_tolerations(make_pod("incoming"), tolerations).obj(), tolerations_st
)
