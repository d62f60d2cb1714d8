"""NodeCost's args, validated once when a profile is built: every refusal names its field.

Keys are camelCase, like kube-scheduler's plugin args in a KubeSchedulerConfiguration:

    labelKey:      the node label holding a node's cost (default example.berth.dev/cost)
    defaultCost:   the cost of a node without a readable cost label (default: as dear as the
                   dearest candidate node, so unlabelled nodes are never preferred)
    normalization: Proportional (default; score 100 - 100 x cost / highest cost) or MinMax
                   (the cheapest candidate scores 100, the dearest 0, linear in between)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from berth.engine.errors import InvalidPluginArgsError, shown

NAME = "NodeCost"
DEFAULT_LABEL = "example.berth.dev/cost"
# Costs are integers; the cap keeps 100 x cost far inside int64.
MAX_COST = 10**15
_MAX_LABEL_KEY_LENGTH = 317  # a 253-character prefix, "/", a 63-character name


class Normalization(Enum):
    PROPORTIONAL = "Proportional"
    MIN_MAX = "MinMax"


@dataclass(frozen=True, slots=True)
class NodeCostArgs:
    label_key: str = DEFAULT_LABEL
    default_cost: int | None = None  # None: as dear as the dearest candidate node
    normalization: Normalization = Normalization.PROPORTIONAL


def _refuse(field: str, problem: str) -> InvalidPluginArgsError:
    return InvalidPluginArgsError(NAME, field, problem)


def _label_key(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise _refuse("labelKey", f"must be a non-empty string, got {shown(value)}")
    if len(value) > _MAX_LABEL_KEY_LENGTH or value.count("/") > 1:
        raise _refuse("labelKey", f"must be a label key, got {shown(value)}")
    return value


def _default_cost(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COST:
        raise _refuse("defaultCost", f"must be an integer from 0 to {MAX_COST}, got {shown(value)}")
    return value


def _normalization(value: Any) -> Normalization:
    for choice in Normalization:
        if value == choice.value:
            return choice
    supported = ", ".join(choice.value for choice in Normalization)
    raise _refuse("normalization", f"must be one of {supported}, got {shown(value)}")


_FIELDS = ("labelKey", "defaultCost", "normalization")


def parse_args(args: Mapping[str, Any] | None) -> NodeCostArgs:
    """The validated args; raises `InvalidPluginArgsError` naming the field at fault."""
    given = dict(args or {})
    for key in given:
        if key not in _FIELDS:
            raise _refuse(str(key), f"unknown field; NodeCost takes {', '.join(_FIELDS)}")
    defaults = NodeCostArgs()
    return NodeCostArgs(
        label_key=_label_key(given.get("labelKey", defaults.label_key)),
        default_cost=_default_cost(given.get("defaultCost")),
        normalization=_normalization(given.get("normalization", defaults.normalization.value)),
    )
