"""Running the engine's decision-with-extenders steps: answering each call it yields.

`berth.engine.extended_decision` yields the extender calls a decision needs and
is sent their answers. Here they are answered through the `ExtenderCalls` port:
filter calls one after the other, a prioritize round concurrently (kube-scheduler
runs each prioritizing extender in its own goroutine). A decision whose profile
has extenders but none interested in the pod yields nothing and is run straight.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from berth.engine.algorithm import Decision
from berth.engine.extended_decision import (
    DecisionSteps,
    ExtenderCall,
    ExtenderFailed,
    FilterCall,
    PreemptCall,
    PrioritizeCalls,
)
from berth.engine.extenders.calls import finished_without_calls
from berth.scheduling.ports import ExtenderCalls

logger = logging.getLogger(__name__)


def drive_without_calls(steps: DecisionSteps) -> Decision:
    """The decision of steps that call no extender (none is interested in the pod)."""
    return finished_without_calls(steps, "a decision")


async def drive_with_calls(steps: DecisionSteps, calls: ExtenderCalls) -> Decision:
    """The decision of `steps`, each call answered through `calls`."""
    try:
        call = next(steps)
        while True:
            call = steps.send(await answer(call, calls))
    except StopIteration as done:
        decision: Decision = done.value
        return decision


def drive_blocking(steps: DecisionSteps, answered: Callable[[ExtenderCall], object]) -> Decision:
    """The decision of `steps`, each call answered by `answered` before going on (for
    `berth simulate`, which has no other work to do meanwhile)."""
    try:
        call = next(steps)
        while True:
            call = steps.send(answered(call))
    except StopIteration as done:
        decision: Decision = done.value
        return decision


async def answer(call: ExtenderCall, calls: ExtenderCalls) -> object:
    """What the engine is sent back for `call`."""
    if isinstance(call, FilterCall):
        return await calls.filter(call.extender, call.pod, call.nodes)
    if isinstance(call, PreemptCall):
        return await calls.preempt(call.extender, call.pod, call.victims)
    return await _prioritize_round(call, calls)


async def _prioritize_round(call: PrioritizeCalls, calls: ExtenderCalls) -> tuple[object, ...]:
    answers = await asyncio.gather(
        *(calls.prioritize(extender, call.pod, call.nodes) for extender in call.extenders)
    )
    for extender, answer in zip(call.extenders, answers, strict=True):
        if isinstance(answer, ExtenderFailed):
            # As upstream: a prioritize failure only means no scores from that extender.
            logger.debug(
                "Extender %s gave no scores for %s: %s",
                extender.name,
                call.pod.key,
                answer.message,
            )
    return tuple(answers)
