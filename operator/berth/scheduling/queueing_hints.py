"""Which cluster events can help a rejected pod: each profile's registrations and hint functions.

Mirrors kube-scheduler's queueing-hint map (scheduler.go buildQueueingHintMap, framework
fillEnqueueExtensions) and PriorityQueue.isPodWorthRequeuing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import IntEnum

from berth.engine.extended_decision import EXTENDER
from berth.engine.framework.events import (
    Action,
    ClusterEvent,
    QueueingHint,
    QueueingHintFn,
    Resource,
)
from berth.engine.framework.interfaces import (
    FilterPlugin,
    PermitPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    ReservePlugin,
)
from berth.engine.framework.runtime import Framework
from berth.engine.model.pod import Pod
from berth.scheduling.pod_events import event_label, event_matches, is_wildcard
from berth.scheduling.queued_pod import QueuedPodInfo

__all__ = ["HintTable", "Strategy", "worth_requeuing"]

log = logging.getLogger(__name__)

_ALL_EVENTS = ClusterEvent(Resource.WILDCARD, Action.ALL)
# Only these points can reject a pod before it is bound, so only their registrations count.
_REJECTING_POINTS = (PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, ReservePlugin, PermitPlugin)


class Strategy(IntEnum):
    """What to do with an unschedulable pod after an event (larger wins)."""

    SKIP = 0  # stay in the unschedulable pool
    AFTER_BACKOFF = 1  # backoffQ if still backing off, else activeQ
    IMMEDIATELY = 2  # activeQ now (a Pending plugin said Queue)


@dataclass(frozen=True, slots=True)
class _Registration:
    plugin: str
    event: ClusterEvent
    hint: QueueingHintFn | None  # None: always Queue


class HintTable:
    """One profile's (plugin, event, hint) registrations, built once per Framework."""

    def __init__(self, framework: Framework) -> None:
        registered = framework.events_to_register()
        registrations: list[_Registration] = []
        for name, plugin in framework.plugins.items():
            if not isinstance(plugin, _REJECTING_POINTS):
                continue
            if name not in registered:
                # A plugin that does not say what helps it is woken by every event.
                registrations.append(_Registration(name, _ALL_EVENTS, None))
                continue
            registrations.extend(
                _Registration(name, item.event, item.hint) for item in registered[name]
            )
        if framework.extenders:
            # Extenders say nothing of what helps a pod they rejected: any event may.
            registrations.append(_Registration(EXTENDER, _ALL_EVENTS, None))
        self.registrations: tuple[_Registration, ...] = tuple(registrations)

    def interested_in(self, event: ClusterEvent) -> bool:
        return any(event_matches(r.event, event) for r in self.registrations)

    def plugin_interested_in(self, plugin: str, event: ClusterEvent) -> bool:
        return any(r.plugin == plugin and event_matches(r.event, event) for r in self.registrations)


def worth_requeuing(
    info: QueuedPodInfo,
    event: ClusterEvent,
    old: object,
    new: object,
    table: HintTable | None,
) -> Strategy:
    """Run the hints of the plugins that rejected `info` for `event` (isPodWorthRequeuing)."""
    rejectors = info.rejector_plugins
    if not rejectors:
        return Strategy.AFTER_BACKOFF
    if is_wildcard(event):
        # A wildcard event carrying a pod (ForceActivate) is meant for that pod only.
        if new is not None and not (isinstance(new, Pod) and new.uid == info.uid):
            return Strategy.SKIP
        return Strategy.AFTER_BACKOFF
    if table is None:
        # The pod's profile is gone; let the scheduling cycle sort it out.
        return Strategy.AFTER_BACKOFF
    strategy = Strategy.SKIP
    for registration in table.registrations:
        if registration.plugin not in rejectors or not event_matches(registration.event, event):
            continue
        if _run_hint(registration, info.pod, event, old, new) is QueueingHint.SKIP:
            continue
        if registration.plugin in info.pending_plugins:
            return Strategy.IMMEDIATELY
        if not info.pending_plugins:
            return Strategy.AFTER_BACKOFF
        strategy = Strategy.AFTER_BACKOFF
    return strategy


def _run_hint(
    registration: _Registration, pod: Pod, event: ClusterEvent, old: object, new: object
) -> QueueingHint:
    if registration.hint is None:
        return QueueingHint.QUEUE
    try:
        return registration.hint(pod, old, new)
    except Exception:
        # Classified, not swallowed: a broken hint must not strand the pod, so it means Queue.
        log.exception(
            "queueing hint of %s failed for event %s on pod %s; treating it as Queue",
            registration.plugin,
            event_label(event),
            pod.key,
        )
        return QueueingHint.QUEUE
