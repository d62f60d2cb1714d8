"""kube-scheduler's default plugins, and its rule for merging a user's profile into them.

Mirrors kube-scheduler v1.37's config defaulting (apis/config/v1/default_plugins.go):
only multiPoint has defaults; a user's disabled names (or "*") drop defaults, a
user's entry naming a default replaces it in place, and the rest follow.
"""

from __future__ import annotations

from berth.engine.framework import names
from berth.engine.profile import MULTI_POINT, PluginRef, PluginSet, ProfileConfig

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
        PluginRef(names.VOLUME_RESTRICTIONS),
        PluginRef(names.NODE_VOLUME_LIMITS),
        PluginRef(names.VOLUME_BINDING),
        PluginRef(names.VOLUME_ZONE),
        PluginRef(names.POD_TOPOLOGY_SPREAD, 2),
        PluginRef(names.INTER_POD_AFFINITY, 2),
        PluginRef(names.DYNAMIC_RESOURCES, 2),
        PluginRef(names.DEFAULT_PREEMPTION),
        PluginRef(names.NODE_RESOURCES_BALANCED_ALLOCATION, 1),
        PluginRef(names.IMAGE_LOCALITY, 1),
        PluginRef(names.DEFAULT_BINDER),
        PluginRef(names.NODE_DECLARED_FEATURES),
    )
)


def _merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
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
        extenders=config.extenders,
    )


def default_profile_config(scheduler_name: str = "default-scheduler") -> ProfileConfig:
    return with_defaults(ProfileConfig(scheduler_name=scheduler_name))
