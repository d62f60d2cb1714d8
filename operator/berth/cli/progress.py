"""A progress line on a terminal for long CLI runs (thousands of pods, cluster snapshots).

A run over thousands of pods takes long enough that a silent terminal looks hung. The line goes to
stderr, and only when stderr is a terminal: piped or captured stderr carries answers and errors
only, so scripts and tests never see it. It is rewritten in place (carriage return) at most every
`STEP_FRACTION` of the work or every `INTERVAL_SECONDS`, whichever comes first, and ends with a
newline when the work is done, so that what follows starts on a clean line.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["LONG_RUN", "TerminalProgress", "listing_progress", "terminal_progress"]

LONG_RUN = 500  # up to this many items finish before anyone wonders
STEP_FRACTION = 0.05
INTERVAL_SECONDS = 1.0


class TerminalProgress:
    """Called with (done, total) after each item; writes "<verb> done/total <noun>" when due."""

    def __init__(
        self,
        stream: TextIO,
        *,
        verb: str = "placed",
        noun: str = "pods",
        clock: Callable[[], float] = time.monotonic,  # test seam
    ) -> None:
        self._stream = stream
        self._verb = verb
        self._noun = noun
        self._clock = clock
        self._last_time = clock()
        self._last_done = 0

    def __call__(self, done: int, total: int) -> None:
        finished = done >= total
        now = self._clock()
        step_reached = done - self._last_done >= max(1, int(total * STEP_FRACTION))
        if not (finished or step_reached or now - self._last_time >= INTERVAL_SECONDS):
            return
        self._last_time, self._last_done = now, done
        end = "\n" if finished else ""
        try:
            self._stream.write(f"\r{self._verb} {done}/{total} {self._noun}{end}")
            self._stream.flush()
        except OSError:
            pass  # a progress line is a courtesy: a terminal that went away must not stop the work


def terminal_progress(
    stream: TextIO, *, total: int, verb: str = "placed", noun: str = "pods"
) -> TerminalProgress | None:
    """A progress reporter for `total` items, or None when the run is short or `stream` no terminal."""
    if total <= LONG_RUN or not _is_terminal(stream):
        return None
    return TerminalProgress(stream, verb=verb, noun=noun)


def listing_progress(stream: TextIO) -> TerminalProgress | None:
    """Progress of reading a cluster (collection by collection), on a terminal only: the API
    server may take seconds per collection of a large cluster."""
    if not _is_terminal(stream):
        return None
    return TerminalProgress(stream, verb="listed", noun="kinds of object from the cluster")


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # an object without a descriptor, or a closed one
        return False
