"""`berth simulate --output html`: one self-contained page a person can open, keep and mail.

The page carries its CSS and its chart (an inline SVG) and no script, so it renders the same from
a file, an attachment or an archive, with no network. Every string that came from the user's
files (names, messages, plugin reasons) is made printable and HTML-escaped before it is written:
a pod named `<script>` is text on the page, never markup.

The score tables of `berth explain` are a section of their own, rendered only when explanations
are passed in. They are read through the small `ExplainedPod` protocol below, which the engine's
explanation objects satisfy by their shape, so this module does not depend on how they are made.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import Protocol

from berth.cli.report_chart import MAX_NODE_ROWS, utilisation_svg
from berth.cli.simulate_output import node_usage, preemption_note, printable
from berth.scheduling.simulator import Placement, SimulationResult

__all__ = ["ExplainedPod", "RejectedNodes", "ScoredNode", "render_report"]

TOP_SCORED_NODES = 10

_STYLE = """
body { font-family: sans-serif; margin: 24px; color: #1f2937; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; } h3 { font-size: 15px; }
.summary { font-size: 15px; }
svg text { font-family: sans-serif; font-size: 11px; fill: #1f2937; }
svg text.heading { font-size: 13px; font-weight: bold; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #d1d5db; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f4f6; }
td.message { white-space: pre-wrap; max-width: 800px; }
td.number { text-align: right; }
tr.tie td { background: #ecfdf5; }
.note { color: #6b7280; font-size: 13px; }
.warning { color: #92400e; }
"""


class ScoredNode(Protocol):
    """A feasible node's scores, per scoring plugin in `ExplainedPod.score_plugins` order."""

    @property
    def node(self) -> str: ...
    @property
    def raw(self) -> Sequence[int]: ...
    @property
    def normalized(self) -> Sequence[int]: ...
    @property
    def weighted(self) -> Sequence[int]: ...
    @property
    def total(self) -> int: ...


class RejectedNodes(Protocol):
    """Nodes one filter plugin rejected for the same reasons."""

    @property
    def plugin(self) -> str: ...
    @property
    def reasons(self) -> Sequence[str]: ...
    @property
    def count(self) -> int: ...


class ExplainedPod(Protocol):
    """What the report shows of one `berth explain` answer."""

    @property
    def pod(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def score_plugins(self) -> Sequence[tuple[str, int]]: ...  # (plugin, weight)
    @property
    def ranking(self) -> Sequence[ScoredNode]: ...  # best first
    @property
    def tie_set(self) -> Sequence[str]: ...
    @property
    def rejections(self) -> Sequence[RejectedNodes]: ...


def _text(value: object, limit: int | None = None) -> str:
    return escape(printable(str(value), limit))


def _table(header: Sequence[str], rows: Iterable[str]) -> str:
    head = "".join(f"<th>{_text(cell)}</th>" for cell in header)
    return f"<table><thead><tr>{head}</tr></thead><tbody>\n" + "\n".join(rows) + "</tbody></table>"


def _pending_section(placements: Sequence[Placement]) -> str:
    pending = [p for p in placements if p.node is None]
    if not pending:
        return "<h2>Pending pods</h2>\n<p>Every pod was placed.</p>"
    rows = (
        f"<tr><td>{_text(p.pod.key)}</td><td class='message'>{_text(p.message)}</td>"
        f"<td>{_text(preemption_note(p))}</td></tr>"
        for p in pending
    )
    return f"<h2>Pending pods ({len(pending)})</h2>\n" + _table(
        ("Pod", "Why it is pending (FailedScheduling)", "Preemption"), rows
    )


def _placements_section(placements: Sequence[Placement]) -> str:
    rows = (
        f"<tr><td>{_text(p.pod.key)}</td><td>{_text(p.node or '')}</td></tr>" for p in placements
    )
    return (
        f"<details><summary>All {len(placements)} pods and their nodes</summary>\n"
        + _table(("Pod", "Node"), rows)
        + "</details>"
    )


def _chart_section(result: SimulationResult) -> str:
    usage = node_usage(result.cluster)
    note = (
        f"<p class='note'>The first {MAX_NODE_ROWS} nodes by name are shown one per row; the "
        f"other {len(usage) - MAX_NODE_ROWS} are summed in the last row.</p>"
        if len(usage) > MAX_NODE_ROWS
        else ""
    )
    return (
        "<h2>Node utilisation: requested of allocatable</h2>\n"
        "<p class='note'>After every placement; a red bar asks for more than the node offers.</p>"
        f"\n{note}\n<div class='chart'>{utilisation_svg(usage)}</div>"
    )


def _score_table(explained: ExplainedPod) -> str:
    plugins = list(explained.score_plugins)
    header = ["Node", *(f"{name} (weight {weight})" for name, weight in plugins), "Total"]
    ties = set(explained.tie_set)
    rows = []
    for scored in list(explained.ranking)[:TOP_SCORED_NODES]:
        cells = "".join(
            f"<td class='number' title='raw {raw}, normalized {normalized}'>{weighted}</td>"
            for raw, normalized, weighted in zip(
                scored.raw, scored.normalized, scored.weighted, strict=True
            )
        )
        tie = " class='tie'" if scored.node in ties else ""
        rows.append(
            f"<tr{tie}><td>{_text(scored.node)}</td>{cells}"
            f"<td class='number'><b>{scored.total}</b></td></tr>"
        )
    shown = min(len(explained.ranking), TOP_SCORED_NODES)
    note = (
        f"<p class='note'>Top {shown} of {len(explained.ranking)} feasible nodes; weighted "
        "scores (hover for raw and normalized); highlighted rows are the tie set the scheduler "
        "picks from.</p>"
    )
    return note + _table(header, rows)


def _explanation(explained: ExplainedPod) -> str:
    parts = [f"<h3>{_text(explained.pod)}</h3>"]
    if explained.message:
        parts.append(f"<p class='message'>{_text(explained.message)}</p>")
    if explained.rejections:
        items = "".join(
            f"<li>{group.count} node(s): {_text(group.plugin)}: "
            f"{_text('; '.join(group.reasons))}</li>"
            for group in explained.rejections
        )
        parts.append(f"<ul>{items}</ul>")
    if explained.ranking:
        parts.append(_score_table(explained))
    return "\n".join(parts)


def _explain_section(explanations: Sequence[ExplainedPod]) -> str:
    return "<h2>Scores (berth explain)</h2>\n" + "\n".join(map(_explanation, explanations))


def render_report(
    result: SimulationResult,
    *,
    explanations: Sequence[ExplainedPod] | None = None,
    warnings: Sequence[str] = (),
) -> str:
    """The whole HTML page for one simulation (and, when given, the explanations of its pods)."""
    placed = sum(1 for p in result.placements if p.node is not None)
    sections = [
        "<h1>Berth simulation report</h1>",
        f"<p class='summary'>{placed}/{len(result.placements)} pods placed on "
        f"{result.cluster.node_count} nodes; {len(result.placements) - placed} pending.</p>",
    ]
    if warnings:
        items = "".join(f"<li>{_text(warning)}</li>" for warning in warnings)
        sections.append(f"<h2>Warnings</h2>\n<ul class='warning'>{items}</ul>")
    sections += [
        _chart_section(result),
        _pending_section(result.placements),
        _placements_section(result.placements),
    ]
    if explanations:
        sections.append(_explain_section(explanations))
    body = "\n".join(sections)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        "<title>Berth simulation report</title>\n"
        f"<style>{_STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )
