"""The extender calls a decision asks for, and how a failed one is answered.

The engine does no I/O: a decision that needs an extender yields one of these
and is sent the answer (see berth.engine.extended_decision). They live here,
below the plugins, because DefaultPreemption asks for `PreemptCall`s too.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import TypeVar

from berth.engine.extenders.config import ExtenderConfig
from berth.engine.model.node import Node
from berth.engine.model.pod import Pod


@dataclass(frozen=True, slots=True)
class ExtenderFailed:
    """An extender call that failed; `message` is kube-scheduler's error text for it."""

    message: str


@dataclass(frozen=True, slots=True)
class FilterCall:
    """Call `extender`'s filter verb for `pod` on `nodes`; answer a FilterResult or ExtenderFailed."""

    extender: ExtenderConfig
    pod: Pod
    nodes: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class PrioritizeCalls:
    """Call every one of `extenders`' prioritize verbs (concurrently, as kube-scheduler does);
    answer one `tuple[HostPriority, ...]` or ExtenderFailed per extender, in the same order."""

    extenders: tuple[ExtenderConfig, ...]
    pod: Pod
    nodes: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class CandidateVictims:
    """The pods preemption would evict on one node, and how many budgets that breaks."""

    pods: tuple[Pod, ...]
    pdb_violations: int


@dataclass(frozen=True, slots=True)
class PreemptCall:
    """Call `extender`'s preempt verb with the candidates (node -> victims); answer a
    `dict[str, MetaVictims]` (the candidates it keeps) or ExtenderFailed."""

    extender: ExtenderConfig
    pod: Pod
    victims: Mapping[str, CandidateVictims]


ExtenderCall = FilterCall | PrioritizeCalls | PreemptCall

T = TypeVar("T")


def finished_without_calls(steps: Generator[ExtenderCall, object, T], what: str) -> T:
    """The result of steps that must not call any extender (there is none to call): a call
    asked for anyway is a bug, raised as RuntimeError naming `what`."""
    try:
        call = next(steps)
    except StopIteration as done:
        result: T = done.value
        return result
    steps.close()
    raise RuntimeError(f"{what} without extenders to call asked for {call!r}")
