"""Which plugin name is built by which module: the in-tree registry."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from berth.engine.framework import names
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import Plugin, PluginArgs

PluginFactory = Callable[[PluginArgs | None, Handle], Plugin]
"""Builds a plugin from its args (None when the profile gives none) and the framework's handle."""

# Modules are imported on first use so that a profile pays only for the plugins it names.
_IN_TREE_MODULES: Mapping[str, str] = {
    names.SCHEDULING_GATES: "berth.engine.plugins.scheduling_gates",
    names.PRIORITY_SORT: "berth.engine.plugins.priority_sort",
    names.NODE_NAME: "berth.engine.plugins.node_name",
    names.NODE_UNSCHEDULABLE: "berth.engine.plugins.node_unschedulable",
    names.TAINT_TOLERATION: "berth.engine.plugins.taint_toleration",
    names.NODE_AFFINITY: "berth.engine.plugins.node_affinity",
    names.NODE_PORTS: "berth.engine.plugins.node_ports",
    names.NODE_RESOURCES_FIT: "berth.engine.plugins.node_resources_fit",
    names.VOLUME_RESTRICTIONS: "berth.engine.plugins.volume_restrictions",
    names.NODE_VOLUME_LIMITS: "berth.engine.plugins.node_volume_limits",
    names.VOLUME_BINDING: "berth.engine.plugins.volume_binding",
    names.VOLUME_ZONE: "berth.engine.plugins.volume_zone",
    names.POD_TOPOLOGY_SPREAD: "berth.engine.plugins.pod_topology_spread",
    names.INTER_POD_AFFINITY: "berth.engine.plugins.inter_pod_affinity",
    names.DYNAMIC_RESOURCES: "berth.engine.plugins.dynamic_resources",
    names.DEFAULT_PREEMPTION: "berth.engine.plugins.default_preemption",
    names.NODE_RESOURCES_BALANCED_ALLOCATION: "berth.engine.plugins.balanced_allocation",
    names.IMAGE_LOCALITY: "berth.engine.plugins.image_locality",
    names.DEFAULT_BINDER: "berth.engine.plugins.default_binder",
    names.NODE_DECLARED_FEATURES: "berth.engine.plugins.node_declared_features",
}


class Registry:
    """Plugin name -> factory. Tests build registries holding fakes; production uses `in_tree()`."""

    def __init__(self, factories: Mapping[str, PluginFactory] | None = None) -> None:
        self._factories: dict[str, PluginFactory] = dict(factories or {})
        self._lazy: dict[str, str] = {}

    @classmethod
    def in_tree(cls, extra: Mapping[str, PluginFactory] | None = None) -> Registry:
        """kube-scheduler's plugins, plus `extra` ones (out-of-tree plugins, test plugins)."""
        registry = cls(extra)
        registry._lazy.update(
            {name: module for name, module in _IN_TREE_MODULES.items() if name not in (extra or {})}
        )
        return registry

    def names(self) -> set[str]:
        return set(self._factories) | set(self._lazy)

    def __contains__(self, name: object) -> bool:
        return name in self._factories or name in self._lazy

    def factory(self, name: str) -> PluginFactory:
        factory = self._factories.get(name)
        if factory is None:
            module_name = self._lazy[name]
            module: Any = importlib.import_module(module_name)
            factory = module.new_plugin
            self._factories[name] = factory
        return factory


IN_TREE = Registry.in_tree()
