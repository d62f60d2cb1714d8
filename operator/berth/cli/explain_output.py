"""An explanation as people read it (a few short tables) and as tools read it (JSON).

Shared by `berth explain` and `berth simulate --explain`. Rejected nodes are shown grouped, so a
5,000-node cluster reads as a few lines; scores show the top N nodes, each scoring plugin's raw,
normalized and weighted score on its own row so that the table stays narrow.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from berth.cli.offline_input import whole_number
from berth.cli.simulate_output import printable
from berth.engine.explain import Explanation, PreemptionExplanation

__all__ = ["DEFAULT_TOP", "add_top_argument", "explanation_json", "explanation_table"]

DEFAULT_TOP = 5
SHOWN_CANDIDATES = 10


def add_top_argument(parser: argparse.ArgumentParser, *, help_prefix: str = "") -> None:
    parser.add_argument(
        "--top",
        type=whole_number(1),
        default=DEFAULT_TOP,
        help=f"{help_prefix}scored nodes to show (default: %(default)s)",
    )


def explanation_json(explanation: Explanation, *, top: int) -> dict[str, Any]:
    plugins = [name for name, _weight in explanation.score_plugins]
    return {
        "pod": explanation.pod,
        "profile": explanation.profile,
        "nodes": explanation.node_count,
        "evaluatedNodes": explanation.node_count,
        "schedulerSampleSize": explanation.sample_size,
        "feasibleNodes": explanation.feasible_count,
        "schedulable": explanation.feasible_count > 0 and not explanation.error,
        "message": explanation.message,
        "error": explanation.error,
        "rejections": [
            {
                "plugin": group.plugin,
                "code": group.code.label,
                "reasons": list(group.reasons),
                "nodes": group.count,
                "examples": list(group.examples),
            }
            for group in explanation.rejections
        ],
        "scorePlugins": [
            {"name": name, "weight": weight} for name, weight in explanation.score_plugins
        ],
        "ranking": [
            {
                "rank": rank,
                "node": score.node,
                "total": score.total,
                "plugins": {
                    name: {"raw": raw, "normalized": normalized, "weighted": weighted}
                    for name, raw, normalized, weighted in zip(
                        plugins, score.raw, score.normalized, score.weighted, strict=True
                    )
                },
            }
            for rank, score in enumerate(explanation.ranking[:top], start=1)
        ],
        "tieSet": list(explanation.tie_set),
        "nominatedNodeFits": explanation.nominated_fast_path,
        "preemption": _preemption_json(explanation.preemption),
        "notes": list(explanation.notes),
    }


def _preemption_json(preemption: PreemptionExplanation | None) -> dict[str, Any] | None:
    if preemption is None:
        return None
    return {
        "message": preemption.message,
        "nominatedNode": preemption.nominated_node,
        "victims": list(preemption.victims),
        "refusal": preemption.refusal,
        "potentialNodes": preemption.potential_nodes,
        "dryRunNodes": preemption.tried,
        "candidates": [
            {
                "node": candidate.node,
                "victims": list(candidate.victims),
                "pdbViolations": candidate.pdb_violations,
            }
            for candidate in preemption.candidates
        ],
    }


def _columns(rows: Sequence[Sequence[str]], *, right: Sequence[int] = ()) -> list[str]:
    """Rows as aligned columns, every cell one printable line."""
    cells = [[printable(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    lines = []
    for row in cells:
        parts = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  ".join(parts).rstrip())
    return lines


def explanation_table(explanation: Explanation, *, top: int) -> str:
    lines = [f"Pod {printable(explanation.pod)} (profile {printable(explanation.profile)})"]
    lines += [f"  note: {note}" for note in explanation.notes]
    if explanation.message:
        label = "error" if explanation.error else "FailedScheduling"
        lines.append(f"  {label}: {printable(explanation.message)}")
    lines += _rejections(explanation)
    lines += _scores(explanation, top=top)
    lines += _preemption(explanation.preemption)
    return "\n".join(lines)


def _rejections(explanation: Explanation) -> list[str]:
    if not explanation.rejections:
        return []
    rejected = sum(group.count for group in explanation.rejections)
    lines = ["", f"Filter: {rejected} of {explanation.node_count} nodes rejected"]
    rows = [("NODES", "PLUGIN", "CODE", "REASONS", "FOR EXAMPLE")]
    rows += [
        (
            str(group.count),
            group.plugin or "-",
            group.code.label,
            "; ".join(group.reasons),
            _examples(group.examples, group.count),
        )
        for group in explanation.rejections
    ]
    return lines + ["  " + line for line in _columns(rows, right=(0,))]


def _examples(examples: tuple[str, ...], count: int) -> str:
    if not examples:
        return "-"  # a PreFilter verdict or narrowing: no node was looked at on its own
    return ", ".join(examples) + (", ..." if count > len(examples) else "")


# A tie set can hold thousands of nodes; a table names a few (the JSON has them all).
TIE_SET_SHOWN = 10


def _listed(names: Sequence[str]) -> str:
    if len(names) <= TIE_SET_SHOWN:
        return ", ".join(names)
    return f"{', '.join(names[:TIE_SET_SHOWN])}, ... ({len(names)} nodes in all)"


def _scores(explanation: Explanation, *, top: int) -> list[str]:
    if not explanation.ranking:
        return []
    shown = explanation.ranking[:top]
    lines = [
        "",
        f"Score: {explanation.feasible_count} feasible node(s), top {len(shown)}; "
        f"the scheduler picks at random among: {_listed(explanation.tie_set)}",
        "  (plugins that skipped this pod at PreScore are left out)",
    ]
    rows = [("RANK", "NODE", "TOTAL", "PLUGIN", "RAW", "NORMALIZED", "WEIGHT", "WEIGHTED")]
    for rank, score in enumerate(shown, start=1):
        rows.append((str(rank), score.node, str(score.total), "", "", "", "", ""))
        for (name, weight), raw, normalized, weighted in zip(
            explanation.score_plugins, score.raw, score.normalized, score.weighted, strict=True
        ):
            rows.append(("", "", "", name, str(raw), str(normalized), str(weight), str(weighted)))
    return lines + ["  " + line for line in _columns(rows, right=(0, 2, 4, 5, 6, 7))]


def _preemption(preemption: PreemptionExplanation | None) -> list[str]:
    if preemption is None:
        return []
    lines = ["", f"PostFilter: {printable(preemption.message) or '(no message)'}"]
    if preemption.nominated_node:
        lines.append(
            f"  would nominate {preemption.nominated_node}, evicting: "
            + (", ".join(preemption.victims) or "nothing")
        )
    if preemption.refusal:
        lines.append(f"  the pod may not preempt: {preemption.refusal}")
    if preemption.potential_nodes:
        lines.append(
            f"  dry run on {preemption.tried} of {preemption.potential_nodes} node(s) where "
            f"evicting could help: {len(preemption.candidates)} candidate(s)"
        )
    if preemption.candidates:
        rows = [("NODE", "PDB VIOLATIONS", "VICTIMS")]
        rows += [
            (candidate.node, str(candidate.pdb_violations), ", ".join(candidate.victims))
            for candidate in preemption.candidates[:SHOWN_CANDIDATES]
        ]
        lines += ["  " + line for line in _columns(rows, right=(1,))]
        if len(preemption.candidates) > SHOWN_CANDIDATES:
            lines.append(f"  ... {len(preemption.candidates) - SHOWN_CANDIDATES} more")
    return lines
