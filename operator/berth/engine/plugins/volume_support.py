"""VolumeBinding stand-in: Berth cannot bind PersistentVolumeClaims yet, so pods that use them are
refused up front with a message that says so, instead of being placed where their volumes may not go.

It sits where kube-scheduler's VolumeBinding sits in the default profile (same name).
"""

from __future__ import annotations

from berth.engine.cluster import NodeSlots
from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.events import ClusterEventWithHint
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import PluginArgs, PreFilterResult
from berth.engine.framework.status import SKIP, Code, unresolvable
from berth.engine.framework.verdicts import Verdicts, accept_all, reject_where
from berth.engine.model.pod import Pod

__all__ = ["VolumeSupport", "new_plugin", "unsupported_message"]


def unsupported_message(claims: tuple[str, ...]) -> str:
    return (
        f"pod uses PersistentVolumeClaim(s) [{' '.join(claims)}], "
        "which this scheduler does not support yet"
    )


class VolumeSupport:
    name = names.VOLUME_BINDING

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        if not pod.claim_names:
            return PreFilterResult(SKIP)
        return PreFilterResult(unresolvable(unsupported_message(pod.claim_names)))

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        # Reached only when PreFilter did not run: refuse every node for the same reason.
        if not pod.claim_names:
            return accept_all(slots.size)
        everywhere = slots >= 0
        return reject_where(
            everywhere, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, unsupported_message(pod.claim_names)
        )

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Nothing in the cluster can make unsupported volumes supported; a pod's volumes are
        # immutable. The queue's periodic flush still retries such pods.
        return []


# The fields of kube-scheduler's v1 VolumeBindingArgs; strict decoding refuses any other.
_ARG_FIELDS = frozenset({"apiVersion", "kind", "bindTimeoutSeconds", "shape"})


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> VolumeSupport:
    """Accepts and ignores `VolumeBindingArgs` (bindTimeoutSeconds, shape): nothing binds yet."""
    unknown = sorted(set(args or {}) - _ARG_FIELDS)
    if unknown:
        raise InvalidPluginArgsError(names.VOLUME_BINDING, unknown[0], "unknown field")
    return VolumeSupport()
