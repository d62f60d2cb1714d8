"""Which pods an extender sees, what NodeResourcesFit must ignore, and how extender scores count.

kube-scheduler sends a pod to an extender (filter, prioritize, bind, preempt)
only if the extender manages no resources or the pod names one of them in a
container's or init container's requests or limits. Resources an extender
manages with `ignoredByScheduler` are left out of NodeResourcesFit's filter (they
are added to every profile's NodeResourcesFitArgs.ignoredResources). Extender
scores run 0..10 and are scaled to the framework's 0..100 and weighted.
"""

from __future__ import annotations

from collections.abc import Iterable

from berth.engine.extenders.config import MAX_EXTENDER_PRIORITY, ExtenderConfig
from berth.engine.framework.interfaces import MAX_NODE_SCORE
from berth.engine.model.labels import qualified_name_problem
from berth.engine.model.pod import Pod

# Quota's name for a resource's requests; a name already starting so is not an extended resource.
_REQUESTS_PREFIX = "requests."
_NATIVE_DOMAIN = "kubernetes.io/"


def is_interested(extender: ExtenderConfig, pod: Pod) -> bool:
    """Whether kube-scheduler would call `extender` for `pod` (HTTPExtender.IsInterested)."""
    if not extender.managed_resources:
        return True
    return any(
        managed.name in pod.container_resource_names for managed in extender.managed_resources
    )


def ignored_by_scheduler(extenders: Iterable[ExtenderConfig]) -> frozenset[str]:
    """The resources NodeResourcesFit must not check: managed with ignoredByScheduler=true."""
    return frozenset(
        managed.name
        for extender in extenders
        for managed in extender.managed_resources
        if managed.ignored_by_scheduler
    )


def scaled_extender_score(score: int, weight: int) -> int:
    """An extender's 0..10 score as it adds to a node's total: x weight, x (100 / 10)."""
    return score * weight * (MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY)


def extended_resource_name_problem(name: str) -> str | None:
    """Why `name` is not a valid extended resource name (kube-scheduler's check), or None."""
    problem = qualified_name_problem(name)
    if problem is not None:
        return problem
    native = "/" not in name or _NATIVE_DOMAIN in name
    if (
        native
        or name.startswith(_REQUESTS_PREFIX)
        or qualified_name_problem(_REQUESTS_PREFIX + name)
    ):
        return "is an invalid extended resource name"
    return None
