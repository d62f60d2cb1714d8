"""The scheduling queue: which pending pod is tried next, and when a failed one is tried again.

A synchronous, I/O-free port of kube-scheduler's PriorityQueue (backend/queue, v1.37, with
queueing hints and PopFromBackoffQ on): activeQ ordered by the profiles' QueueSort, two backoff
heaps (plugin rejections, errors), an unschedulable pool that only helpful cluster events or the
5-minute flush empty, and gated pods that PreEnqueue holds back. The only asynchronous part is
`pop`, which waits for work on an asyncio.Event. The queue owns the nominator, as upstream's
does; pod groups are not modelled.
"""

from __future__ import annotations

import asyncio
import itertools
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from berth.engine.framework.events import UNSCHEDULABLE_TIMEOUT, ClusterEvent
from berth.engine.framework.runtime import Framework
from berth.engine.model.pod import Pod
from berth.scheduling._heap import KeyedHeap
from berth.scheduling.in_flight import Flight, InFlight
from berth.scheduling.nominator import Nominator
from berth.scheduling.pod_events import (
    BACKOFF_COMPLETE,
    EVENT_UNSCHEDULED_POD_ADD,
    POP_FROM_BACKOFF_Q,
    SCHEDULE_ATTEMPT_FAILURE,
    event_label,
    is_wildcard,
    pod_change_events,
)
from berth.scheduling.ports import Clock
from berth.scheduling.queued_pod import BackoffPolicy, QueuedPodInfo
from berth.scheduling.queueing_hints import HintTable, Strategy, worth_requeuing

__all__ = ["ACTIVE", "BACKOFF", "GATED", "UNSCHEDULABLE", "QueuedPodInfo", "SchedulingQueue"]

# Sub-queue names, as in scheduler_pending_pods{queue} and scheduler_queue_incoming_pods_total.
ACTIVE = "active"
BACKOFF = "backoff"
UNSCHEDULABLE = "unschedulable"
GATED = "gated"

IncomingCallback = Callable[[str, str], None]
"""(queue, event label) for each pod entering a sub-queue."""


class SchedulingQueue:
    def __init__(
        self,
        *,
        clock: Clock,  # test seam: a fake clock in unit tests
        framework_for: Callable[[Pod], Framework | None],
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        max_in_unschedulable: float = 300.0,
        on_incoming: IncomingCallback | None = None,
    ) -> None:
        self._clock = clock
        self._framework_for = framework_for
        self._backoff_policy = BackoffPolicy(initial_backoff, max_backoff)
        self._max_in_unschedulable = max_in_unschedulable
        self._on_incoming = on_incoming
        self._active: KeyedHeap[QueuedPodInfo] = KeyedHeap()
        self._backoff: KeyedHeap[QueuedPodInfo] = KeyedHeap()  # plugin rejections
        self._error_backoff: KeyedHeap[QueuedPodInfo] = KeyedHeap()
        # Go keeps gated pods in the unschedulable pool too; two maps make the counts cheap.
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._gated: dict[str, QueuedPodInfo] = {}
        self._in_flight = InFlight()
        self._tables: weakref.WeakKeyDictionary[Framework, HintTable] = weakref.WeakKeyDictionary()
        self._work = asyncio.Event()
        self.nominator = Nominator()

    # ------------------------------------------------------------------ arrivals and changes

    def add(self, pod: Pod) -> None:
        """A new unassigned pod of one of our profiles (gated pods wait in the gated set)."""
        if self._framework_for(pod) is None:
            return
        # A re-list delivers pods we already hold: treat it as an update, never a duplicate.
        known = self._find(pod.uid)
        if known is not None:
            self.update(known.pod, pod)
            return
        flight = self._in_flight.get(pod.uid)
        if flight is not None:
            self.update(flight.pod, pod)
            return
        info = QueuedPodInfo(pod, timestamp=self._clock.now())
        self._move_to_active(info, event_label(EVENT_UNSCHEDULED_POD_ADD))

    def update(self, old: Pod, new: Pod) -> None:
        """The pod itself changed (PriorityQueue.Update).

        In activeQ or backoffQ it is updated in place. In the unschedulable pool or gated set,
        its own-update events (TargetPod) are run through the rejector plugins' hints and it
        moves if one says Queue. While in flight the events are kept for its return. Unknown
        pods are added.
        """
        if old.resource_version and old.resource_version == new.resource_version:
            return  # a re-delivery of the same object, not a change
        uid = new.uid
        events = pod_change_events(old, new, is_target_pod=True)
        flight = self._in_flight.get(uid)
        if flight is not None:
            flight.pod = new
            for event in events:
                self._in_flight.record(event, old, new)
            return
        for heap in (self._active, self._backoff, self._error_backoff):
            info = heap.get(uid)
            if info is not None:
                info.pod = new
                self._push(heap, info)
                return
        info = self._unschedulable.get(uid) or self._gated.get(uid)
        if info is None:
            self.add(new)
            return
        info.pod = new
        table = self._table_for(new)
        for event in events:
            strategy = worth_requeuing(info, event, old, new, table)
            if self._requeue(info, strategy, event_label(event)) in (ACTIVE, BACKOFF):
                break

    def delete(self, pod: Pod) -> None:
        """The pod is gone or no longer ours (deleted, bound elsewhere)."""
        uid = pod.uid
        self.nominator.nominate(pod, "")
        for heap in (self._active, self._backoff, self._error_backoff):
            heap.remove(uid)
        self._unschedulable.pop(uid, None)
        self._gated.pop(uid, None)
        flight = self._in_flight.get(uid)
        if flight is not None:
            flight.deleted = True  # its failure must not bring it back

    # ------------------------------------------------------------------ popping

    def pop_nowait(self) -> QueuedPodInfo | None:
        """The head of activeQ; when activeQ is empty, the head of the rejection backoffQ
        even if its backoff has not ended (PopFromBackoffQ). None when both are empty."""
        info = self._active.pop()
        if info is None:
            info = self._backoff.pop()
            if info is None:
                return None
            self._incoming(ACTIVE, POP_FROM_BACKOFF_Q)
        info.attempts += 1
        if info.initial_attempt_timestamp is None:
            info.initial_attempt_timestamp = self._clock.now()
        self._in_flight.start(info.pod)
        return info

    async def pop(self) -> QueuedPodInfo:
        """Wait for a pod to try. The caller must end its attempt with `done`,
        `add_unschedulable` or `requeue_after_bind_failure`."""
        while True:
            info = self.pop_nowait()
            if info is not None:
                return info
            self._work.clear()
            await self._work.wait()

    def done(self, uid: str) -> None:
        """The attempt of a popped pod is over (bound, or dropped)."""
        self._in_flight.end(uid)

    # ------------------------------------------------------------------ failures

    def add_unschedulable(
        self,
        info: QueuedPodInfo,
        *,
        unschedulable_plugins: Iterable[str],
        pending_plugins: Iterable[str] = (),
        error: bool = False,
    ) -> None:
        """A popped pod failed (AddUnschedulablePodIfNotPresent).

        Rejected by plugins: the unschedulable pool, unless an event seen while it was in flight
        may help (then backoffQ, or activeQ when its backoff is over or a Pending plugin said
        Queue). An error, or no plugin to blame: the error backoffQ. Ends the attempt.
        """
        uid = info.uid
        flight = self._in_flight.get(uid)
        try:
            if flight is not None and flight.deleted:
                return
            if self._find(uid) is not None:
                return  # re-added meanwhile (e.g. a re-list after `clear`)
            if flight is not None:
                info.pod = flight.pod  # the latest version seen while in flight
            info.unschedulable_plugins = set() if error else set(unschedulable_plugins)
            info.pending_plugins = set() if error else set(pending_plugins)
            if info.failed_with_error:
                info.consecutive_errors_count += 1
            else:
                info.unschedulable_count += 1
                info.consecutive_errors_count = 0
            info.timestamp = self._clock.now()
            info.flush_timestamp = None
            self._requeue(info, self._hint_for_returning(info, flight), SCHEDULE_ATTEMPT_FAILURE)
        finally:
            self.done(uid)

    def requeue_after_bind_failure(self, info: QueuedPodInfo) -> None:
        """The bind failed (or was refused): error backoff, as any scheduling error."""
        self.add_unschedulable(info, unschedulable_plugins=(), error=True)

    # ------------------------------------------------------------------ cluster events

    def on_cluster_event(
        self,
        event: ClusterEvent,
        old: object,
        new: object,
        *,
        pre_check: Callable[[Pod], bool] | None = None,  # e.g. only lower-priority pods
    ) -> None:
        """Something changed in the cluster (MoveAllToActiveOrBackoffQueue): move the
        unschedulable pods it may help, and remember it for pods now in flight."""
        if not self._event_of_interest(event):
            return
        candidates = [
            info
            for info in itertools.chain(self._unschedulable.values(), self._gated.values())
            if pre_check is None or pre_check(info.pod)
        ]
        self._move_from_pool(candidates, event, old, new)

    def flush(self, now: float | None = None) -> None:
        """Periodic housekeeping (about once a second): pods whose backoff is over go to activeQ;
        pods unschedulable for longer than `max_in_unschedulable` get an UnschedulableTimeout."""
        now = self._clock.now() if now is None else now
        for heap in (self._backoff, self._error_backoff):
            while (head := heap.peek()) is not None:
                if self._backoff_policy.is_backing_off(head, now):
                    break
                heap.pop()
                self._move_to_active(head, BACKOFF_COMPLETE, from_backoff=True)
        stale: list[QueuedPodInfo] = []
        for info in itertools.chain(self._unschedulable.values(), self._gated.values()):
            last = info.timestamp
            if info.flush_timestamp is not None and info.flush_timestamp > last:
                last = info.flush_timestamp
            if now - last > self._max_in_unschedulable:
                info.flush_timestamp = now
                stale.append(info)
        if stale:
            self._move_from_pool(stale, UNSCHEDULABLE_TIMEOUT, None, None, now=now)

    # ------------------------------------------------------------------ inspection

    def pending_counts(self) -> dict[str, int]:
        return {
            ACTIVE: len(self._active),
            BACKOFF: len(self._backoff) + len(self._error_backoff),
            UNSCHEDULABLE: len(self._unschedulable),
            GATED: len(self._gated),
        }

    def get(self, uid: str) -> QueuedPodInfo | None:
        """The queued (not in-flight) pod with this UID."""
        return self._find(uid)

    def queue_of(self, uid: str) -> str | None:
        """Which sub-queue holds the pod: active, backoff, unschedulable, gated or None."""
        if uid in self._active:
            return ACTIVE
        if uid in self._backoff or uid in self._error_backoff:
            return BACKOFF
        if uid in self._unschedulable:
            return UNSCHEDULABLE
        if uid in self._gated:
            return GATED
        return None

    def is_in_flight(self, uid: str) -> bool:
        return uid in self._in_flight

    def backoff_expiry(self, info: QueuedPodInfo) -> float | None:
        """When the pod's backoff ends (window-truncated); None when it has none."""
        return self._backoff_policy.expiry(info)

    def clear(self) -> None:
        """Drop everything, in-flight bookkeeping included (leadership lost)."""
        for heap in (self._active, self._backoff, self._error_backoff):
            heap.clear()
        self._unschedulable.clear()
        self._gated.clear()
        self._in_flight.clear()
        self.nominator.clear()

    def __contains__(self, uid: object) -> bool:
        return isinstance(uid, str) and self._find(uid) is not None

    def __len__(self) -> int:
        return sum(self.pending_counts().values())

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        """Every queued (not in-flight) pod, in no particular order."""
        yield from self._active.values()
        yield from self._backoff.values()
        yield from self._error_backoff.values()
        yield from self._unschedulable.values()
        yield from self._gated.values()

    # ------------------------------------------------------------------ moves

    def _move_from_pool(
        self,
        infos: list[QueuedPodInfo],
        event: ClusterEvent,
        old: object,
        new: object,
        *,
        now: float | None = None,
    ) -> None:
        label = event_label(event)
        wildcard = is_wildcard(event)
        for info in infos:
            table = self._table_for(info.pod)
            if (
                info.gated
                and not wildcard
                and (table is None or not table.plugin_interested_in(info.gating_plugin, event))
            ):
                continue  # only the gating plugin's events can release a gated pod
            strategy = worth_requeuing(info, event, old, new, table)
            if strategy is Strategy.SKIP:
                continue
            self._unschedulable.pop(info.uid, None)
            self._gated.pop(info.uid, None)
            self._requeue(info, strategy, label, now=now)
        self._in_flight.record(event, old, new)

    def _requeue(
        self, info: QueuedPodInfo, strategy: Strategy, event: str, *, now: float | None = None
    ) -> str:
        """Put `info` where `strategy` says (requeueEntityWithQueueingStrategy); returns the
        sub-queue it landed in (gated pods count as unschedulable, as in Go)."""
        if strategy is Strategy.SKIP:
            self._park(info, event)
            return UNSCHEDULABLE
        now = self._clock.now() if now is None else now
        if strategy is Strategy.AFTER_BACKOFF and self._backoff_policy.is_backing_off(info, now):
            return BACKOFF if self._move_to_backoff(info, event) else UNSCHEDULABLE
        return ACTIVE if self._move_to_active(info, event) else UNSCHEDULABLE

    def _move_to_active(
        self, info: QueuedPodInfo, event: str, *, from_backoff: bool = False
    ) -> bool:
        # PreEnqueue already ran when the pod entered backoffQ.
        if not from_backoff and self._gate(info):
            self._park(info, event)
            return False
        if info.initial_attempt_timestamp is None:
            info.initial_attempt_timestamp = self._clock.now()
        self._unschedulable.pop(info.uid, None)
        self._gated.pop(info.uid, None)
        self._push(self._active, info)
        self._incoming(ACTIVE, event)
        return True

    def _move_to_backoff(self, info: QueuedPodInfo, event: str) -> bool:
        if self._gate(info):
            self._park(info, event)
            return False
        self._unschedulable.pop(info.uid, None)
        self._gated.pop(info.uid, None)
        heap = self._error_backoff if info.failed_with_error else self._backoff
        self._push(heap, info)
        self._incoming(BACKOFF, event)
        return True

    def _park(self, info: QueuedPodInfo, event: str) -> None:
        """Into the unschedulable pool, or the gated set when PreEnqueue holds it back."""
        uid = info.uid
        was_there = self._unschedulable.pop(uid, None) or self._gated.pop(uid, None)
        (self._gated if info.gated else self._unschedulable)[uid] = info
        if was_there is None:
            self._incoming(UNSCHEDULABLE, event)

    def _push(self, heap: KeyedHeap[QueuedPodInfo], info: QueuedPodInfo) -> None:
        sort_key = self._sort_key(info)
        if heap is self._active:
            order = sort_key
        else:
            expiry = self._backoff_policy.expiry(info) or 0.0
            # Within one backoff window, pods leave in activeQ order; errors simply by expiry.
            order = (expiry, *sort_key) if heap is self._backoff else (expiry,)
        heap.push(info.uid, order, info)
        if heap is not self._error_backoff:
            self._work.set()

    def _gate(self, info: QueuedPodInfo) -> bool:
        """Run PreEnqueue; True when a plugin holds the pod back (recorded on `info`)."""
        framework = self._framework_for(info.pod)
        status = framework.run_pre_enqueue(info.pod) if framework is not None else None
        if status is None or status.is_success:
            info.gating_plugin = ""
            info.gating_message = ""
            return False
        plugin = status.plugin or "PreEnqueue"
        info.unschedulable_plugins.add(plugin)
        info.gating_plugin = plugin
        info.gating_message = status.message
        return True

    def _hint_for_returning(self, info: QueuedPodInfo, flight: Flight | None) -> Strategy:
        """Did anything seen while the pod was in flight make it worth retrying?"""
        if info.failed_with_error or flight is None:
            return Strategy.AFTER_BACKOFF
        table = self._table_for(info.pod)
        strategy = Strategy.SKIP
        for seen in self._in_flight.seen_by(flight):
            found = worth_requeuing(info, seen.event, seen.old, seen.new, table)
            if found is Strategy.IMMEDIATELY:
                return found
            if found is Strategy.AFTER_BACKOFF:
                strategy = found
                if not info.pending_plugins:
                    return strategy
        return strategy

    # ------------------------------------------------------------------ helpers

    def _find(self, uid: str) -> QueuedPodInfo | None:
        for heap in (self._active, self._backoff, self._error_backoff):
            info = heap.get(uid)
            if info is not None:
                return info
        return self._unschedulable.get(uid) or self._gated.get(uid)

    def _table_for(self, pod: Pod) -> HintTable | None:
        framework = self._framework_for(pod)
        if framework is None:
            return None
        table = self._tables.get(framework)
        if table is None:
            table = self._tables[framework] = HintTable(framework)
        return table

    def _event_of_interest(self, event: ClusterEvent) -> bool:
        """Does any profile with a pod waiting or in flight register this event?

        Go asks every profile; only profiles with pods here can be affected, and pods in the
        pool always have rejector plugins, so the answer is the same for every pod.
        """
        if is_wildcard(event):
            return True
        seen: set[int] = set()
        pods = itertools.chain(
            (info.pod for info in self._unschedulable.values()),
            (info.pod for info in self._gated.values()),
            self._in_flight.pods(),
        )
        for pod in pods:
            framework = self._framework_for(pod)
            if framework is None or id(framework) in seen:
                continue
            seen.add(id(framework))
            table = self._table_for(pod)
            if table is not None and table.interested_in(event):
                return True
        return False

    def _sort_key(self, info: QueuedPodInfo) -> tuple[Any, ...]:
        framework = self._framework_for(info.pod)
        if framework is None:
            return (-info.pod.priority, info.timestamp)  # PrioritySort, if the profile is gone
        return framework.queue_sort.sort_key(info.pod, info.timestamp)

    def _incoming(self, queue: str, event: str) -> None:
        if self._on_incoming is not None:
            self._on_incoming(queue, event)
