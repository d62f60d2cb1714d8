"""The offline simulator refuses objects that would share one identity in the cluster, instead of
counting them once (three 1-CPU pods of one name were all placed on one 2-CPU node)."""

from __future__ import annotations

import pytest

from berth.engine.framework.runtime import build_framework
from berth.profiles import default_profile_config
from berth.scheduling.simulator import simulate
from tests.builders import make_node, make_pod


@pytest.mark.parametrize(
    ("nodes", "pods", "problem"),
    [
        (["a"], [("web", ""), ("web", "")], "pod namespace/names must be unique"),
        (["a"], [("web-0", "u"), ("web-1", "u")], "pod UIDs must be unique"),
        (["a", "a"], [("web", "")], "node names must be unique"),
    ],
    ids=["same-name", "same-uid", "same-node"],
)
def test_repeated_identities_are_refused(
    nodes: list[str], pods: list[tuple[str, str]], problem: str
) -> None:
    built = []
    for name, uid in pods:
        builder = make_pod(name).req(cpu="1")
        built.append((builder.uid(uid) if uid else builder).build())
    with pytest.raises(ValueError, match=problem):
        simulate(
            nodes=[make_node(n).capacity(cpu="2", pods=10).build() for n in nodes],
            pods=built,
            default=build_framework(default_profile_config()),
        )
