"""What users see, as kube-scheduler writes it: events and the PodScheduled condition.

`ApiReporter` implements `ports.Reporter`. Its methods only record intent and
return at once; a background task (`start()` / `stop()`) sends the writes with
bounded concurrency over the shared session.

What is written (kube-scheduler's handleSchedulingFailure and its binding cycle):

* Bound pod: an events.k8s.io/v1 Event, type Normal, reason `Scheduled`, action
  `Binding`, note `Successfully assigned <ns>/<name> to <node>`.
* Unschedulable pod or scheduling error: an Event, type Warning, reason
  `FailedScheduling`, action `Scheduling`, note = the message cut to 1024 bytes
  with a ` ...` suffix; and a strategic-merge PATCH of `pods/{name}/status` setting
  condition PodScheduled=False, reason Unschedulable or SchedulerError, message =
  the full text.
* Events plugins record through the framework handle (`record`, the engine's
  `EventRecorder`; upstream's only one among the default plugins is DynamicResources'
  Normal `BindingConditionsPending`): as given, aggregated like the others.
* reportingController is the profile's schedulerName; reportingInstance is the
  `instance` given at construction; regarding is the pod with its UID.

The policy that keeps thousands of unschedulable pods from flooding the API server:

1. Series aggregation, as client-go's events broadcaster does. Occurrences with the
   same regarding pod (UID), type, reason, action, reporting controller *and note*
   within `series_window` (6 min, client-go's finishTime) of the previous one are
   one Event. The first is created; the second PATCHes `series {count: 2,
   lastObservedTime}` at once; later ones only bump the count in memory, which is
   PATCHed at most once per `series_flush_interval` (default 30 s; client-go: 30 min)
   and once more when the series goes quiet. A series quiet for `series_window` is
   forgotten; the next occurrence starts a new Event. (client-go's key leaves the
   note out and so keeps counting under the first, stale note; the API makes
   `note` immutable, so a changed message here starts a new Event instead.)
2. Coalescing, latest message wins. Each pod has at most one pending condition
   patch: a newer failure replaces an unsent one. A FailedScheduling Event whose
   creation has not been sent yet is dropped when the same pod fails again with a
   different message. So the backlog is bounded by the number of pods, and under
   load superseded messages are never sent.
3. Skipping unchanged conditions, as upstream's updatePod does: no PATCH when the
   last condition this reporter wrote for the pod (a per-UID memo, bounded) has the
   same reason and message. A re-sent False condition omits lastTransitionTime so
   the server keeps the original transition time.
4. A token bucket (`qps`, `burst`) over all of the reporter's writes, and at most
   `max_in_flight` requests at once; writes are sent oldest first.
5. Failures are classified: 404 on a series patch re-creates the Event (it
   expired), 404 on a condition drops it (pod gone), other 4xx except 403 drop
   the write (logged: a request the server refuses will not succeed by
   repetition). Transport errors and transient statuses (`api.TRANSIENT_STATUSES`)
   retry with doubling delays of at most `RETRY_DELAY_MAX`, up to `max_attempts`:
   about 85 s, so a restarting API server still gets the Scheduled events of pods
   bound just before it went away (client-go's event sink tries 12 times, 10 s apart).

Known difference: a condition patch still in flight when the pod gets bound can land
after the binding and overwrite PodScheduled=True. `scheduled()` drops pending
(unsent) condition patches of the pod, and one in flight is not retried if it fails,
which covers the common cases; kube-scheduler has the same window with its
asynchronous API calls.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple

from berth.engine.model.pod import Pod
from berth.kube.api import ApiError, ApiSession, ApiTransportError, is_transient
from berth.scheduling.ports import Clock, SchedulingReason

__all__ = [
    "NOTE_LENGTH_LIMIT",
    "ApiReporter",
    "EventKey",
    "TokenBucket",
    "condition_patch",
    "event_body",
    "format_micro_time",
    "format_time",
    "truncate_note",
]

logger = logging.getLogger(__name__)

NOTE_LENGTH_LIMIT = 1024  # k8s.io/api validation NoteLengthLimit, in bytes
_TRUNCATION_SUFFIX = " ..."

SERIES_WINDOW = 6 * 60.0
SERIES_FLUSH_INTERVAL = 30.0
SWEEP_INTERVAL = 1.0
DEFAULT_QPS = 200.0
DEFAULT_BURST = 500
DEFAULT_MAX_IN_FLIGHT = 8
DEFAULT_MAX_ATTEMPTS = 12
RETRY_DELAY = 1.0
RETRY_DELAY_MAX = 10.0
CONDITION_MEMO_SIZE = 65536


def truncate_note(message: str) -> str:
    """kube-scheduler's truncateMessage: at most 1024 bytes, ending ` ...` when cut."""
    encoded = message.encode("utf-8")
    if len(encoded) <= NOTE_LENGTH_LIMIT:
        return message
    head = encoded[: NOTE_LENGTH_LIMIT - len(_TRUNCATION_SUFFIX)]
    # Never split a UTF-8 sequence (Go slices bytes; the API would then reject the note).
    return head.decode("utf-8", errors="ignore") + _TRUNCATION_SUFFIX


def format_micro_time(moment: datetime) -> str:
    """metav1.MicroTime: RFC 3339 with microseconds, UTC."""
    utc = moment.astimezone(UTC).replace(tzinfo=None)
    return utc.isoformat(timespec="microseconds") + "Z"  # ~5x faster than strftime


def format_time(moment: datetime) -> str:
    """metav1.Time: RFC 3339 to the second, UTC."""
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def pod_reference(pod: Pod) -> dict[str, str]:
    reference = {
        "apiVersion": "v1",
        "kind": "Pod",
        "namespace": pod.namespace,
        "name": pod.name,
        "uid": pod.uid,
    }
    if pod.resource_version:
        reference["resourceVersion"] = pod.resource_version
    return reference


def event_body(
    *,
    name: str,
    pod: Pod,
    type: str,
    reason: str,
    action: str,
    note: str,
    controller: str,
    instance: str,
    event_time: str,
) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": pod.namespace},
        "eventTime": event_time,
        "reportingController": controller,
        "reportingInstance": instance,
        "action": action,
        "reason": reason,
        "type": type,
        "note": note,
        "regarding": pod_reference(pod),
    }


def condition_patch(
    reason: SchedulingReason,
    message: str,
    *,
    generation: int,
    transition_time: str | None,
) -> dict[str, Any]:
    """Strategic merge patch for pods/status: PodScheduled=False (merged by `type`).

    `transition_time` None leaves the server's lastTransitionTime as it is (the
    status did not change, as in upstream's UpdatePodCondition).
    """
    condition: dict[str, Any] = {
        "type": "PodScheduled",
        "status": "False",
        "reason": reason.value,
        "message": message,
        "lastProbeTime": None,
    }
    if transition_time is not None:
        condition["lastTransitionTime"] = transition_time
    if generation > 0:
        condition["observedGeneration"] = generation
    return {"status": {"conditions": [condition]}}


class EventKey(NamedTuple):
    """What makes two occurrences the same Event (isomorphic, in client-go's words)."""

    namespace: str
    regarding_uid: str
    type: str
    reason: str
    action: str
    controller: str
    note: str


@dataclass(slots=True)
class _Series:
    body: dict[str, Any]
    count: int
    last_observed: float  # monotonic
    last_observed_wall: datetime  # for series.lastObservedTime, formatted when sent
    created: bool = False
    sent_count: int = 0
    last_sent: float = float("-inf")


@dataclass(slots=True)
class _ConditionUpdate:
    namespace: str
    name: str
    reason: SchedulingReason
    message: str
    patch: dict[str, Any] = field(default_factory=dict)


_JobKey = tuple[str, Any]  # ("event", EventKey) or ("condition", pod uid)


class TokenBucket:
    """`rate` tokens a second, at most `burst` saved; time from the injected clock."""

    def __init__(self, rate: float, burst: int, clock: Clock) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be > 0 and burst >= 1")
        self.rate = rate
        self.burst = float(burst)
        self._clock = clock
        self._tokens = float(burst)
        self._updated = clock.now()

    def take(self) -> float:
        """Take a token if one is there (returns 0), else the seconds until one will be."""
        now = self._clock.now()
        self._tokens = min(self.burst, self._tokens + (now - self._updated) * self.rate)
        self._updated = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return 0.0
        return (1.0 - self._tokens) / self.rate


class ApiReporter:
    """`ports.Reporter` against events.k8s.io/v1 and pods/status; see the module docstring."""

    def __init__(
        self,
        session: ApiSession,
        *,
        clock: Clock,  # monotonic: windows, flush intervals, retries, rate limit
        instance: str,
        wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),  # test seam
        qps: float | None = DEFAULT_QPS,  # None: no rate limit
        burst: int = DEFAULT_BURST,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        series_window: float = SERIES_WINDOW,
        series_flush_interval: float = SERIES_FLUSH_INTERVAL,
        sweep_interval: float = SWEEP_INTERVAL,
        condition_memo_size: int = CONDITION_MEMO_SIZE,
    ) -> None:
        self._session = session
        self._clock = clock
        self._wall_clock = wall_clock
        self.instance = instance
        self._bucket = TokenBucket(qps, burst, clock) if qps is not None else None
        self._max_in_flight = max_in_flight
        self._max_attempts = max_attempts
        self._series_window = series_window
        self._flush_interval = series_flush_interval
        self._sweep_interval = sweep_interval
        self._memo_size = condition_memo_size

        # Ordered by last observation (oldest first), so that a sweep reads only the quiet ones.
        self._series: OrderedDict[EventKey, _Series] = OrderedDict()
        self._latest_failure: dict[str, EventKey] = {}  # pod uid -> its last FailedScheduling
        self._conditions: dict[str, _ConditionUpdate] = {}  # pod uid -> pending patch
        # Pods bound or gone while their condition patch was in flight: never retry it.
        self._withdrawn: set[str] = set()
        self._memo: OrderedDict[str, tuple[SchedulingReason, str]] = OrderedDict()

        self._ready: dict[_JobKey, None] = {}  # insertion-ordered set: send oldest first
        self._deferred: dict[_JobKey, float] = {}  # key -> monotonic due time
        self._in_flight: set[_JobKey] = set()
        self._held: set[_JobKey] = set()  # new work for a key that is in flight
        self._attempts: dict[_JobKey, int] = {}
        self._last_event_nanos = 0
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

        self.sent_requests = 0  # for tests and benchmarks: writes attempted

    # -- ports.Reporter ---------------------------------------------------------------------

    def scheduled(self, pod: Pod, node_name: str, *, profile: str) -> None:
        note = f"Successfully assigned {pod.namespace}/{pod.name} to {node_name}"
        self._record(pod, "Normal", "Scheduled", "Binding", note, profile)
        # The binding set PodScheduled=True; an unsent False would undo it.
        self._withdraw_condition(pod.uid)

    def failed(self, pod: Pod, message: str, *, reason: SchedulingReason, profile: str) -> None:
        key = self._record(
            pod, "Warning", "FailedScheduling", "Scheduling", truncate_note(message), profile
        )
        previous = self._latest_failure.get(pod.uid)
        if previous is not None and previous != key:
            self._drop_unsent_series(previous)
        self._latest_failure[pod.uid] = key
        self._request_condition(pod, reason, message)

    # -- the engine's EventRecorder ----------------------------------------------------------

    def record(
        self, pod: Pod, *, profile: str, event_type: str, reason: str, action: str, note: str
    ) -> None:
        self._record(pod, event_type, reason, action, note, profile)

    def forget(self, pod_uid: str) -> None:
        """The pod is gone: drop its pending condition patch and memo (events stay)."""
        self._withdraw_condition(pod_uid)

    def _withdraw_condition(self, pod_uid: str) -> None:
        job = ("condition", pod_uid)
        self._conditions.pop(pod_uid, None)
        self._unready(job)
        if job in self._in_flight:
            self._withdrawn.add(pod_uid)
        self._memo.pop(pod_uid, None)
        self._latest_failure.pop(pod_uid, None)

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        """Start the senders and the sweeper; call inside the running event loop."""
        if self._tasks:
            return
        self._tasks = [asyncio.create_task(self._worker()) for _ in range(self._max_in_flight)]
        self._tasks.append(asyncio.create_task(self._sweeper()))

    async def stop(self, *, flush_timeout: float = 5.0) -> None:
        """Send what is ready (up to `flush_timeout` seconds), then stop the tasks."""
        try:
            await asyncio.wait_for(self.drain(), flush_timeout)
        except TimeoutError:
            logger.warning("reporter stopped with %d writes unsent", self.pending_writes)
        finally:
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            self._tasks = []

    async def drain(self) -> None:
        """Send everything due now; return when nothing is ready or in flight.

        Works with or without `start()` (tests drive it with a fake clock).
        """
        self._sweep()
        while self._ready or self._in_flight:
            if self._ready and not self._tasks:
                batch = [self._take() for _ in range(min(len(self._ready), self._max_in_flight))]
                await asyncio.gather(*(self._process(key) for key in batch if key is not None))
            else:
                await asyncio.sleep(0.005)

    @property
    def pending_writes(self) -> int:
        return len(self._ready) + len(self._deferred) + len(self._held)

    # -- recording (synchronous, called from the scheduling loop) ----------------------------

    def _record(
        self, pod: Pod, type: str, reason: str, action: str, note: str, profile: str
    ) -> EventKey:
        key = EventKey(pod.namespace, pod.uid, type, reason, action, profile, note)
        now = self._clock.now()
        wall = self._wall_clock()
        series = self._series.get(key)
        if series is not None and now - series.last_observed <= self._series_window:
            series.count += 1
            series.last_observed = now
            series.last_observed_wall = wall
            self._series.move_to_end(key)
            if series.created and series.sent_count < 2:
                self._make_ready(("event", key))  # the count=2 patch goes at once
            elif series.created:
                self._defer(("event", key), series.last_sent + self._flush_interval)
            # not created yet: the pending create will carry the count
            return key
        body = event_body(
            name=self._event_name(pod.name, wall),
            pod=pod,
            type=type,
            reason=reason,
            action=action,
            note=note,
            controller=profile,
            instance=self.instance,
            event_time=format_micro_time(wall),
        )
        self._series[key] = _Series(body=body, count=1, last_observed=now, last_observed_wall=wall)
        self._series.move_to_end(key)  # a quiet series of the same key starts again
        self._make_ready(("event", key))
        return key

    def _event_name(self, pod_name: str, wall: datetime) -> str:
        # client-go: "<name>.<unix nanos in hex>"; kept strictly increasing so that a
        # coarse clock never produces the same name twice.
        nanos = max(int(wall.timestamp() * 1e9), self._last_event_nanos + 1)
        self._last_event_nanos = nanos
        name = f"{pod_name}.{nanos:x}"
        return name if len(name) <= 253 else str(uuid.uuid4())

    def _drop_unsent_series(self, key: EventKey) -> None:
        series = self._series.get(key)
        job = ("event", key)
        if series is not None and not series.created and job not in self._in_flight:
            del self._series[key]
            self._unready(job)

    def _request_condition(self, pod: Pod, reason: SchedulingReason, message: str) -> None:
        job = ("condition", pod.uid)
        self._withdrawn.discard(pod.uid)
        previous = self._memo.get(pod.uid)
        if job not in self._in_flight and previous == (reason, message):
            self._conditions.pop(pod.uid, None)  # the server already has the latest
            self._unready(job)
            return
        # Status already False (we wrote it): keep the server's transition time.
        transition = None if previous is not None else format_time(self._wall_clock())
        patch = condition_patch(
            reason, message, generation=pod.generation, transition_time=transition
        )
        self._conditions[pod.uid] = _ConditionUpdate(
            pod.namespace, pod.name, reason, message, patch
        )
        self._make_ready(job)

    # -- scheduling of jobs -----------------------------------------------------------------

    def _make_ready(self, job: _JobKey) -> None:
        if job in self._in_flight:
            self._held.add(job)
            return
        self._deferred.pop(job, None)
        self._ready[job] = None
        self._wake.set()

    def _defer(self, job: _JobKey, due: float) -> None:
        if job in self._in_flight:
            self._held.add(job)
        elif job not in self._ready and job not in self._deferred:
            self._deferred[job] = due

    def _unready(self, job: _JobKey) -> None:
        self._ready.pop(job, None)
        self._deferred.pop(job, None)
        self._held.discard(job)
        self._attempts.pop(job, None)

    def _take(self) -> _JobKey | None:
        for job in self._ready:
            del self._ready[job]
            return job
        return None

    def _sweep(self) -> None:
        """Move due deferred jobs to ready; forget quiet series."""
        now = self._clock.now()
        for job, due in list(self._deferred.items()):
            if due <= now:
                del self._deferred[job]
                self._ready[job] = None
        quiet: list[tuple[EventKey, _Series]] = []
        for key, series in self._series.items():
            if now - series.last_observed <= self._series_window:
                break  # every later series was observed more recently
            quiet.append((key, series))
        for key, series in quiet:
            job = ("event", key)
            if job in self._ready or job in self._deferred or job in self._in_flight:
                continue
            if series.count > series.sent_count and series.created:
                self._ready[job] = None  # the final count of a finished series
            else:
                del self._series[key]
                if self._latest_failure.get(key.regarding_uid) == key:
                    del self._latest_failure[key.regarding_uid]
        if self._ready:
            self._wake.set()

    # -- sending ----------------------------------------------------------------------------

    async def _worker(self) -> None:
        while True:
            job = self._take()
            if job is None:
                self._wake.clear()
                await self._wake.wait()
                continue
            self._in_flight.add(job)  # reserve before waiting for a token
            try:
                await self._throttle()
            finally:
                self._in_flight.discard(job)
            await self._process(job)

    async def _sweeper(self) -> None:
        while True:
            await asyncio.sleep(self._sweep_interval)
            self._sweep()

    async def _throttle(self) -> None:
        if self._bucket is None:
            return
        while (wait := self._bucket.take()) > 0:
            await asyncio.sleep(wait)

    async def _process(self, job: _JobKey) -> None:
        self._in_flight.add(job)
        try:
            kind, subject = job
            if kind == "event":
                await self._sync_event(subject)
            else:
                await self._sync_condition(subject)
        finally:
            self._in_flight.discard(job)
        if job in self._held:
            self._held.discard(job)
            self._after_held(job)

    def _after_held(self, job: _JobKey) -> None:
        kind, subject = job
        if kind == "condition":
            if subject in self._conditions:
                self._make_ready(job)
            return
        series = self._series.get(subject)
        if series is None:
            return
        if not series.created or series.sent_count < 2:
            self._make_ready(job)
        elif series.count > series.sent_count:
            self._defer(job, series.last_sent + self._flush_interval)

    async def _sync_event(self, key: EventKey) -> None:
        series = self._series.get(key)
        if series is None:
            return  # superseded before it was sent
        job = ("event", key)
        count = series.count
        observed = format_micro_time(series.last_observed_wall)
        namespace = key.namespace
        self.sent_requests += 1
        try:
            if series.created:
                name = series.body["metadata"]["name"]
                patch = {"series": {"count": count, "lastObservedTime": observed}}
                try:
                    await self._session.patch_json(
                        f"/apis/events.k8s.io/v1/namespaces/{namespace}/events/{name}",
                        patch,
                        content_type="strategic",
                    )
                except ApiError as error:
                    if error.status != 404:
                        raise
                    series.created = False  # expired (event TTL): create it again
                    self._make_ready(job)
                    return
            else:
                body = series.body
                if count >= 2:
                    body = {**body, "series": {"count": count, "lastObservedTime": observed}}
                try:
                    await self._session.post_json(
                        f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", body
                    )
                except ApiError as error:
                    if error.status != 409:
                        raise
                    # AlreadyExists: an earlier attempt landed but its answer was lost.
                series.created = True
        except (ApiError, ApiTransportError) as error:
            if self._retry(job, error):
                return
            self._series.pop(key, None)
            return
        self._attempts.pop(job, None)
        series.sent_count = count
        series.last_sent = self._clock.now()
        if series.count > series.sent_count:
            if series.sent_count < 2:
                self._make_ready(job)
            else:
                self._defer(job, series.last_sent + self._flush_interval)

    async def _sync_condition(self, uid: str) -> None:
        update = self._conditions.pop(uid, None)
        if update is None:
            self._withdrawn.discard(uid)
            return
        job = ("condition", uid)
        path = f"/api/v1/namespaces/{update.namespace}/pods/{update.name}/status"
        self.sent_requests += 1
        try:
            await self._session.patch_json(path, update.patch, content_type="strategic")
        except (ApiError, ApiTransportError) as error:
            if uid in self._withdrawn:  # bound or gone meanwhile: the patch is moot
                self._withdrawn.discard(uid)
                self._attempts.pop(job, None)
                return
            if isinstance(error, ApiError) and error.status == 404:
                self._memo.pop(uid, None)
                self._attempts.pop(job, None)
                return
            if self._retry(job, error):
                self._conditions.setdefault(uid, update)  # unless a newer one arrived
            return
        self._attempts.pop(job, None)
        if uid in self._withdrawn:
            self._withdrawn.discard(uid)
            return
        self._memo[uid] = (update.reason, update.message)
        self._memo.move_to_end(uid)
        while len(self._memo) > self._memo_size:
            self._memo.popitem(last=False)

    def _retry(self, job: _JobKey, error: ApiError | ApiTransportError) -> bool:
        """Schedule another attempt if the failure is transient; False means give up."""
        transient = is_transient(error)
        attempts = self._attempts.get(job, 0) + 1
        if not transient or attempts >= self._max_attempts:
            self._attempts.pop(job, None)
            logger.warning("dropping %s write after %d attempt(s): %s", job[0], attempts, error)
            return False
        self._attempts[job] = attempts
        delay = min(RETRY_DELAY * 2 ** (attempts - 1), RETRY_DELAY_MAX)
        if job in self._in_flight:
            self._held.discard(job)
        self._deferred[job] = self._clock.now() + delay
        return True
