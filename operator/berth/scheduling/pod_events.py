"""Cluster-event helpers the queue and the watch handlers share: how a pod update reads as
events, how a happening matches a registration, and the event labels used in metrics.

Mirrors kube-scheduler's `framework/events.go` (PodSchedulingPropertiesChange) and
`framework/types.go` (MatchClusterEvents, ClusterEvent.Label).
"""

from __future__ import annotations

from berth.engine.framework.events import Action, ClusterEvent, Resource
from berth.engine.model.pod import Pod

__all__ = [
    "BACKOFF_COMPLETE",
    "EVENT_ASSIGNED_POD_DELETE",
    "EVENT_FORCE_ACTIVATE",
    "EVENT_UNSCHEDULED_POD_ADD",
    "POP_FROM_BACKOFF_Q",
    "SCHEDULE_ATTEMPT_FAILURE",
    "event_label",
    "event_matches",
    "is_wildcard",
    "pod_change_events",
]

# Queue-movement labels that are not cluster events (scheduler_queue_incoming_pods_total{event}).
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"

EVENT_UNSCHEDULED_POD_ADD = ClusterEvent(Resource.UNSCHEDULED_POD, Action.ADD)
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(Resource.ASSIGNED_POD, Action.DELETE)
EVENT_FORCE_ACTIVATE = ClusterEvent(Resource.WILDCARD, Action.ALL, "ForceActivate")

_ACTION_NAMES: dict[Action, str] = {
    Action.ADD: "Add",
    Action.DELETE: "Delete",
    Action.UPDATE_NODE_ALLOCATABLE: "UpdateNodeAllocatable",
    Action.UPDATE_NODE_LABEL: "UpdateNodeLabel",
    Action.UPDATE_NODE_TAINT: "UpdateNodeTaint",
    Action.UPDATE_NODE_CONDITION: "UpdateNodeCondition",
    Action.UPDATE_NODE_ANNOTATION: "UpdateNodeAnnotation",
    Action.UPDATE_NODE_UNSCHEDULABLE: "UpdateNodeUnschedulable",
    Action.UPDATE_NODE_DECLARED_FEATURE: "UpdateNodeDeclaredFeature",
    Action.UPDATE_POD_LABEL: "UpdatePodLabel",
    Action.UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown",
    Action.UPDATE_POD_TOLERATIONS: "UpdatePodToleration",
    Action.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated",
    Action.UPDATE_POD_GENERATED_RESOURCE_CLAIM: "UpdatePodGeneratedResourceClaim",
    Action.UPDATE: "Update",
    Action.ALL: "All",
}


def event_label(event: ClusterEvent) -> str:
    """The label kube-scheduler gives an event: its custom label, else resource + action
    (`NodeAdd`, `AssignedPodDelete`, `TargetPodUpdatePodLabel`)."""
    if event.label:
        return event.label
    return f"{event.resource.value}{_ACTION_NAMES.get(event.action, '')}"


def is_wildcard(event: ClusterEvent) -> bool:
    return event.resource is Resource.WILDCARD and event.action == Action.ALL


def event_matches(registered: ClusterEvent, incoming: ClusterEvent) -> bool:
    """Go's MatchClusterEvents: `incoming` is the same as or more specific than `registered`.

    Stricter than `ClusterEvent.matches` for the general Update (an update nothing specific was
    recognised in): it only reaches registrations of every kind of update. An incoming event
    that combines several specific actions counts as each of them (Go sends them one by one).
    """
    if is_wildcard(registered):
        return True
    if not registered.matches(incoming):
        return False
    if incoming.action in (Action.UPDATE, Action.ALL):
        return incoming.action & registered.action == incoming.action
    return True


def pod_change_events(old: Pod, new: Pod, *, is_target_pod: bool) -> list[ClusterEvent]:
    """How an update of a pod reads as cluster events (PodSchedulingPropertiesChange).

    The resource is AssignedPod when `new` is bound, TargetPod when the pod is the queued pod
    itself (`SchedulingQueue.update`), UnscheduledPod otherwise. With no specific change the
    general Update action is returned, which only plugins registering Pod/Update notice.
    """
    if new.node_name:
        resource = Resource.ASSIGNED_POD
    elif is_target_pod:
        resource = Resource.TARGET_POD
    else:
        resource = Resource.UNSCHEDULED_POD
    actions: list[Action] = []
    if new.labels != old.labels:
        actions.append(Action.UPDATE_POD_LABEL)
    if _scaled_down(old, new):
        actions.append(Action.UPDATE_POD_SCALE_DOWN)
    # UpdatePodScaleUp: no in-tree plugin registers it without an alpha gate; not modelled.
    if old.scheduling_gates and not new.scheduling_gates:
        actions.append(Action.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    # API validation only lets tolerations be added, so a length change is the whole story.
    if len(new.tolerations) != len(old.tolerations):
        actions.append(Action.UPDATE_POD_TOLERATIONS)
    if new.resource_claim_statuses != old.resource_claim_statuses:
        actions.append(Action.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    if not actions:
        actions.append(Action.UPDATE)
    return [ClusterEvent(resource, action) for action in actions]


def _scaled_down(old: Pod, new: Pod) -> bool:
    for name, before in old.requests.items():
        after = new.requests.get(name)
        if after is None or before > after:
            return True
    return False
