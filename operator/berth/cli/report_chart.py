"""The utilisation chart of the HTML report: one inline SVG, a row of three bars per node.

An inline SVG needs no script, no font and no network, so the report is one file that any browser
shows as it was written. Each node gets one compact row (requested against allocatable for CPU,
memory and pods, as a share of the track), nodes in name order; a row for the whole cluster comes
first. Beyond `MAX_NODE_ROWS` nodes the rest are summed into one row, so a 5,000-node snapshot
stays a page a person can read; the page says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from berth.cli.simulate_output import NodeUsage, printable
from berth.engine.model.quantity import format_amount

__all__ = ["BAR_COLOURS", "CHART_RESOURCES", "MAX_NODE_ROWS", "OVER_COLOUR", "utilisation_svg"]

CHART_RESOURCES = ("cpu", "memory", "pods")
_TITLES = {"cpu": "CPU", "memory": "Memory", "pods": "Pods"}
BAR_COLOURS = {"cpu": "#3366cc", "memory": "#2ca25f", "pods": "#e6a100"}
OVER_COLOUR = "#d62728"  # more requested than allocatable (bound pods the input brought along)
_TRACK_COLOUR = "#e5e7eb"
MAX_NODE_ROWS = 100

_LABEL_WIDTH = 220
_BAR_WIDTH = 150
_COLUMN_WIDTH = 300
_ROW_HEIGHT = 22
_BAR_HEIGHT = 14
_HEADER_HEIGHT = 24
_LABEL_CHARS = 30
_AMOUNT_CHARS = 26


@dataclass(frozen=True, slots=True)
class ChartRow:
    label: str
    requested: dict[str, int]
    allocatable: dict[str, int]
    emphasis: bool = False


def _summed(label: str, nodes: Sequence[NodeUsage], *, emphasis: bool) -> ChartRow:
    requested = {r: sum(n.requested.get(r, 0) for n in nodes) for r in CHART_RESOURCES}
    allocatable = {r: sum(n.allocatable.get(r, 0) for n in nodes) for r in CHART_RESOURCES}
    return ChartRow(label, requested, allocatable, emphasis)


def chart_rows(usage: Sequence[NodeUsage]) -> list[ChartRow]:
    """The cluster total, then one row per node up to `MAX_NODE_ROWS`, then the rest summed."""
    rows = [_summed(f"all {len(usage)} nodes", usage, emphasis=True)]
    rows += [
        ChartRow(node.name, node.requested, node.allocatable) for node in usage[:MAX_NODE_ROWS]
    ]
    rest = usage[MAX_NODE_ROWS:]
    if rest:
        rows.append(_summed(f"{len(rest)} more nodes (summed)", rest, emphasis=True))
    return rows


def share_text(requested: int, allocatable: int) -> str:
    """ "60%", or "none allocatable" for a resource the node does not offer."""
    if allocatable <= 0:
        return "none allocatable" if requested else "0%"
    return f"{round(100 * requested / allocatable)}%"


def _bar(row: ChartRow, resource: str, *, x: int, y: int) -> str:
    requested = row.requested.get(resource, 0)
    allocatable = row.allocatable.get(resource, 0)
    share = requested / allocatable if allocatable > 0 else (1.0 if requested else 0.0)
    colour = OVER_COLOUR if requested > allocatable else BAR_COLOURS[resource]
    amounts = f"{format_amount(resource, requested)} / {format_amount(resource, allocatable)}"
    label = printable(f"{share_text(requested, allocatable)} · {amounts}", _AMOUNT_CHARS)
    tooltip = f"{row.label}: {_TITLES[resource]} requested {amounts}"
    fill_width = round(_BAR_WIDTH * min(share, 1.0))
    bar_y = y + (_ROW_HEIGHT - _BAR_HEIGHT) // 2
    parts = [
        f'<g class="bar {resource}"><title>{escape(printable(tooltip))}</title>',
        f'<rect x="{x}" y="{bar_y}" width="{_BAR_WIDTH}" height="{_BAR_HEIGHT}" '
        f'fill="{_TRACK_COLOUR}"/>',
    ]
    if fill_width:
        parts.append(
            f'<rect x="{x}" y="{bar_y}" width="{fill_width}" height="{_BAR_HEIGHT}" '
            f'fill="{colour}"/>'
        )
    parts.append(
        f'<text x="{x + _BAR_WIDTH + 6}" y="{y + _ROW_HEIGHT - 7}">{escape(label)}</text></g>'
    )
    return "".join(parts)


def utilisation_svg(usage: Sequence[NodeUsage]) -> str:
    """The chart for `usage` (nodes sorted by name), as an `<svg>` element."""
    rows = chart_rows(usage)
    width = _LABEL_WIDTH + _COLUMN_WIDTH * len(CHART_RESOURCES)
    height = _HEADER_HEIGHT + _ROW_HEIGHT * len(rows)
    lines = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="requested against allocatable '
        'per node">'
    ]
    for column, resource in enumerate(CHART_RESOURCES):
        x = _LABEL_WIDTH + column * _COLUMN_WIDTH
        lines.append(f'<text class="heading" x="{x}" y="16">{_TITLES[resource]}</text>')
    for index, row in enumerate(rows):
        y = _HEADER_HEIGHT + index * _ROW_HEIGHT
        if index % 2:
            lines.append(
                f'<rect x="0" y="{y}" width="{width}" height="{_ROW_HEIGHT}" fill="#f8fafc"/>'
            )
        weight = ' font-weight="bold"' if row.emphasis else ""
        label = escape(printable(row.label, _LABEL_CHARS))
        lines.append(
            f'<text x="4" y="{y + _ROW_HEIGHT - 7}"{weight}><title>{escape(printable(row.label))}'
            f"</title>{label}</text>"
        )
        for column, resource in enumerate(CHART_RESOURCES):
            lines.append(_bar(row, resource, x=_LABEL_WIDTH + column * _COLUMN_WIDTH, y=y))
    lines.append("</svg>")
    return "\n".join(lines)
