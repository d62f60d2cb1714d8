"""The `shape` of utilization/score points two plugins take as args: NodeResourcesFit's
RequestedToCapacityRatio strategy and VolumeBinding's storage capacity scoring.

kube-scheduler validates both with one function (`validateFunctionShape`), so Berth parses
and validates both here, with the same messages, naming the plugin whose args are wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from berth.engine.errors import InvalidPluginArgsError
from berth.engine.scoring.resource_specs import check_known_keys

__all__ = ["MAX_SHAPE_SCORE", "MAX_SHAPE_UTILIZATION", "ShapePoints", "parse_shape"]

MAX_SHAPE_SCORE = 10
MAX_SHAPE_UTILIZATION = 100

ShapePoints = tuple[tuple[int, int], ...]
"""(utilization 0..100, score 0..10) pairs, utilization strictly increasing."""


def _whole(raw: object, *, plugin: str, field: str) -> int:
    if raw is None:
        return 0
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise InvalidPluginArgsError(plugin, field, f"expected an integer, got {raw!r}")
    return raw


def parse_shape(raw: object, *, plugin: str, field: str) -> ShapePoints:
    """The validated points of a shape list; raises `InvalidPluginArgsError` at the bad point."""
    if raw is None:
        raw = ()
    if isinstance(raw, str | bytes) or not isinstance(raw, Sequence):
        raise InvalidPluginArgsError(plugin, field, f"expected a list, got {raw!r}")
    points = []
    for index, item in enumerate(raw):
        at = f"{field}[{index}]"
        if not isinstance(item, Mapping):
            raise InvalidPluginArgsError(plugin, at, f"expected a map, got {item!r}")
        check_known_keys(item, {"utilization", "score"}, plugin=plugin, field=at)
        points.append(
            (
                _whole(item.get("utilization"), plugin=plugin, field=f"{at}.utilization"),
                _whole(item.get("score"), plugin=plugin, field=f"{at}.score"),
            )
        )
    if not points:
        raise InvalidPluginArgsError(
            plugin, field, "Required value: at least one point must be specified"
        )
    for index in range(1, len(points)):
        if points[index - 1][0] >= points[index][0]:
            raise InvalidPluginArgsError(
                plugin,
                f"{field}[{index}].utilization",
                f"Invalid value: {points[index][0]}: values must be sorted in increasing order",
            )
    for index, (utilization, score) in enumerate(points):
        if not 0 <= utilization <= MAX_SHAPE_UTILIZATION:
            raise InvalidPluginArgsError(
                plugin,
                f"{field}[{index}].utilization",
                f"Invalid value: {utilization}: not in valid range [0, {MAX_SHAPE_UTILIZATION}]",
            )
        if not 0 <= score <= MAX_SHAPE_SCORE:
            raise InvalidPluginArgsError(
                plugin,
                f"{field}[{index}].score",
                f"Invalid value: {score}: not in valid range [0, {MAX_SHAPE_SCORE}]",
            )
    return tuple(points)
