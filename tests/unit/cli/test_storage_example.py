"""The storage example (`examples/storage.yaml`, `examples/stateful-pods.yaml`) places pods where
their volumes can be, and the README shows exactly what `berth simulate` prints for it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import yaml

from tests.unit.cli.simulate_support import simulate

ROOT = Path(__file__).parents[3]
COMMAND = (
    "berth simulate --nodes examples/nodes.yaml --objects examples/storage.yaml "
    "--pods examples/stateful-pods.yaml --seed 1"
)


def _run(*extra: str) -> tuple[int, str, str]:
    argv = COMMAND.split()[2:]
    outcome = simulate(*(str(ROOT / a) if a.startswith("examples/") else a for a in argv), *extra)
    return outcome.code, outcome.out, outcome.err


def _zones() -> dict[str, str]:
    nodes = yaml.safe_load_all((ROOT / "examples/nodes.yaml").read_text())
    return {
        n["metadata"]["name"]: n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes
    }


def test_each_pod_goes_where_its_volume_is_or_can_be_made() -> None:
    code, out, err = _run("--output", "json")
    assert code == 0, err
    answer = yaml.safe_load(out)
    node = {pod["name"]: pod["node"] for pod in answer["pods"]}
    zone = _zones()
    # class `zonal` provisions in zone-b and zone-c only
    assert {zone[node[f"db-{i}"]] for i in range(3)} <= {"zone-b", "zone-c"}
    assert node["cache"] == "node-1"  # its local disk's node
    assert zone[node["archive-reader"]] == "zone-a"  # its pre-bound disk's zone
    assert node["reports"] is None
    (reports,) = [pod for pod in answer["pods"] if pod["name"] == "reports"]
    assert "2 node(s) didn't find available persistent volumes to bind" in reports["message"]


def test_the_readme_shows_what_the_command_prints() -> None:
    readme = (ROOT / "README.md").read_text()
    shown_command = f"  $ {COMMAND}\n"
    shown = readme[readme.index(shown_command) + len(shown_command) :].split("```", 1)[0]
    code, out, err = _run()
    assert code == 0, err
    # The README indents the block by two spaces (it sits in a list item), the closing fence too.
    assert shown == textwrap.indent(out, "  ") + "  "
