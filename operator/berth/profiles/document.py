"""Reading one kube-scheduler profile document strictly into the engine's typed `ProfileConfig`.

This is the one place that knows the shape of a profile: a SchedulerProfile's
`spec`, which is also the shape of one `profiles[]` entry of kube-scheduler's
KubeSchedulerConfiguration (schedulerName, percentageOfNodesToScore, plugins,
pluginConfig), plus Berth's per-profile `extenders` (the shape of
KubeSchedulerConfiguration's global `extenders:`, read by berth.profiles.extenders). Like kube-scheduler's strict decoding, an unknown field anywhere
is refused by name ("unknown field"), so a misspelt option never silently falls
back to a default. Plugin args are checked here only for being plain JSON (string
keys, bounded depth); each plugin checks its own args' keys and values.

Problems are `FieldError`s whose field is the document path (`spec.plugins...`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.engine.errors import FieldError, shown
from berth.engine.profile import ALL_POINTS, PluginRef, PluginSet, ProfileConfig
from berth.profiles.extenders import parse_extenders
from berth.profiles.strict import as_list, as_object, check_known_fields, field_name

# Field names of kube-scheduler's v1 KubeSchedulerProfile (and Berth's `extenders`),
# PluginSet, Plugin and PluginConfig.
_PROFILE_FIELDS = frozenset(
    {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig", "extenders"}
)
_PLUGIN_SET_FIELDS = frozenset({"enabled", "disabled"})
_PLUGIN_FIELDS = frozenset({"name", "weight"})
_PLUGIN_CONFIG_FIELDS = frozenset({"name", "args"})
# The type fields of a plugin's `<Name>Args` object; the plugin never sees them.
_ARGS_TYPE_FIELDS = frozenset({"apiVersion", "kind"})

# Deeper args than this are refused before any plugin walks them; upstream's deepest
# args (NodeAffinityArgs' node selector requirements) need fewer than ten levels.
MAX_ARGS_DEPTH = 32


def _plugin_name(item: object, where: str) -> str:
    entry = as_object(item, where, "an object with a name")
    check_known_fields(entry, _PLUGIN_FIELDS, where)
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise FieldError(f"{where}.name", "must be a non-empty string")
    return name


def _weight(item: Mapping[Any, Any], where: str) -> int:
    weight = item.get("weight")
    if weight is None:
        return 0
    if isinstance(weight, bool) or not isinstance(weight, int) or not 0 <= weight <= 100:
        raise FieldError(
            f"{where}.weight", f"must be an integer from 1 to 100, got {shown(weight)}"
        )
    return weight


def _no_duplicates(names: list[str], where: str) -> None:
    seen: set[str] = set()
    for index, name in enumerate(names):
        if name in seen:
            raise FieldError(f"{where}[{index}].name", f"plugin {shown(name)} is listed twice")
        seen.add(name)


def _plugin_set(raw: object, where: str) -> PluginSet:
    plugin_set = as_object(raw, where, "an object with enabled/disabled lists")
    check_known_fields(plugin_set, _PLUGIN_SET_FIELDS, where)
    enabled: list[PluginRef] = []
    for index, item in enumerate(as_list(plugin_set.get("enabled"), f"{where}.enabled", "a list")):
        at = f"{where}.enabled[{index}]"
        name = _plugin_name(item, at)
        enabled.append(PluginRef(name, _weight(item, at)))
    disabled = [
        _plugin_name(item, f"{where}.disabled[{index}]")
        for index, item in enumerate(
            as_list(plugin_set.get("disabled"), f"{where}.disabled", "a list")
        )
    ]
    _no_duplicates([ref.name for ref in enabled], f"{where}.enabled")
    _no_duplicates(disabled, f"{where}.disabled")
    return PluginSet(tuple(enabled), tuple(disabled))


def check_json(value: object, where: str) -> None:
    """Refuse what JSON cannot hold (non-string keys, dates, ...) and over-deep nesting.

    Iterative, so that a value nested deeper than Python's recursion limit is refused
    like any other, instead of crashing whoever walks it.
    """
    pending: list[tuple[object, str, int]] = [(value, where, 0)]
    while pending:
        item, at, depth = pending.pop()
        if depth > MAX_ARGS_DEPTH:
            raise FieldError(at, f"nested more than {MAX_ARGS_DEPTH} levels deep")
        if isinstance(item, Mapping):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise FieldError(at, f"field names must be strings, got {shown(key)}")
                pending.append((child, f"{at}.{field_name(key)}", depth + 1))
        elif isinstance(item, list):
            pending.extend((child, f"{at}[{index}]", depth + 1) for index, child in enumerate(item))
        elif item is not None and not isinstance(item, str | int | float):
            raise FieldError(at, f"expected a JSON value, got {type(item).__name__}")


def _plugin_args(raw: object, name: str, where: str) -> Mapping[str, Any]:
    args = as_object(raw, where, f"an object ({name}Args)")
    check_json(args, where)
    return {key: value for key, value in args.items() if key not in _ARGS_TYPE_FIELDS}


def parse_profile_spec(spec: Mapping[Any, Any], *, root: str = "spec") -> ProfileConfig:
    """Read one profile (before defaults merge); `root` prefixes every field path."""
    check_known_fields(spec, _PROFILE_FIELDS, root)
    scheduler_name = spec.get("schedulerName")
    if not isinstance(scheduler_name, str) or not scheduler_name:
        raise FieldError(f"{root}.schedulerName", "must be a non-empty string")
    percentage = spec.get("percentageOfNodesToScore")
    if percentage is not None and (
        isinstance(percentage, bool)
        or not isinstance(percentage, int)
        or not 0 <= percentage <= 100
    ):
        raise FieldError(
            f"{root}.percentageOfNodesToScore",
            f"must be an integer from 0 to 100, got {shown(percentage)}",
        )
    raw_plugins = as_object(
        spec.get("plugins"), f"{root}.plugins", "an object keyed by extension point"
    )
    for key in raw_plugins:
        if key not in ALL_POINTS:
            raise FieldError(
                f"{root}.plugins.{field_name(key)}",
                f"unknown extension point; expected one of {list(ALL_POINTS)}",
            )
    plugins = {
        point: _plugin_set(raw_plugins.get(point), f"{root}.plugins.{point}")
        for point in ALL_POINTS
    }
    plugin_args: dict[str, Mapping[str, Any]] = {}
    raw_config = as_list(spec.get("pluginConfig"), f"{root}.pluginConfig", "a list of {name, args}")
    for index, item in enumerate(raw_config):
        at = f"{root}.pluginConfig[{index}]"
        entry = as_object(item, at, "an object with a name and args")
        check_known_fields(entry, _PLUGIN_CONFIG_FIELDS, at)
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise FieldError(f"{at}.name", "must be a plugin name")
        if name in plugin_args:
            raise FieldError(f"{at}.name", f"plugin {shown(name)} is configured twice")
        plugin_args[name] = _plugin_args(entry.get("args"), name, f"{at}.args")
    return ProfileConfig(
        scheduler_name=scheduler_name,
        plugins=plugins,
        plugin_args=plugin_args,
        percentage_of_nodes_to_score=percentage,
        extenders=parse_extenders(spec.get("extenders"), f"{root}.extenders"),
    )
