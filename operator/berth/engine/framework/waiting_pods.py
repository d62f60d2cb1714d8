"""Pods held at Permit: assumed on a node, waiting for plugins to allow them.

A Permit plugin that answers Wait names a timeout; the pod then waits here
until every waiting plugin allows it (it binds), any plugin rejects it, or a
timeout fires (both: Unschedulable). Plugins reach waiting pods through their
handle, which is how a gang plugin releases a whole group at once. Timers are
not the engine's business: the binding cycle arms them and calls `reject` when
one fires; `on_done` tells it when the verdict is in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from berth.engine.framework.status import SUCCESS, Code, Status
from berth.engine.model.pod import Pod

# kube-scheduler caps every Permit wait at 15 minutes.
MAX_PERMIT_WAIT_SECONDS = 15 * 60.0


def go_duration(seconds: float) -> str:
    """`seconds` as Go's time.Duration prints it ("10s", "1m30s", "500ms", "15m0s")."""
    nanos = round(seconds * 1e9)
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    if nanos < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if nanos >= size:
                return sign + _fraction(nanos, size) + unit
    hours, rest = divmod(nanos, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    text = _fraction(rest, 1_000_000_000) + "s"
    if hours or minutes:
        text = f"{minutes}m" + text
    if hours:
        text = f"{hours}h" + text
    return sign + text


def _fraction(value: int, unit: int) -> str:
    whole, part = divmod(value, unit)
    if not part:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}." + f"{part:0{digits}d}".rstrip("0")


def timeout_message(plugin: str, seconds: float) -> str:
    return f"rejected due to timeout after waiting {go_duration(seconds)} at plugin {plugin}"


class WaitingPod:
    def __init__(self, pod: Pod, node_name: str, waits: Mapping[str, float]) -> None:
        self.pod = pod
        self.node_name = node_name
        self.waits = dict(waits)  # plugin -> seconds it asked to wait
        self._pending = set(waits)
        self._verdict: Status | None = None
        self._listeners: list[Callable[[Status], None]] = []

    @property
    def pending_plugins(self) -> list[str]:
        return sorted(self._pending)

    @property
    def verdict(self) -> Status | None:
        """None while waiting; then Success, or the rejection (or preemption) status."""
        return self._verdict

    def allow(self, plugin: str) -> None:
        """`plugin` lets the pod go; it binds once no plugin is left waiting."""
        self._pending.discard(plugin)
        if not self._pending:
            self._finish(SUCCESS)

    def reject(self, plugin: str, message: str) -> bool:
        """The pod is unschedulable; False when a verdict was already given."""
        return self._finish(Status(Code.UNSCHEDULABLE, (message,), plugin))

    def preempt(self, plugin: str, message: str) -> bool:
        """The pod is evicted from its wait as a preemption victim (an error, not a rejection)."""
        return self._finish(Status(Code.ERROR, (message,), plugin))

    def on_done(self, listener: Callable[[Status], None]) -> None:
        if self._verdict is not None:
            listener(self._verdict)
        else:
            self._listeners.append(listener)

    def _finish(self, verdict: Status) -> bool:
        if self._verdict is not None:
            return False
        self._verdict = verdict
        self._pending.clear()
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener(verdict)
        return True


class WaitingPods:
    """One profile's waiting pods by UID."""

    def __init__(self) -> None:
        self._by_uid: dict[str, WaitingPod] = {}

    def add(self, waiting: WaitingPod) -> None:
        self._by_uid[waiting.pod.uid] = waiting

    def remove(self, uid: str) -> None:
        self._by_uid.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        return self._by_uid.get(uid)

    def reject(self, uid: str, message: str = "removed") -> bool:
        """Reject a waiting pod (it was deleted, say); False when it is not waiting."""
        waiting = self._by_uid.get(uid)
        return waiting is not None and waiting.reject("", message)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._by_uid.values()))

    def __len__(self) -> int:
        return len(self._by_uid)

    def __contains__(self, uid: object) -> bool:
        return uid in self._by_uid
