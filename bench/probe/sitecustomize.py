"""Counters inside a scheduler process under test, for `bench.profile_berth` (never shipped).

Python imports `sitecustomize` at start-up from the first directory on sys.path that
holds one; bench/probe/ is put on PYTHONPATH only for profiled trials, and only when
BERTH_BENCH_PROBE names a file. py-spy cannot see the cyclic garbage collector (its time
is charged to whatever Python frame allocated), so the collector is timed here: a
`gc.callbacks` pair sums the CPU seconds of the collecting thread (`time.thread_time`,
so that waiting for a core on a busy machine is not counted) per generation. A daemon thread writes the
running totals to the file four times a second; the driver reads them at both ends of
the measured phase.
"""

from __future__ import annotations

import gc
import json
import os
import threading
import time

_PATH = os.environ.get("BERTH_BENCH_PROBE")

if _PATH:
    _seconds = [0.0, 0.0, 0.0]
    _collections = [0, 0, 0]
    _started: list[float] = []

    def _on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            _started.append(time.thread_time())
        elif _started:
            generation = info["generation"]
            _seconds[generation] += time.thread_time() - _started.pop()
            _collections[generation] += 1

    def _write_forever(path: str) -> None:
        while True:
            text = json.dumps({"gc_seconds": _seconds, "gc_collections": _collections})
            with open(f"{path}.tmp", "w", encoding="ascii") as out:
                out.write(text)
            os.replace(f"{path}.tmp", path)
            time.sleep(0.25)

    gc.callbacks.append(_on_gc)
    threading.Thread(target=_write_forever, args=(_PATH,), daemon=True, name="probe").start()
