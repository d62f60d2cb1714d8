"""Which objects `berth run` keeps as read, besides their parsed model.

Extenders are sent the pending pod whole, and nodes whole unless they keep a node
cache of their own. Keeping every object as read costs more memory than the parsed
model (at 5,000 nodes, tens of MiB), so it is kept only while a live profile has an
extender that would be sent it. A profile added later finds objects without their
source; the extender port reads those from the API server (and remembers them).
"""

from __future__ import annotations

from collections.abc import Iterable

from berth.engine.extenders import ExtenderConfig, is_interested
from berth.engine.framework.runtime import Framework
from berth.engine.model.pod import Pod
from berth.scheduling.profiles import LiveProfiles

__all__ = ["node_sources_needed", "pod_source_needed"]


def _sends_whole_nodes(extender: ExtenderConfig) -> bool:
    # Only filter and prioritize carry nodes; a node-caching extender gets their names.
    return not extender.node_cache_capable and (extender.is_filter or extender.is_prioritizer)


def node_sources_needed(profiles: Iterable[Framework]) -> bool:
    """Whether some live profile has an extender that is sent whole nodes."""
    return any(
        _sends_whole_nodes(extender) for framework in profiles for extender in framework.extenders
    )


def pod_source_needed(profiles: LiveProfiles, pod: Pod) -> bool:
    """Whether `pod` (pending) would be sent to an extender of its profile."""
    if pod.node_name:
        return False  # preemption victims are read from the API server when sent whole
    framework = profiles.for_pod(pod)
    return framework is not None and any(
        is_interested(extender, pod) for extender in framework.extenders
    )
