"""`berth simulate --output html`: the chart's numbers, pending pods, escaping, the explain section."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from berth.cli.report_chart import BAR_COLOURS, MAX_NODE_ROWS, OVER_COLOUR
from berth.cli.report_html import render_report
from berth.engine.framework.runtime import build_framework
from berth.profiles import default_profile_config, plugin_registry
from berth.scheduling.simulator import SimulationResult
from berth.scheduling.simulator import simulate as simulate_pods
from tests.builders import make_node, make_pod
from tests.unit.cli.simulate_support import simulate, write

JSON = dict[str, Any]


def _report(tmp_path: Path, *, nodes: list[JSON], pods: list[JSON], **files: list[JSON]) -> str:
    argv: list[str | Path] = [
        "--nodes",
        write(tmp_path / "nodes.yaml", *nodes),
        "--pods",
        write(tmp_path / "pods.yaml", *pods),
    ]
    for option, objects in files.items():
        argv += [f"--{option}", write(tmp_path / f"{option}.yaml", *objects)]
    outcome = simulate(*argv, "--output", "html")
    assert outcome.code == 0, outcome.err
    assert outcome.err == ""
    return outcome.out


def _bar_titles(page: str) -> list[str]:
    return re.findall(r'<g class="bar \w+"><title>([^<]*)</title>', page)


def test_each_node_gets_a_row_of_bars_in_name_order_with_its_share_and_amounts(
    tmp_path: Path,
) -> None:
    page = _report(
        tmp_path,
        nodes=[
            make_node("b").capacity(cpu="1", memory="4Gi", pods=10).obj(),
            make_node("a").capacity(cpu="2", memory="4Gi", pods=10).obj(),
        ],
        pods=[make_pod("web").req(cpu="1500m", memory="1Gi").obj()],
    )
    assert _bar_titles(page) == [
        "all 2 nodes: CPU requested 1500m / 3",
        "all 2 nodes: Memory requested 1Gi / 8Gi",
        "all 2 nodes: Pods requested 1 / 20",
        "a: CPU requested 1500m / 2",
        "a: Memory requested 1Gi / 4Gi",
        "a: Pods requested 1 / 10",
        "b: CPU requested 0 / 1",
        "b: Memory requested 0 / 4Gi",
        "b: Pods requested 0 / 10",
    ]
    assert "75% · 1500m / 2" in page  # node a's CPU
    assert "25% · 1Gi / 4Gi" in page
    # The bar is filled in proportion: 75% of the 150-pixel track.
    assert f'width="112" height="14" fill="{BAR_COLOURS["cpu"]}"' in page
    assert "1/1 pods placed on 2 nodes; 0 pending." in page
    assert "Every pod was placed." in page


def test_pending_pods_are_listed_with_their_failed_scheduling_message(tmp_path: Path) -> None:
    page = _report(
        tmp_path,
        nodes=[make_node("only").capacity(cpu="1", memory="4Gi", pods=10).obj()],
        pods=[make_pod("fits").req(cpu="600m").obj(), make_pod("big").req(cpu="600m").obj()],
    )
    assert "<h2>Pending pods (1)</h2>" in page
    row = re.search(r"<tr><td>default/big</td><td class='message'>([^<]*)</td>", page)
    assert row is not None
    assert row.group(1).startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert "<td>default/fits</td><td>only</td>" in page  # in the list of every placement


def test_a_pending_pod_that_preemption_nominated_shows_where_and_whom_it_evicts(
    tmp_path: Path,
) -> None:
    page = _report(
        tmp_path,
        nodes=[make_node("n1").capacity(cpu="1", memory="1Gi", pods=10).obj()],
        pods=[make_pod("urgent").req(cpu="1").priority(100).obj()],
        existing=[make_pod("cache").node("n1").req(cpu="1").obj()],
    )
    assert "<td>nominated to n1, evicting: default/cache</td></tr>" in page


def test_a_node_asked_for_more_than_it_offers_is_drawn_in_red(tmp_path: Path) -> None:
    page = _report(
        tmp_path,
        nodes=[make_node("n").capacity(cpu="1", memory="4Gi", pods=10).obj()],
        pods=[make_pod("p").obj()],
        existing=[make_pod("hog").req(cpu="2").node("n").obj()],
    )
    assert f'width="150" height="14" fill="{OVER_COLOUR}"' in page
    assert "200% · 2 / 1" in page


def test_every_user_string_is_escaped_and_the_page_needs_no_script_or_network(
    tmp_path: Path,
) -> None:
    hostile = "<script>alert(1)</script>"
    page = _report(
        tmp_path,
        nodes=[make_node(f"n{hostile}").capacity(cpu="1", memory="4Gi", pods=10).obj()],
        pods=[
            make_pod(f"x{hostile}", namespace="ns'\"&").req(cpu="2").obj(),
            make_pod("placed").obj(),
        ],
    )
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "ns&#x27;&quot;&amp;/x&lt;script&gt;" in page
    # Self-contained: no scripts, no fetched resources, only the SVG namespace as a URL.
    assert not re.search(r"\b(src|href)\s*=", page)
    assert re.findall(r"https?://[^\s\"']+", page) == ["http://www.w3.org/2000/svg"]


def test_beyond_the_row_limit_the_remaining_nodes_are_summed_in_one_row(tmp_path: Path) -> None:
    nodes = [
        make_node(f"node-{i:03d}").capacity(cpu="1", memory="1Gi", pods=10).obj()
        for i in range(MAX_NODE_ROWS + 3)
    ]
    page = _report(tmp_path, nodes=nodes, pods=[make_pod("p").obj()])
    cpu_titles = [title for title in _bar_titles(page) if ": CPU" in title]
    assert len(cpu_titles) == 1 + MAX_NODE_ROWS + 1
    assert cpu_titles[1].startswith("node-000:")
    assert cpu_titles[-2].startswith(f"node-{MAX_NODE_ROWS - 1:03d}:")
    assert cpu_titles[-1] == "3 more nodes (summed): CPU requested 0 / 3"
    assert "the other 3 are summed in the last row" in page


def test_output_file_takes_the_page_and_a_file_that_cannot_be_written_is_one_line(
    tmp_path: Path,
) -> None:
    nodes = write(tmp_path / "nodes.yaml", make_node("a").obj())
    pods = write(tmp_path / "pods.yaml", make_pod("p").obj())
    target = tmp_path / "report.html"
    outcome = simulate(
        "--nodes", nodes, "--pods", pods, "--output", "html", "--output-file", target
    )
    assert (outcome.code, outcome.out, outcome.err) == (0, "", "")
    assert target.read_text().startswith("<!DOCTYPE html>")

    missing = tmp_path / "no-such-dir" / "report.html"
    outcome = simulate(
        "--nodes", nodes, "--pods", pods, "--output", "html", "--output-file", missing
    )
    assert outcome.code == 1
    assert outcome.out == ""
    assert outcome.err == (f"berth simulate: cannot write {missing}: No such file or directory\n")


@dataclass(frozen=True)
class _Scored:
    node: str
    raw: tuple[int, ...]
    normalized: tuple[int, ...]
    weighted: tuple[int, ...]
    total: int


@dataclass(frozen=True)
class _Rejected:
    plugin: str
    reasons: tuple[str, ...]
    count: int


@dataclass(frozen=True)
class _Explained:
    pod: str
    message: str
    score_plugins: tuple[tuple[str, int], ...]
    ranking: tuple[_Scored, ...]
    tie_set: tuple[str, ...]
    rejections: tuple[_Rejected, ...]


def _small_result() -> SimulationResult:
    framework = build_framework(default_profile_config(), plugin_registry())
    return simulate_pods(
        nodes=[make_node("a").build()], pods=[make_pod("p").build()], default=framework
    )


def test_the_score_table_is_a_section_of_its_own_only_when_explanations_are_given() -> None:
    result = _small_result()
    assert "Scores (berth explain)" not in render_report(result)

    explained = _Explained(
        pod="default/p",
        message="",
        score_plugins=(("NodeResourcesFit", 1), ("ImageLocality", 2)),
        ranking=(
            _Scored("<b>a</b>", raw=(80, 0), normalized=(80, 0), weighted=(80, 0), total=80),
            _Scored("c", raw=(80, 0), normalized=(80, 0), weighted=(80, 0), total=80),
            _Scored("d", raw=(50, 10), normalized=(50, 100), weighted=(50, 200), total=250),
        ),
        tie_set=("<b>a</b>", "c"),
        rejections=(_Rejected("TaintToleration", ("node(s) had untolerated taint(s)",), 2),),
    )
    page = render_report(result, explanations=[explained])
    section = page[page.index("<h2>Scores (berth explain)</h2>") :]
    assert "<th>NodeResourcesFit (weight 1)</th><th>ImageLocality (weight 2)</th>" in section
    assert "<tr class='tie'><td>&lt;b&gt;a&lt;/b&gt;</td>" in section
    assert "<tr><td>d</td>" in section
    assert "title='raw 10, normalized 100'>200</td>" in section
    assert "<li>2 node(s): TaintToleration: node(s) had untolerated taint(s)</li>" in section
