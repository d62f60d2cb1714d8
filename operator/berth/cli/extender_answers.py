"""`berth simulate` calls a profile's scheduler extenders over HTTP, as the live scheduler does.

The simulation is synchronous and has nothing else to do while an extender
answers, so each call runs to completion on one event loop kept for the whole
command: the extenders' keep-alive connections are reused from pod to pod.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

from berth.engine.extended_decision import ExtenderCall
from berth.kube.extender_calls import HttpExtenders
from berth.scheduling.extender_steps import answer
from berth.scheduling.simulator import ExtenderAnswers


@contextmanager
def http_extender_answers() -> Iterator[ExtenderAnswers]:
    """Answers extender calls over HTTP until the block ends (no connection until a call)."""
    loop = asyncio.new_event_loop()
    calls = HttpExtenders()

    def answered(call: ExtenderCall) -> object:
        return loop.run_until_complete(answer(call, calls))

    try:
        yield answered
    finally:
        loop.run_until_complete(calls.close())
        loop.close()
