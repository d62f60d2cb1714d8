"""What became of every pod fed through the live path, and the invariants that must hold.

Every pod ends in exactly one of: bound (one binding, reported, onto a node that had room),
pending (a FailedScheduling reason was reported), gated (held by its scheduling gates), refused
(its parse error was logged, naming the field), already assigned, finished or being deleted, or
not ours (a schedulerName no profile serves). Anything else, and any error logged by the loop, is a bug.
"""

from __future__ import annotations

import logging
from collections import Counter
from enum import StrEnum

from berth.engine.errors import InvalidObjectError
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod
from berth.engine.model.quantity_form import INT64_MAX
from tests.unit.fuzz.live_path import LivePath, assigned_node

INTERNAL_ERROR = "internal error"
# Where a pod that failed an attempt waits for its next one.
WAITING = ("active", "backoff", "unschedulable")


class Outcome(StrEnum):
    BOUND = "bound"
    PENDING = "pending"
    GATED = "gated"
    REFUSED = "refused"
    ASSIGNED = "assigned"
    FINISHED = "finished"  # terminal (Succeeded, Failed) or being deleted: never scheduled
    NOT_OURS = "not ours"


def _parsed(raw: dict[str, object]) -> Pod | InvalidObjectError:
    try:
        return Pod.from_dict(raw)
    except InvalidObjectError as error:
        return error


def classify(live: LivePath) -> dict[str, Outcome]:
    """Each pod's outcome, keyed by UID; raises AssertionError naming the first pod that has none."""
    errors = live.logs.messages(logging.ERROR)
    assert not errors, f"the loop logged errors: {errors}"
    warnings = live.logs.messages(logging.WARNING)
    served = set(live.app.scheduler.profiles.names())
    bindings = Counter(uid for uid, _ in live.binder.bindings)
    outcomes: dict[str, Outcome] = {}
    for uid, raw in live.pods.items():
        if uid in live.deleted:
            continue
        pod = _parsed(raw)
        if isinstance(pod, InvalidObjectError):
            assert pod.field, f"refused without naming a field: {pod}"
            assert any(str(pod) in message for message in warnings), f"refusal not logged: {pod}"
            outcomes[uid] = Outcome.REFUSED
            continue
        failures = live.reporter.failures.get(uid, [])
        ours = pod.scheduler_name in live.ever_served
        where = live.app.scheduler.queue.queue_of(uid)
        if pod.is_terminal or pod.terminating:
            assert not bindings[uid], f"{pod.key} is finished or being deleted, yet was bound"
            assert where is None, f"{pod.key} is finished or being deleted, yet queued in {where}"
            outcomes[uid] = Outcome.FINISHED
        elif assigned_node(raw) and not bindings[uid]:
            assert not failures, f"{pod.key} was already assigned"
            outcomes[uid] = Outcome.ASSIGNED
        elif bindings[uid]:
            assert ours, f"{pod.key} of {pod.scheduler_name!r} was bound by Berth"
            nodes = [node for pod_uid, node in live.binder.bindings if pod_uid == uid]
            assert len(nodes) == 1, f"{pod.key} was bound {len(nodes)} times: {nodes}"
            assert nodes[0] in live.seen_nodes, f"{pod.key} was bound to unknown node {nodes[0]}"
            reported = [node for pod_uid, node in live.reporter.bound if pod_uid == uid]
            assert reported == nodes, f"{pod.key}: bound to {nodes}, reported {reported}"
            outcomes[uid] = Outcome.BOUND
        elif pod.scheduler_name not in served:
            assert ours or not failures, f"{pod.key} of {pod.scheduler_name!r} got reports"
            assert where is None, f"{pod.key} is unserved but queued in {where}"
            outcomes[uid] = Outcome.NOT_OURS
        elif failures:
            message, _reason = failures[-1]
            assert message, f"{pod.key}: FailedScheduling without a message"
            assert INTERNAL_ERROR not in message, f"{pod.key}: {message}"
            assert where in WAITING, f"{pod.key} failed, then left the queue ({where})"
            outcomes[uid] = Outcome.PENDING
        elif pod.scheduling_gates and where == "gated":
            outcomes[uid] = Outcome.GATED
        else:
            raise AssertionError(f"{pod.key} ended neither bound nor pending (queue: {where})")
    return outcomes


def overcommitted_nodes(live: LivePath) -> list[str]:
    """After each round, nodes where a pod Berth bound then holds more of a resource it
    requests (or more pods) than the node's allocatable at the start of that round."""
    problems = []
    for round_ in live.rounds:
        bound = [
            (uid, node)
            for uid, node in live.binder.bindings[: round_.bindings.stop]
            if uid not in live.deleted
        ]
        newcomers = {live.binder.bindings[index] for index in round_.bindings}
        for node_name in sorted({node for _, node in newcomers}):
            if node_name not in round_.nodes:
                continue  # deleted meanwhile; classify() checks it existed
            allocatable = Node.from_dict(round_.nodes[node_name]).allocatable
            on_node = [
                pod
                for uid in round_.residents
                if isinstance(pod := _parsed(live.pods[uid]), Pod)
                and pod.node_name == node_name
                and not pod.is_terminal
            ]
            on_node += [_pod(live, uid) for uid, node in bound if node == node_name]
            checked = {"pods"} | {
                name
                for uid, node in newcomers
                if node == node_name
                for name, amount in _pod(live, uid).requests.items()
                if amount > 0
            }
            for resource in sorted(checked):
                used = (
                    len(on_node)
                    if resource == "pods"
                    else sum(pod.requests.get(resource, 0) for pod in on_node)
                )
                if used > INT64_MAX:
                    continue  # kube-scheduler's int64 sums wrap here too; not a fit question
                if used > allocatable.get(resource, 0):
                    problems.append(
                        f"{node_name}: {resource} {used} > {allocatable.get(resource, 0)}"
                    )
    return problems


def _pod(live: LivePath, uid: str) -> Pod:
    pod = _parsed(live.pods[uid])
    assert isinstance(pod, Pod)
    return pod
