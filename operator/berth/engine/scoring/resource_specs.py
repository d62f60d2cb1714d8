"""The `resources: [{name, weight}]` list both resource-scoring plugins take as args.

Parsing and defaulting are shared (an empty list means cpu and memory, a missing
or zero weight means 1); each plugin then validates the weights its own way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from berth.engine.errors import InvalidPluginArgsError
from berth.engine.model.resources import CPU, MEMORY


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    name: str
    weight: int


DEFAULT_RESOURCE_SPECS = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))


def parse_resource_specs(raw: object, *, plugin: str, field: str) -> tuple[ResourceSpec, ...]:
    """`raw` as resource specs, with kube-scheduler's v1 defaults applied (not yet validated)."""
    if raw is None:
        return DEFAULT_RESOURCE_SPECS
    if isinstance(raw, str | bytes) or not isinstance(raw, Sequence):
        raise InvalidPluginArgsError(plugin, field, f"expected a list, got {raw!r}")
    specs = []
    for index, item in enumerate(raw):
        where = f"{field}[{index}]"
        if not isinstance(item, Mapping):
            raise InvalidPluginArgsError(plugin, where, f"expected a map, got {item!r}")
        check_known_keys(item, {"name", "weight"}, plugin=plugin, field=where)
        name = item.get("name", "")
        if not isinstance(name, str):
            raise InvalidPluginArgsError(
                plugin, f"{where}.name", f"expected a string, got {name!r}"
            )
        weight = item.get("weight", 0)
        if weight is None:
            weight = 0
        if isinstance(weight, bool) or not isinstance(weight, int):
            raise InvalidPluginArgsError(
                plugin, f"{where}.weight", f"expected an integer, got {weight!r}"
            )
        specs.append(ResourceSpec(name, weight or 1))
    return tuple(specs) or DEFAULT_RESOURCE_SPECS


def check_known_keys(
    raw: Mapping[str, object], known: set[str], *, plugin: str, field: str
) -> None:
    """Reject unknown fields, as kube-scheduler's strict decoding of plugin args does."""
    for key in raw:
        if key not in known:
            where = f"{field}.{key}" if field else str(key)
            raise InvalidPluginArgsError(plugin, where, f'unknown field "{key}"')
