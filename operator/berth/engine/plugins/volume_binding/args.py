"""`VolumeBindingArgs`, decoded, defaulted and validated as kube-scheduler v1.37 does.

`bindTimeoutSeconds` defaults to 600 and may not be negative (0 means PreBind does not
wait, so any binding still in progress fails). `shape` defaults to (0 -> 10, 100 -> 0)
because the StorageCapacityScoring gate is on by default in v1.37; then it is validated
like NodeResourcesFit's RequestedToCapacityRatio shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework import names
from berth.engine.framework.interfaces import PluginArgs
from berth.engine.scoring.resource_specs import check_known_keys
from berth.engine.scoring.shape import (
    MAX_SHAPE_SCORE,
    MAX_SHAPE_UTILIZATION,
    ShapePoints,
    parse_shape,
)

__all__ = ["DEFAULT_BIND_TIMEOUT_SECONDS", "DEFAULT_SHAPE", "VolumeBindingArgs", "parse_args"]

DEFAULT_BIND_TIMEOUT_SECONDS = 600
# Emptier nodes score higher: utilization 0 scores the most, a full node nothing.
DEFAULT_SHAPE: ShapePoints = ((0, MAX_SHAPE_SCORE), (MAX_SHAPE_UTILIZATION, 0))


@dataclass(frozen=True, slots=True)
class VolumeBindingArgs:
    bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS
    shape: ShapePoints = DEFAULT_SHAPE


def parse_args(args: PluginArgs | None) -> VolumeBindingArgs:
    """Defaulted, validated args; raises `InvalidPluginArgsError` naming the bad field."""
    if not args:
        return VolumeBindingArgs()
    plugin = names.VOLUME_BINDING
    check_known_keys(
        args, {"apiVersion", "kind", "bindTimeoutSeconds", "shape"}, plugin=plugin, field=""
    )
    timeout = args.get("bindTimeoutSeconds")
    if timeout is None:
        timeout = DEFAULT_BIND_TIMEOUT_SECONDS
    if isinstance(timeout, bool) or not isinstance(timeout, int):
        raise InvalidPluginArgsError(
            plugin, "bindTimeoutSeconds", f"expected an integer, got {timeout!r}"
        )
    if timeout < 0:
        raise InvalidPluginArgsError(
            plugin,
            "bindTimeoutSeconds",
            f"Invalid value: {timeout}: invalid BindTimeoutSeconds, should not be a negative value",
        )
    raw_shape = args.get("shape")
    # An empty list is defaulted like a missing one (the v1 defaulting tests len(shape) == 0).
    shape = parse_shape(raw_shape, plugin=plugin, field="shape") if raw_shape else DEFAULT_SHAPE
    return VolumeBindingArgs(bind_timeout_seconds=timeout, shape=shape)
