"""A scheduling profile: which plugins run at which extension point, their weights and args.

The input is the `spec` of a SchedulerProfile (the shape of one kube-scheduler
profile). Defaults merge exactly as kube-scheduler merges a user profile into its
default plugin set; every problem names the field it was found in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from berth.engine.errors import FieldError
from berth.engine.framework import names

MULTI_POINT = "multiPoint"
EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)
ALL_POINTS = (MULTI_POINT, *EXTENSION_POINTS)


@dataclass(frozen=True, slots=True)
class PluginRef:
    name: str
    weight: int = 0  # 0 = unset: a scoring plugin then weighs 1


@dataclass(frozen=True, slots=True)
class PluginSet:
    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ProfileConfig:
    scheduler_name: str
    plugins: Mapping[str, PluginSet] = field(default_factory=dict)
    plugin_args: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None

    def point(self, name: str) -> PluginSet:
        return self.plugins.get(name, PluginSet())


# kube-scheduler v1.37's default multiPoint list, in execution order, with score weights.
DEFAULT_MULTI_POINT = PluginSet(
    enabled=(
        PluginRef(names.SCHEDULING_GATES),
        PluginRef(names.PRIORITY_SORT),
        PluginRef(names.NODE_NAME),
        PluginRef(names.NODE_UNSCHEDULABLE),
        PluginRef(names.TAINT_TOLERATION, 3),
        PluginRef(names.NODE_AFFINITY, 2),
        PluginRef(names.NODE_PORTS),
        PluginRef(names.NODE_RESOURCES_FIT, 1),
        PluginRef(names.VOLUME_BINDING),
        PluginRef(names.POD_TOPOLOGY_SPREAD, 2),
        PluginRef(names.INTER_POD_AFFINITY, 2),
        PluginRef(names.DYNAMIC_RESOURCES),
        PluginRef(names.DEFAULT_PREEMPTION),
        PluginRef(names.NODE_RESOURCES_BALANCED_ALLOCATION, 1),
        PluginRef(names.IMAGE_LOCALITY, 1),
        PluginRef(names.DEFAULT_BINDER),
    )
)


def _parse_plugin_set(raw: object, where: str) -> PluginSet:
    if raw is None:
        return PluginSet()
    if not isinstance(raw, Mapping):
        raise FieldError(where, f"expected an object with enabled/disabled lists, got {raw!r}")
    enabled: list[PluginRef] = []
    for index, item in enumerate(raw.get("enabled") or []):
        at = f"{where}.enabled[{index}]"
        if not isinstance(item, Mapping):
            raise FieldError(at, f"expected {{name, weight}}, got {item!r}")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise FieldError(f"{at}.name", "must be a non-empty string")
        weight = item.get("weight", 0)
        if weight is None:
            weight = 0
        if isinstance(weight, bool) or not isinstance(weight, int) or not 0 <= weight <= 100:
            raise FieldError(f"{at}.weight", f"must be an integer from 1 to 100, got {weight!r}")
        enabled.append(PluginRef(name, weight))
    disabled: list[str] = []
    for index, item in enumerate(raw.get("disabled") or []):
        at = f"{where}.disabled[{index}]"
        name = item.get("name") if isinstance(item, Mapping) else None
        if not isinstance(name, str) or not name:
            raise FieldError(f"{at}.name", "must be a non-empty string")
        disabled.append(name)
    for kind, listed in (("enabled", [ref.name for ref in enabled]), ("disabled", disabled)):
        seen: set[str] = set()
        for index, name in enumerate(listed):
            if name in seen:
                raise FieldError(
                    f"{where}.{kind}[{index}].name", f"plugin {name!r} is listed twice"
                )
            seen.add(name)
    return PluginSet(tuple(enabled), tuple(disabled))


def parse_profile_spec(spec: Mapping[str, Any]) -> ProfileConfig:
    """Read a SchedulerProfile `spec` (or one KubeSchedulerConfiguration profile)."""
    scheduler_name = spec.get("schedulerName")
    if not isinstance(scheduler_name, str) or not scheduler_name:
        raise FieldError("spec.schedulerName", "must be a non-empty string")
    percentage = spec.get("percentageOfNodesToScore")
    if percentage is not None and (
        isinstance(percentage, bool)
        or not isinstance(percentage, int)
        or not 0 <= percentage <= 100
    ):
        raise FieldError(
            "spec.percentageOfNodesToScore", f"must be an integer from 0 to 100, got {percentage!r}"
        )
    raw_plugins = spec.get("plugins") or {}
    if not isinstance(raw_plugins, Mapping):
        raise FieldError("spec.plugins", "expected an object keyed by extension point")
    for key in raw_plugins:
        if key not in ALL_POINTS:
            raise FieldError(
                f"spec.plugins.{key}",
                f"unknown extension point; expected one of {list(ALL_POINTS)}",
            )
    plugins = {
        point: _parse_plugin_set(raw_plugins.get(point), f"spec.plugins.{point}")
        for point in ALL_POINTS
    }
    plugin_args: dict[str, Mapping[str, Any]] = {}
    raw_config = spec.get("pluginConfig") or []
    if not isinstance(raw_config, list):
        raise FieldError("spec.pluginConfig", "expected a list of {name, args}")
    for index, item in enumerate(raw_config):
        at = f"spec.pluginConfig[{index}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise FieldError(f"{at}.name", "must be a plugin name")
        name = item["name"]
        if name in plugin_args:
            raise FieldError(f"{at}.name", f"plugin {name!r} is configured twice")
        args = item.get("args") or {}
        if not isinstance(args, Mapping):
            raise FieldError(f"{at}.args", "expected an object")
        plugin_args[name] = {k: v for k, v in args.items() if k not in ("apiVersion", "kind")}
    return ProfileConfig(
        scheduler_name=scheduler_name,
        plugins=plugins,
        plugin_args=plugin_args,
        percentage_of_nodes_to_score=percentage,
    )


def _merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    # kube-scheduler's rule: disabled names (or "*") drop defaults; a custom entry
    # naming a default replaces it in place (keeping the default order); the other
    # custom entries follow the defaults.
    disabled = set(custom.disabled) | set(default.disabled)
    custom_by_name = {ref.name: index for index, ref in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled:
        for default_ref in default.enabled:
            if default_ref.name in disabled:
                continue
            index = custom_by_name.get(default_ref.name)
            if index is None:
                enabled.append(default_ref)
            else:
                enabled.append(custom.enabled[index])
                replaced.add(index)
    enabled += [ref for index, ref in enumerate(custom.enabled) if index not in replaced]
    return PluginSet(tuple(enabled), (*custom.disabled, *default.disabled))


def with_defaults(config: ProfileConfig) -> ProfileConfig:
    """Merge the user's plugin sets into kube-scheduler's defaults (only multiPoint has defaults)."""
    plugins = dict(config.plugins)
    plugins[MULTI_POINT] = _merge_plugin_set(DEFAULT_MULTI_POINT, config.point(MULTI_POINT))
    return ProfileConfig(
        scheduler_name=config.scheduler_name,
        plugins=plugins,
        plugin_args=config.plugin_args,
        percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
    )


def default_profile_config(scheduler_name: str = "default-scheduler") -> ProfileConfig:
    return with_defaults(ProfileConfig(scheduler_name=scheduler_name))
