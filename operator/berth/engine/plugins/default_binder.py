"""DefaultBinder: claims every pod for binding; the scheduling layer's Binder posts `pods/binding`."""

from __future__ import annotations

from berth.engine.framework import names
from berth.engine.framework.interfaces import PluginArgs
from berth.engine.model.pod import Pod

__all__ = ["DefaultBinder", "new_plugin"]


class DefaultBinder:
    name = names.DEFAULT_BINDER

    def binds(self, pod: Pod) -> bool:
        return True


def new_plugin(args: PluginArgs | None) -> DefaultBinder:
    """No args (kube-scheduler ignores any given to an argless plugin)."""
    return DefaultBinder()
