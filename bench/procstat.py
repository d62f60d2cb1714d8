"""CPU time and resident memory of a scheduler process, read from /proc.

The same readings for every scheduler under test: CPU is utime + stime of the
whole process (all threads) from /proc/<pid>/stat, memory is VmRSS sampled
while the run goes on, plus the kernel's own high-water mark VmHWM.
"""

from __future__ import annotations

import asyncio
import contextlib
import os

__all__ = ["ProcessSampler", "cpu_seconds", "memory_bytes"]

_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of `pid` in seconds (0.0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            text = stat.read()
    except OSError:
        return 0.0
    # The command name (field 2) may contain spaces; fields after it are plain.
    fields = text[text.rindex(")") + 2 :].split()
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of stat(5)
    return (utime + stime) / _TICKS_PER_SECOND


def memory_bytes(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of `pid` in bytes; zeros if it is gone."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss, hwm


class ProcessSampler:
    """Samples VmRSS of one process every `interval` seconds in the background."""

    def __init__(self, pid: int | None, *, interval: float = 0.25) -> None:
        self.pid = pid
        self.interval = interval
        self.peak_rss = 0
        self.high_water_mark = 0
        self._task: asyncio.Task[None] | None = None

    def sample(self) -> None:
        if self.pid is None:
            return
        rss, hwm = memory_bytes(self.pid)
        self.peak_rss = max(self.peak_rss, rss)
        self.high_water_mark = max(self.high_water_mark, hwm)

    def cpu(self) -> float | None:
        return cpu_seconds(self.pid) if self.pid is not None else None

    async def _run(self) -> None:
        while True:
            self.sample()
            await asyncio.sleep(self.interval)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.sample()
