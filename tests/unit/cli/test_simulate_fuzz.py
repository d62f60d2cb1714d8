"""Property: whatever bytes or YAML structures `berth simulate` is fed, it answers (exit 0) or refuses
with one line (exit 2); it never raises."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import make_node, make_pod
from tests.unit.cli.simulate_support import Outcome, simulate

NODE = make_node("a").capacity(cpu="2", memory="4Gi", pods=10).obj()
POD = (
    make_pod("p")
    .req(cpu="500m", memory="1Gi")
    .toleration("k", "v")
    .node_affinity_in("zone", "z1")
    .anti_affinity("kubernetes.io/hostname", app="web")
    .spread(max_skew=1, topology_key="zone", app="web")
    .obj()
)
PDB = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "b"},
    "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
}

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=12)
    | st.sampled_from(["1e30", "8Ei", "-1", "500m", "Always", "In", "NoSchedule", "50%", ""])
)
_values = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.text(max_size=8) | st.sampled_from(["name", "key"]), children, max_size=3
        )
    ),
    max_leaves=12,
)


def _paths(raw: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(raw, dict):
        for key, value in raw.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(raw, list):
        for index, value in enumerate(raw):
            found += _paths(value, (*prefix, index))
    return found


def _replaced(raw: dict[str, Any], path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    copied = copy.deepcopy(raw)
    target = copied
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return copied


def _run(nodes: bytes, pods: bytes, existing: bytes) -> Outcome:
    with tempfile.TemporaryDirectory() as directory:
        paths = []
        for name, content in (("nodes", nodes), ("pods", pods), ("existing", existing)):
            path = Path(directory) / f"{name}.yaml"
            path.write_bytes(content)
            paths.append(path)
        outcome = simulate("--nodes", paths[0], "--pods", paths[1], "--existing", paths[2])
    assert outcome.code in (0, 2), outcome
    if outcome.code == 2:
        assert outcome.out == ""
        assert outcome.err.count("\n") == 1 and len(outcome.err) < 1200, outcome.err
    return outcome


_FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_FUZZ
@given(st.binary(max_size=300), st.sampled_from(["nodes", "pods", "existing"]))
def test_random_bytes(content: bytes, where: str) -> None:
    files = {
        "nodes": yaml.safe_dump(NODE).encode(),
        "pods": yaml.safe_dump(POD).encode(),
        "existing": b"",
    }
    files[where] = content
    _run(files["nodes"], files["pods"], files["existing"])


@st.composite
def _mutated(draw: st.DrawFn) -> tuple[str, Any]:
    where, template = draw(st.sampled_from([("nodes", NODE), ("pods", POD), ("existing", PDB)]))
    path = draw(st.sampled_from(_paths(template)))
    return where, _replaced(template, path, draw(_values))


@_FUZZ
@given(st.lists(_mutated(), min_size=1, max_size=3))
def test_random_yaml_structures_in_valid_objects(mutations: list[tuple[str, Any]]) -> None:
    documents: dict[str, list[Any]] = {"nodes": [NODE], "pods": [POD], "existing": []}
    for where, document in mutations:
        documents[where].append(document)
    _run(*(yaml.safe_dump_all(documents[name]).encode() for name in ("nodes", "pods", "existing")))


_quantities = (
    st.from_regex(r"\A[+-]?[0-9]{0,22}(\.[0-9]{0,3})?([numkMGTPE]|[KMGTPE]i|e[+-]?[0-9]{1,2})?\Z")
    | st.integers(min_value=0, max_value=2**70)
    | st.floats(min_value=0)
)


@_FUZZ
@given(_quantities, _quantities, _quantities)
def test_random_quantities_in_nodes_and_pods(cpu: object, memory: object, request: object) -> None:
    node = make_node("a").capacity(pods=10).obj()
    node["status"]["allocatable"].update(cpu=cpu, memory=memory)
    pods = [make_pod(f"p{i}").obj() for i in range(2)]
    for pod, resource in zip(pods, ("cpu", "memory"), strict=True):
        pod["spec"]["containers"][0]["resources"] = {"requests": {resource: request}}
    _run(yaml.safe_dump(node).encode(), yaml.safe_dump_all(pods).encode(), b"")
