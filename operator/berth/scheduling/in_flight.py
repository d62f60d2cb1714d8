"""Pods being scheduled, and the cluster events they have not seen yet.

A popped pod is judged on a snapshot; an event that arrives before it comes back may be the one
that helps it, so the queue keeps every event seen while any pod is in flight and replays those
after a pod's pop when it fails (kube-scheduler's inFlightPods / inFlightEvents).
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from berth.engine.framework.events import ClusterEvent
from berth.engine.model.pod import Pod

__all__ = ["Flight", "InFlight", "Seen"]


@dataclass(slots=True)
class Flight:
    since: int  # sequence number at pop
    pod: Pod  # the latest version seen while in flight
    deleted: bool = False  # deleted meanwhile: must not be requeued


@dataclass(frozen=True, slots=True)
class Seen:
    seq: int
    event: ClusterEvent
    old: object
    new: object


class InFlight:
    def __init__(self) -> None:
        self._flights: dict[str, Flight] = {}
        self._seen: deque[Seen] = deque()
        self._seq = itertools.count()

    def start(self, pod: Pod) -> None:
        self._flights[pod.uid] = Flight(next(self._seq), pod)

    def get(self, uid: str) -> Flight | None:
        return self._flights.get(uid)

    def record(self, event: ClusterEvent, old: object, new: object) -> None:
        """Keep `event` for the pods in flight now (nothing is kept when none is)."""
        if self._flights:
            self._seen.append(Seen(next(self._seq), event, old, new))

    def seen_by(self, flight: Flight) -> Iterator[Seen]:
        """The events that arrived after `flight` was popped."""
        return (seen for seen in self._seen if seen.seq > flight.since)

    def end(self, uid: str) -> None:
        """Forget `uid`, and the events no remaining flight can need."""
        if self._flights.pop(uid, None) is None:
            return
        if not self._flights:
            self._seen.clear()
            return
        oldest = min(flight.since for flight in self._flights.values())
        while self._seen and self._seen[0].seq < oldest:
            self._seen.popleft()

    def pods(self) -> Iterator[Pod]:
        return (flight.pod for flight in self._flights.values())

    def clear(self) -> None:
        self._flights.clear()
        self._seen.clear()

    def __contains__(self, uid: object) -> bool:
        return uid in self._flights

    def __bool__(self) -> bool:
        return bool(self._flights)
