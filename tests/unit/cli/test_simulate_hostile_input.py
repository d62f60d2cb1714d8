"""`berth simulate` on files a hostile user wrote: exit 2 with one short line, never a traceback,
bounded time and memory; quantities beyond 64 bits read as kube-scheduler reads them; a closed
or full stdout handled like a Unix tool."""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from berth.cli import input_files
from berth.cli.simulate_output import EXIT_BROKEN_PIPE, emit
from tests.builders import make_node, make_pod
from tests.unit.cli.simulate_support import Outcome, simulate, write


@pytest.fixture(autouse=True, params=["libyaml", "pure-python"])
def loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every case with both YAML loaders: libyaml's parser when PyYAML has it, and without."""
    if request.param == "pure-python":
        monkeypatch.setattr(input_files, "_Loader", input_files._PureLoader)
    elif not yaml.__with_libyaml__:
        pytest.skip("PyYAML without libyaml")
    return str(request.param)


@pytest.fixture
def nodes(tmp_path: Path) -> Path:
    return write(
        tmp_path / "nodes.yaml", make_node("a").capacity(cpu="2", memory="4Gi", pods=10).obj()
    )


def _refused(outcome: Outcome, expected: str) -> None:
    assert outcome.code == 2
    assert outcome.out == ""
    assert outcome.err.count("\n") == 1, outcome.err
    assert len(outcome.err) < 400
    assert expected in outcome.err


def _alias_bomb(levels: int, *, use_as: str) -> str:
    lines = [f"a0: &a0 [{', '.join(['x'] * 9)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels)]
    lines.append(f"kind: Pod\nmetadata: {{name: p}}\n{use_as}")
    return "\n".join(lines) + "\n"


def test_a_file_that_is_not_utf8(tmp_path: Path, nodes: Path) -> None:
    pods = tmp_path / "pods.yaml"
    pods.write_bytes(b"kind: Pod\nmetadata: {name: \xff\xfe}\n")
    _refused(
        simulate("--nodes", nodes, "--pods", pods),
        "pods.yaml: not UTF-8: line 2, column 18: byte 0xff",
    )


@pytest.mark.parametrize("style", ["flow", "block"])
def test_yaml_nested_hundreds_of_levels(tmp_path: Path, nodes: Path, style: str) -> None:
    pods = tmp_path / "pods.yaml"
    if style == "flow":
        pods.write_text("kind: Pod\nmetadata: " + "[" * 600 + "]" * 600 + "\n")
    else:
        pods.write_text("".join(f"{' ' * i}k:\n" for i in range(400)))
    _refused(simulate("--nodes", nodes, "--pods", pods), "nested deeper than 100 levels")


@pytest.mark.parametrize(
    "use_as",
    [
        "spec: {containers: [{name: c, resources: {requests: {cpu: *a6}}}]}",
        "spec: {nodeName: *a6}",
    ],
    ids=["as-quantity", "as-name"],
)
def test_alias_bomb_within_budget_is_quoted_briefly(
    tmp_path: Path, nodes: Path, use_as: str
) -> None:
    pods = tmp_path / "pods.yaml"
    pods.write_text(_alias_bomb(7, use_as=use_as))  # 9^7 = 4.8M strings if expanded
    _refused(simulate("--nodes", nodes, "--pods", pods), "aliases expand to more than")


def test_alias_bomb_small_enough_to_load_is_quoted_briefly(tmp_path: Path, nodes: Path) -> None:
    pods = tmp_path / "pods.yaml"
    use_as = "spec: {containers: [{name: c, resources: {requests: {cpu: *a4}}}]}"
    pods.write_text(_alias_bomb(5, use_as=use_as))  # 9^5 = 59049 strings: loads
    _refused(
        simulate("--nodes", nodes, "--pods", pods),
        "spec.containers[0].resources.requests.cpu: invalid quantity [[[",
    )


def test_recursive_alias(tmp_path: Path, nodes: Path) -> None:
    pods = tmp_path / "pods.yaml"
    pods.write_text("kind: Pod\nmetadata: &m {name: p, labels: *m}\n")
    _refused(simulate("--nodes", nodes, "--pods", pods), "recursive alias")


def test_an_integer_of_thousands_of_digits(tmp_path: Path, nodes: Path) -> None:
    pods = tmp_path / "pods.yaml"
    pods.write_text("kind: Pod\nmetadata: {name: p}\nspec: {priority: " + "9" * 5000 + "}\n")
    _refused(simulate("--nodes", nodes, "--pods", pods), "pods.yaml: not valid YAML")


def test_a_huge_name_is_cut_in_the_message(tmp_path: Path, nodes: Path) -> None:
    pods = write(
        tmp_path / "pods.yaml",
        make_pod("x" * 100_000).set("spec.tolerations", [{"effect": "Sometimes"}]).obj(),
    )
    _refused(simulate("--nodes", nodes, "--pods", pods), "unknown taint effect 'Sometimes'")


def test_quantities_beyond_int64_read_as_kube_scheduler_reads_them(tmp_path: Path) -> None:
    # 8Ei saturates at 2^63-1 bytes when parsed; 1e30 CPU reads as 0 millicores upstream,
    # so kube-scheduler places that pod anywhere: so does Berth.
    nodes = write(
        tmp_path / "nodes.yaml", make_node("big").capacity(cpu="2", memory="8Ei", pods=10).obj()
    )
    pods = write(
        tmp_path / "pods.yaml",
        make_pod("greedy").req(cpu="1e30").obj(),
        make_pod("huge").req(memory="8Ei").obj(),
    )
    outcome = simulate("--nodes", nodes, "--pods", pods, "--output", "json")
    assert outcome.code == 0, outcome.err
    result = outcome.json()
    assert [p["node"] for p in result["pods"]] == ["big", "big"]
    assert result["nodes"][0]["allocatable"]["memory"] == str(2**63 - 1)
    assert result["nodes"][0]["requested"] == {"memory": str(2**63 - 1), "pods": "2"}


def test_a_name_with_a_lone_surrogate_is_printed_escaped(
    tmp_path: Path, nodes: Path, loader: str
) -> None:
    pods = tmp_path / "pods.yaml"
    pods.write_text('kind: Pod\nmetadata: {name: "p\\ud800\\nq"}\n')
    outcome = simulate("--nodes", nodes, "--pods", pods)
    if loader == "libyaml":  # libyaml refuses the escape itself
        _refused(outcome, "line 2, column 22: found invalid Unicode character escape code")
        return
    assert outcome.code == 0, outcome.err
    assert "default/p\\ud800\\nq  a" in outcome.out


class _ClosedPipe:
    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    def fileno(self) -> int:
        raise OSError("no descriptor")


class _FullDisk(_ClosedPipe):
    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


def test_closed_and_full_stdout_give_unix_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert emit("x\n", _ClosedPipe()) == EXIT_BROKEN_PIPE == 141  # type: ignore[arg-type]
    errors = sys.stderr
    assert emit("x\n", _FullDisk(), errors=errors) == 1  # type: ignore[arg-type]
    assert capsys.readouterr().err == (
        "berth simulate: cannot write the result: No space left on device\n"
    )


def test_stdout_closed_early_by_head(tmp_path: Path) -> None:
    nodes = write(tmp_path / "nodes.yaml", *(make_node(f"n{i}").obj() for i in range(50)))
    pods = write(tmp_path / "pods.yaml", *(make_pod(f"pod-{i}").obj() for i in range(3000)))
    command = [sys.executable, "-m", "berth", "simulate", "--nodes", str(nodes), "--pods"]
    process = subprocess.Popen(
        [*command, str(pods)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline().startswith(b"POD")
    process.stdout.close()  # what `| head -1` does
    errors = process.stderr.read()
    assert process.wait(timeout=120) == 141
    assert errors == b""


def test_files_are_size_capped_and_unreadable_ones_named(
    tmp_path: Path, nodes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = write(tmp_path / "pods.yaml", *(make_pod(f"p{i}").obj() for i in range(50)))
    monkeypatch.setattr(input_files, "MAX_FILE_BYTES", 1024 * 1024 // 2)
    assert simulate("--nodes", nodes, "--pods", pods).code == 0
    monkeypatch.setattr(input_files, "MAX_FILE_BYTES", 1000)
    _refused(
        simulate("--nodes", nodes, "--pods", pods), "pods.yaml: larger than the limit of 1000 bytes"
    )
    _refused(simulate("--nodes", nodes, "--pods", tmp_path), f"{tmp_path}: cannot read: ")
