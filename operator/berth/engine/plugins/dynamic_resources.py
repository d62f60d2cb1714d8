"""DynamicResources stand-in: Berth does not allocate DRA ResourceClaims yet, so pods that reference
them (`spec.resourceClaims`) are refused with a message that says so, instead of being placed as if
they needed no device.

It sits where kube-scheduler's DynamicResources sits in the default profile (same name), and
keeps the one trace the real plugin leaves on every unschedulable pod: its PostFilter, which
runs before DefaultPreemption's, reads the state its PreFilter wrote. When an earlier PreFilter
rejected the pod outright (a missing PersistentVolumeClaim, say), DynamicResources' PreFilter
never ran, that read fails, and kube-scheduler's message ends with the error ("not found")
instead of preemption's words.
"""

from __future__ import annotations

from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import (
    FilterDiagnosis,
    PluginArgs,
    PostFilterResult,
    PreFilterResult,
)
from berth.engine.framework.status import Code, Status, error
from berth.engine.model.pod import Pod
from berth.engine.unsupported import UnsupportedFeature

__all__ = ["DynamicResources", "new_plugin", "unsupported_message"]


def unsupported_message(claims: tuple[str, ...]) -> str:
    return (
        f"pod uses ResourceClaim(s) [{' '.join(claims)}]; this scheduler does not support "
        "dynamic resource allocation (DRA) yet"
    )


class _PreFiltered:
    """Written by PreFilter, as upstream writes its state before anything else."""


class DynamicResources(UnsupportedFeature):
    name = names.DYNAMIC_RESOURCES

    def refusal(self, pod: Pod) -> str | None:
        if not pod.resource_claims:
            return None
        return unsupported_message(tuple(claim.name for claim in pod.resource_claims))

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        state.write(self.name, _PreFiltered())
        return super().pre_filter(state, pod)

    def post_filter(
        self, state: CycleState, pod: Pod, diagnosis: FilterDiagnosis
    ) -> PostFilterResult:
        if state.get(self.name, _PreFiltered) is None:
            return PostFilterResult(error("not found"))  # upstream's framework.ErrNotFound
        return PostFilterResult(Status(Code.UNSCHEDULABLE))  # no claims to deallocate


# The fields of kube-scheduler's v1 DynamicResourcesArgs; strict decoding refuses any other.
_ARG_FIELDS = frozenset({"apiVersion", "kind", "filterTimeout"})


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> DynamicResources:
    """Accepts and ignores `DynamicResourcesArgs` (filterTimeout...): nothing is allocated yet."""
    unknown = sorted(set(args or {}) - _ARG_FIELDS)
    if unknown:
        raise InvalidPluginArgsError(names.DYNAMIC_RESOURCES, unknown[0], "unknown field")
    return DynamicResources()
