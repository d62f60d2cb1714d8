"""Turning a typed profile into plugin lists per extension point, by kube-scheduler's rules.

Construction is kept apart from running (`runtime.py`): it happens once per profile
version and is where a bad profile is refused. Refusals are `ProfileError`s that
say where in the typed profile the problem is; `berth.profiles` maps that onto the
SchedulerProfile document.

Besides kube-scheduler's own checks (known plugins, one QueueSort, a Bind, each
plugin only at points it implements, bounded score total), a profile is refused
when a plugin runs at a point whose state it reads from another point that it does
not run at (say InterPodAffinity's Score without its PreScore). kube-scheduler
accepts such a profile and then fails every pod with "error reading ... from
cycleState"; refusing it up front keeps the last good profile serving instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from berth.engine.errors import FieldError, ProfileError, ProfileField, shown
from berth.engine.framework import names
from berth.engine.framework.events import ClusterEventWithHint
from berth.engine.framework.interfaces import (
    MAX_NODE_SCORE,
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)
from berth.engine.profile import EXTENSION_POINTS, MULTI_POINT, ProfileConfig

if TYPE_CHECKING:
    from berth.engine.framework.handle import Handle
    from berth.engine.registry import Registry

_POINT_PROTOCOLS: dict[str, type[Any]] = {
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "reserve": ReservePlugin,
    "permit": PermitPlugin,
    "preBind": PreBindPlugin,
    "bind": BindPlugin,
    "postBind": PostBindPlugin,
}

# Go caps the weighted total at MaxInt64; weights are 1..100 here, so this only
# guards against absurd plugin counts.
_MAX_TOTAL_SCORE = 2**63 - 1

# (point, the point whose state it reads) per in-tree plugin, where kube-scheduler
# v1.37's plugin returns an error status when that state is missing. Plugins that
# recompute it instead (NodeAffinity's Filter and Score, NodeResourcesFit's and
# NodeResourcesBalancedAllocation's Score) are not listed: kube-scheduler schedules
# with them, and so does Berth.
STATE_NEEDED: Mapping[str, tuple[tuple[str, str], ...]] = {
    names.INTER_POD_AFFINITY: (("filter", "preFilter"), ("score", "preScore")),
    names.POD_TOPOLOGY_SPREAD: (("filter", "preFilter"), ("score", "preScore")),
    names.NODE_PORTS: (("filter", "preFilter"),),
    names.NODE_RESOURCES_FIT: (("filter", "preFilter"),),
    names.VOLUME_RESTRICTIONS: (("filter", "preFilter"),),
    names.TAINT_TOLERATION: (("score", "preScore"),),
}


@dataclass(frozen=True, slots=True)
class Assembly:
    """What a `Framework` is made of: its plugins, their order per point, score weights."""

    plugins: dict[str, Plugin]
    points: dict[str, list[Plugin]]
    score_weights: dict[str, int]
    events: dict[str, list[ClusterEventWithHint]]  # per plugin that says what helps its pods


def assemble(config: ProfileConfig, registry: Registry, *, handle: Handle) -> Assembly:
    """Build every plugin the profile names (each factory gets the framework's `handle`) and
    lay them out; raises `ProfileError`."""
    needed = _needed_names(config)
    for name in needed:
        if name not in registry:
            raise ProfileError(_where_named(config, name), _unknown(name, registry))
    for name in config.plugin_args:
        if name not in registry:
            raise ProfileError(ProfileField.config_of(name), _unknown(name, registry))
    plugins: dict[str, Plugin] = {}
    # Built in name order: the order hints and events are registered in stays the same
    # whatever order the profile lists its plugins in.
    for name in sorted(needed):
        plugins[name] = _built(config, registry, name, handle)
    events = {name: _events_of(config, name, plugin) for name, plugin in plugins.items()}
    points = {point: _expand(config, plugins, point) for point in EXTENSION_POINTS}
    if len(points["queueSort"]) != 1:
        raise ProfileError(
            ProfileField.of_point("queueSort"),
            f"exactly one queue sort plugin is required, got {len(points['queueSort'])}",
        )
    if not points["bind"]:
        raise ProfileError(ProfileField.of_point("bind"), "at least one bind plugin is required")
    _check_state_needed(config, points)
    registered = {name: found for name, found in events.items() if found is not None}
    return Assembly(plugins, points, _score_weights(config, points["score"]), registered)


def _unknown(name: str, registry: Registry) -> str:
    return f"unknown plugin {shown(name)}; the plugins that exist: {', '.join(sorted(registry.names()))}"


def _built(config: ProfileConfig, registry: Registry, name: str, handle: Handle) -> Plugin:
    """One plugin from its factory. Whatever an (out-of-tree) factory raises makes the profile
    invalid at the plugin's args, or where the plugin is named when it has none."""
    args = config.plugin_args.get(name)
    try:
        plugin = registry.factory(name)(args, handle)
    except ProfileError:
        raise
    except FieldError as bad:
        raise ProfileError(ProfileField.args_of(name, bad.field), bad.problem) from None
    except Exception as bad:
        at = ProfileField.args_of(name) if args is not None else _where_named(config, name)
        problem = f"plugin {name!r} cannot be built: {type(bad).__name__}: {bad}"
        raise ProfileError(at, problem) from None
    built_name = getattr(plugin, "name", None)
    if built_name != name:
        raise ProfileError(
            _where_named(config, name),
            f"the factory of plugin {name!r} built a plugin named {shown(built_name)}",
        )
    return plugin


def _events_of(
    config: ProfileConfig, name: str, plugin: Plugin
) -> list[ClusterEventWithHint] | None:
    """What the plugin says helps its rejected pods, asked once here: a plugin that cannot say
    makes the profile invalid instead of failing every cluster event later."""
    if not isinstance(plugin, EnqueueExtensions):
        return None
    try:
        return list(plugin.events_to_register())
    except Exception as bad:
        problem = f"plugin {name!r} cannot register its events: {type(bad).__name__}: {bad}"
        raise ProfileError(_where_named(config, name), problem) from None


def _needed_names(config: ProfileConfig) -> list[str]:
    """Every plugin named, in the order written, so that the first bad one is reported."""
    named = (ref.name for point in config.plugins.values() for ref in point.enabled)
    return list(dict.fromkeys(named))


def _where_named(config: ProfileConfig, name: str) -> ProfileField:
    for point, plugin_set in config.plugins.items():
        if any(ref.name == name for ref in plugin_set.enabled):
            return ProfileField.listing(point, name)
    return ProfileField.config_of(name)


def _expand(config: ProfileConfig, plugins: Mapping[str, Plugin], point: str) -> list[Plugin]:
    protocol = _POINT_PROTOCOLS[point]
    specific = config.point(point)
    enabled = [ref.name for ref in specific.enabled]
    for name in enabled:
        if not isinstance(plugins[name], protocol):
            raise ProfileError(
                ProfileField.listing(point, name), f"plugin {name!r} does not extend {point}"
            )
    disabled = set(specific.disabled)
    if "*" in disabled:
        return [plugins[name] for name in enabled]
    overrides: list[str] = []
    from_multi: list[str] = []
    for ref in config.point(MULTI_POINT).enabled:
        if not isinstance(plugins[ref.name], protocol) or ref.name in disabled:
            continue
        if ref.name in enabled:
            overrides.append(ref.name)
            continue
        if ref.name in from_multi:
            raise ProfileError(
                ProfileField.listing(MULTI_POINT, ref.name),
                f"plugin {ref.name!r} already registered as {point}",
            )
        from_multi.append(ref.name)
    # Order: explicit overrides of multiPoint plugins (in their own order),
    # then multiPoint plugins, then the remaining point-specific plugins.
    ordered = [name for name in enabled if name in overrides]
    ordered += from_multi
    ordered += [name for name in enabled if name not in overrides]
    return [plugins[name] for name in ordered]


def _check_state_needed(config: ProfileConfig, points: Mapping[str, list[Plugin]]) -> None:
    running = {point: {plugin.name for plugin in listed} for point, listed in points.items()}
    for name, needs in STATE_NEEDED.items():
        for point, needed in needs:
            if name in running[point] and name not in running[needed]:
                raise ProfileError(
                    _why_not_at(config, name, point=point, needed=needed),
                    f"plugin {name!r} runs at {point} but not at {needed}: its {point} reads "
                    f"what its {needed} computes, so every pod would fail with an error",
                )


def _why_not_at(config: ProfileConfig, name: str, *, point: str, needed: str) -> ProfileField:
    """The entry that keeps `name` from `needed`, else the one that enables it at `point`."""
    for culprit in (name, "*"):
        if culprit in config.point(needed).disabled:
            return ProfileField.listing(needed, culprit, listed="disabled")
    if any(ref.name == name for ref in config.point(point).enabled):
        return ProfileField.listing(point, name)
    return ProfileField.listing(MULTI_POINT, name)


def _score_weights(config: ProfileConfig, score: list[Plugin]) -> dict[str, int]:
    weights: dict[str, int] = {}
    total = 0
    scoring = {plugin.name for plugin in score}
    for ref in (*config.point("score").enabled, *config.point(MULTI_POINT).enabled):
        if ref.name not in scoring or ref.name in weights:
            continue
        weights[ref.name] = ref.weight or 1
        total += weights[ref.name] * MAX_NODE_SCORE
        if total > _MAX_TOTAL_SCORE:
            raise ProfileError(
                ProfileField.of_point("score"), "total score of Score plugins could overflow"
            )
    return weights
