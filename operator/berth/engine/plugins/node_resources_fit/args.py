"""`NodeResourcesFitArgs`: parsed, defaulted and validated as kube-scheduler v1.37 does.

Defaults (v1): no `scoringStrategy` means LeastAllocated over cpu and memory with
weight 1; an empty `resources` list means cpu and memory; a missing or zero weight
means 1. Validation then checks the strategy type, weights in (0, 100], the
RequestedToCapacityRatio shape, and that ignored names are valid label names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework import names
from berth.engine.framework.interfaces import PluginArgs
from berth.engine.model.labels import qualified_name_problem
from berth.engine.scoring.resource_specs import (
    DEFAULT_RESOURCE_SPECS,
    ResourceSpec,
    check_known_keys,
    parse_resource_specs,
)
from berth.engine.scoring.shape import ShapePoints, parse_shape

PLUGIN = names.NODE_RESOURCES_FIT
MAX_RESOURCE_WEIGHT = 100


class ScoringStrategyType(StrEnum):
    LEAST_ALLOCATED = "LeastAllocated"
    MOST_ALLOCATED = "MostAllocated"
    REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"


_STRATEGY_TYPES = {kind.value: kind for kind in ScoringStrategyType}


@dataclass(frozen=True, slots=True)
class ScoringStrategy:
    type: ScoringStrategyType = ScoringStrategyType.LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCE_SPECS
    # RequestedToCapacityRatio only: (utilization 0..100, score 0..10), utilization increasing
    shape: ShapePoints = ()


@dataclass(frozen=True, slots=True)
class NodeResourcesFitArgs:
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)
    ignored_resources: frozenset[str] = frozenset()
    ignored_resource_groups: frozenset[str] = frozenset()


def _fail(where: str, problem: str) -> InvalidPluginArgsError:
    return InvalidPluginArgsError(PLUGIN, where, problem)


def _as_list(raw: object, where: str) -> Sequence[object]:
    if raw is None:
        return ()
    if isinstance(raw, str | bytes) or not isinstance(raw, Sequence):
        raise _fail(where, f"expected a list, got {raw!r}")
    return raw


def _as_map(raw: object, where: str) -> Mapping[str, object]:
    if not isinstance(raw, Mapping):
        raise _fail(where, f"expected a map, got {raw!r}")
    return raw


def _parse_names(raw: object, where: str, *, groups: bool) -> frozenset[str]:
    parsed = []
    for index, item in enumerate(_as_list(raw, where)):
        at = f"{where}[{index}]"
        if not isinstance(item, str):
            raise _fail(at, f"expected a string, got {item!r}")
        if groups and "/" in item:
            raise _fail(at, f"Invalid value: {item!r}: resource group name can't contain '/'")
        problem = qualified_name_problem(item)
        if problem is not None:
            raise _fail(at, f"Invalid value: {item!r}: {problem}")
        parsed.append(item)
    return frozenset(parsed)


def _parse_strategy(raw: object) -> ScoringStrategy:
    where = "scoringStrategy"
    if raw is None:
        return ScoringStrategy()
    strategy = _as_map(raw, where)
    check_known_keys(
        strategy, {"type", "resources", "requestedToCapacityRatio"}, plugin=PLUGIN, field=where
    )
    raw_type = strategy.get("type") or ""
    kind = _STRATEGY_TYPES.get(raw_type) if isinstance(raw_type, str) else None
    if kind is None:
        supported = ", ".join(f'"{t.value}"' for t in ScoringStrategyType)
        raise _fail(
            f"{where}.type", f"Unsupported value: {raw_type!r}: supported values: {supported}"
        )
    resources = parse_resource_specs(
        strategy.get("resources"), plugin=PLUGIN, field=f"{where}.resources"
    )
    for index, spec in enumerate(resources):
        if not 0 < spec.weight <= MAX_RESOURCE_WEIGHT:
            raise _fail(
                f"{where}.resources[{index}].weight",
                f"Invalid value: {spec.weight}: resource weight of {spec.name} not in valid range "
                f"(0, {MAX_RESOURCE_WEIGHT}]",
            )
    ratio = strategy.get("requestedToCapacityRatio")
    ratio_where = f"{where}.requestedToCapacityRatio"
    shape: ShapePoints = ()
    if kind is ScoringStrategyType.REQUESTED_TO_CAPACITY_RATIO:
        if ratio is None:
            raise _fail(
                ratio_where,
                "Required value: must be specified when type is RequestedToCapacityRatio",
            )
        params = _as_map(ratio, ratio_where)
        check_known_keys(params, {"shape"}, plugin=PLUGIN, field=ratio_where)
        shape = parse_shape(params.get("shape"), plugin=PLUGIN, field=f"{ratio_where}.shape")
    elif ratio is not None:
        raise _fail(ratio_where, "Forbidden: must be nil when type is not RequestedToCapacityRatio")
    return ScoringStrategy(type=kind, resources=resources, shape=shape)


def parse_fit_args(args: PluginArgs | None) -> NodeResourcesFitArgs:
    """Defaulted, validated args; raises `InvalidPluginArgsError` naming the bad field."""
    if args is None:
        return NodeResourcesFitArgs()
    check_known_keys(
        args,
        {"apiVersion", "kind", "scoringStrategy", "ignoredResources", "ignoredResourceGroups"},
        plugin=PLUGIN,
        field="",
    )
    # Checked in kube-scheduler's order: ignored names, ignored groups, then the strategy.
    ignored = _parse_names(args.get("ignoredResources"), "ignoredResources", groups=False)
    groups = _parse_names(args.get("ignoredResourceGroups"), "ignoredResourceGroups", groups=True)
    return NodeResourcesFitArgs(
        scoring_strategy=_parse_strategy(args.get("scoringStrategy")),
        ignored_resources=ignored,
        ignored_resource_groups=groups,
    )
