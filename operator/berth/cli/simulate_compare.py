"""What `berth simulate --compare` prints: the pods two profile sets place differently, and totals.

The first set is `--profile` (kube-scheduler's default profile without it), the second is
`--compare`; both runs read the same files with the same seed. The measures are defined in
`berth.scheduling.comparison`.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from berth.cli.simulate_input import SimulationInput
from berth.cli.simulate_output import printable
from berth.engine.framework.runtime import Framework
from berth.scheduling.comparison import (
    FRAGMENTATION_RESOURCES,
    Difference,
    Totals,
    differences,
    totals,
)
from berth.scheduling.simulator import ExtenderAnswers, Placement, SimulationResult, simulate

__all__ = ["FRAGMENTATION_HELP", "compare", "comparison_json", "comparison_table"]

FRAGMENTATION_HELP = (
    "fragmentation of cpu and memory = free amount on used nodes (running at least one pod) / "
    "free amount on all nodes, free being allocatable minus requested; 0 when all free capacity "
    "sits on empty nodes, 1 when all of it is scattered over used ones"
)


def _placement_json(placement: Placement) -> dict[str, Any]:
    return {"node": placement.node, "message": placement.message}


def _totals_json(label: str, measured: Totals) -> dict[str, Any]:
    return {
        "profiles": label,
        "nodesUsed": measured.nodes_used,
        "nodesEmpty": measured.nodes_empty,
        "podsPending": measured.pods_pending,
        "fragmentation": {name: round(share, 4) for name, share in measured.fragmentation.items()},
    }


def comparison_json(
    *,
    first: SimulationResult,
    second: SimulationResult,
    labels: tuple[str, str],
    warnings: list[str],
) -> dict[str, Any]:
    return {
        "differences": [
            {
                "namespace": diff.first.pod.namespace,
                "name": diff.first.pod.name,
                "profile": _placement_json(diff.first),
                "compare": _placement_json(diff.second),
            }
            for diff in differences(first, second)
        ],
        "totals": {
            "profile": _totals_json(labels[0], totals(first)),
            "compare": _totals_json(labels[1], totals(second)),
        },
        "warnings": warnings,
    }


def _node(placement: Placement) -> str:
    return printable(placement.node or "<pending>")


def _columns(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return [
        "  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[-1]])
        for row in rows
    ]


def _difference_rows(found: list[Difference]) -> list[tuple[str, ...]]:
    return [
        (printable(diff.first.pod.key), _node(diff.first), _node(diff.second)) for diff in found
    ]


def comparison_table(
    *, first: SimulationResult, second: SimulationResult, labels: tuple[str, str]
) -> str:
    shown = (printable(labels[0]), printable(labels[1]))
    found = differences(first, second)
    lines: list[str] = []
    if found:
        header = ("POD", f"NODE ({shown[0]})", f"NODE ({shown[1]})")
        lines += [*_columns([header, *_difference_rows(found)]), ""]
    lines.append(f"{len(found)}/{len(first.placements)} pods placed differently")
    lines.append("")
    measured = (totals(first), totals(second))
    rows: list[tuple[str, ...]] = [
        ("", shown[0], shown[1]),
        ("nodes used", *(str(m.nodes_used) for m in measured)),
        ("nodes left empty", *(str(m.nodes_empty) for m in measured)),
        ("pods pending", *(str(m.pods_pending) for m in measured)),
    ]
    rows += [
        (f"fragmentation {name}", *(f"{m.fragmentation[name]:.3f}" for m in measured))
        for name in FRAGMENTATION_RESOURCES
    ]
    lines += _columns(rows)
    return "\n".join(line.rstrip() for line in lines)


def compare(
    args: argparse.Namespace,
    inputs: SimulationInput,
    *,
    first: SimulationResult,
    second_profiles: dict[str, Framework],
    extenders: ExtenderAnswers | None = None,
) -> str:
    """Run `inputs` again under `second_profiles` with the seed of `first`; the text to print."""
    second = simulate(
        nodes=inputs.nodes,
        pods=inputs.pods,
        existing=inputs.existing,
        pdbs=inputs.pdbs,
        profiles=second_profiles,
        seed=args.seed,
        storage=inputs.storage,
        dra=inputs.dra,
        extenders=extenders,
    )
    labels = (str(args.profile or "default"), str(args.compare))
    if args.output == "json":
        document = comparison_json(
            first=first, second=second, labels=labels, warnings=inputs.warnings
        )
        return json.dumps(document, indent=2)
    return comparison_table(first=first, second=second, labels=labels)
