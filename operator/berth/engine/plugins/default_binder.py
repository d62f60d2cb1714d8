"""DefaultBinder: posts the pod's Binding through the scheduler's API port.

Like kube-scheduler's, the Binding carries the pod's UID, so a pod deleted and
re-created under the same name is never bound by a stale decision.
"""

from __future__ import annotations

from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.handle import BindOutcome, Handle
from berth.engine.framework.interfaces import PluginArgs
from berth.engine.framework.status import SUCCESS, Status, error
from berth.engine.model.pod import Pod

__all__ = ["DefaultBinder", "new_plugin"]


class DefaultBinder:
    name = names.DEFAULT_BINDER

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        result = await self._handle.services.binder.bind(pod, node_name)
        if result.outcome is BindOutcome.BOUND:
            return SUCCESS
        return error(result.message or result.outcome.value)


def new_plugin(args: PluginArgs | None, handle: Handle) -> DefaultBinder:
    """No args (kube-scheduler ignores any given to an argless plugin)."""
    return DefaultBinder(handle)
