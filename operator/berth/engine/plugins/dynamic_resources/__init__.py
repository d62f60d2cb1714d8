"""kube-scheduler's DynamicResources plugin (Dynamic Resource Allocation), split by extension point."""

from berth.engine.plugins.dynamic_resources.plugin import DEALLOCATED, DynamicResources, new_plugin

__all__ = ["DEALLOCATED", "DynamicResources", "new_plugin"]
