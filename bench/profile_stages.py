"""Where a pod's CPU goes: py-spy samples of Berth sorted into the stages of its path.

A raw (collapsed-stack) py-spy profile says which functions were on the stack; a
reader wants to know which *stage* of a pod's journey paid for them: kopf reading
and decoding the watch stream, kopf's per-event dispatch, Berth's parse into the
engine model, the queue, the decision, the binding POST, the event POST, metrics.
Each sample is given to the first stage (in `STAGES` order, most specific first)
one of whose markers appears in its stack; its share of the samples times the
process's CPU seconds over the measured phase, divided by the pods, is the stage's
milliseconds per pod.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

__all__ = ["STAGES", "Rule", "stage_of", "stage_shares"]

# (stage, alternatives): a sample belongs to the stage if, for one alternative, every marker
# is a substring of some frame of its stack ("function (path:line)").
Rule = tuple[tuple[str, ...], ...]
STAGES: tuple[tuple[str, Rule], ...] = (
    ("logging", (("logging/__init__.py",),)),
    (
        "metrics (prometheus_client, Berth's observer)",
        (("prometheus_client/",), ("kube/metrics.py",), ("kube/observer.py",)),
    ),
    ("kopf: body deep copies (diff-base essence)", (("kopf/", "copy.py"),)),
    (
        "kopf: JSON decode of the watch stream",
        (("kopf/_cogs/clients/", "json/"), ("kopf/_cogs/clients/", "orjson")),
    ),
    ("Berth: parse into the engine model (Pod/Node.from_dict)", (("berth/engine/model/",),)),
    (
        "Berth: intake (cache, queue, cluster events)",
        (("kube/app.py",), ("kube/handlers.py",), ("scheduling/intake.py",)),
    ),
    ("kopf: watch stream read (aiohttp)", (("kopf/_cogs/clients/",),)),
    ("kopf: per-event dispatch (workers, causes, handler invocation)", (("kopf/_",),)),
    ("binding POST (binder, aiohttp)", (("kube/binder.py",),)),
    ("events and conditions (reporter, aiohttp)", (("kube/reporting.py",),)),
    (
        "decision (scheduling cycle, queue pop, assume)",
        (("scheduling/loop.py",), ("scheduling/scheduling_cycle.py",), ("berth/engine/",)),
    ),
    ("binding cycle bookkeeping", (("scheduling/binding_cycle.py",),)),
    ("aiohttp I/O callbacks (responses read in the event loop)", (("aiohttp/",),)),
    ("asyncio event loop (task switches, timers)", (("asyncio/",),)),
)
LOOP = "asyncio event loop (task switches, timers)"
OTHER = "other"


def _task_frames(frames: list[str]) -> list[str]:
    """The frames above the event loop's dispatch: the running task or callback alone.

    Every sample of the loop thread starts with kopf.run and the loop's own frames;
    only what the loop is running tells the stage. asyncio's loop shows its dispatch
    frames; uvloop's is native code, so there the task's frames follow kopf.run's.
    """
    for index in range(len(frames) - 1, -1, -1):
        if frames[index].startswith(("Handle._run (", "BaseEventLoop._run_once (")):
            return frames[index + 1 :]
    for index, frame in enumerate(frames):
        if frame.startswith("run (kopf/_core/reactor/running.py"):
            return frames[index + 1 :]
    return frames


def stage_of(
    frames: Iterable[str], stages: tuple[tuple[str, Rule], ...] = STAGES, *, by_task: bool = True
) -> str:
    """The first of `stages` the sample's stack matches; `by_task` looks only at the frames
    of the task the event loop runs (a pod's path), else at the whole stack (start-up)."""
    stack = _task_frames(list(frames)) if by_task else list(frames)
    if not stack:
        return LOOP
    for stage, alternatives in stages:
        for markers in alternatives:
            if all(any(marker in frame for frame in stack) for marker in markers):
                return stage
    return OTHER


def stage_shares(
    raw: Path, stages: tuple[tuple[str, Rule], ...] = STAGES, *, by_task: bool = True
) -> tuple[dict[str, float], int]:
    """Each stage's share of the active samples in a raw py-spy profile, and the sample count."""
    counts: Counter[str] = Counter()
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        frames = [f for f in stack.split(";") if not f.startswith(("process ", "thread "))]
        if any("sitecustomize.py" in frame for frame in frames):
            continue  # the probe's own thread (bench/probe/), not Berth
        counts[stage_of(frames, stages, by_task=by_task)] += int(count_text)
    total = sum(counts.values())
    return {stage: n / total for stage, n in counts.most_common()} if total else {}, total
