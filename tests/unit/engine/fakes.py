"""Fake plugins and a "framework with exactly these plugins" helper for engine tests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from berth.engine.cluster import ClusterState, NodeSlots
from berth.engine.extenders import ExtenderConfig
from berth.engine.framework import names
from berth.engine.framework.cycle_state import CycleState
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import PreFilterResult, Scores
from berth.engine.framework.runtime import Framework, build_framework
from berth.engine.framework.status import SKIP, SUCCESS, Code, Status
from berth.engine.framework.verdicts import Verdicts, accept_all, reject_where
from berth.engine.model.pod import Pod
from berth.engine.plugins.default_binder import DefaultBinder
from berth.engine.profile import PluginRef, PluginSet, ProfileConfig
from berth.engine.registry import Registry
from berth.profiles import framework_from_spec


@dataclass
class FakeFilter:
    """Rejects the nodes whose names are in `reject` with `reason` and `code`."""

    name: str
    reject: set[str] = field(default_factory=set)
    reason: str = "fake says no"
    code: Code = Code.UNSCHEDULABLE
    calls: list[int] = field(default_factory=list)

    def filter(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Verdicts:
        self.calls.append(int(slots.size))
        names = [state.cluster.node_at(int(s)).name for s in slots]
        mask = np.asarray([n in self.reject for n in names], dtype=bool)
        if not mask.any():
            return accept_all(slots.size)
        return reject_where(mask, self.code, self.reason)


@dataclass
class FakePreFilter:
    name: str
    status: Status = SUCCESS
    node_names: frozenset[str] | None = None

    def pre_filter(self, state: CycleState, pod: Pod) -> PreFilterResult:
        return PreFilterResult(self.status, self.node_names)


@dataclass
class FakeScore:
    """Scores nodes with `by_name` (default 0)."""

    name: str
    by_name: dict[str, int] = field(default_factory=dict)

    def score(self, state: CycleState, pod: Pod, slots: NodeSlots) -> Scores:
        return np.asarray(
            [self.by_name.get(state.cluster.node_at(int(s)).name, 0) for s in slots], dtype=np.int64
        )


@dataclass
class FakeSort:
    name: str = "FakeSort"

    def sort_key(self, pod: Pod, queued_at: float) -> tuple[int, float]:
        return (-pod.priority, queued_at)


@dataclass
class FakeBindPlugin:
    """A Bind plugin that answers `status` (Skip by default) and records the pods it saw."""

    name: str = "FakeBindPlugin"
    status: Status = SKIP
    seen: list[str] = field(default_factory=list)

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        self.seen.append(pod.name)
        return self.status


@dataclass
class Built:
    """A plugin that needs the framework's handle: made by `make(handle)` when the profile is built."""

    name: str
    make: Callable[[Handle], object]


def framework_with(
    *plugins: object,
    weights: dict[str, int] | None = None,
    percentage: int | None = None,
    extenders: tuple[ExtenderConfig, ...] = (),
) -> Framework:
    """A profile whose multiPoint lists exactly these plugins, plus a sort and DefaultBinder
    (which binds through the serving scheduler's Binder port)."""
    everything = [*plugins, FakeSort(), Built(names.DEFAULT_BINDER, DefaultBinder)]
    factories: dict[str, Callable[..., object]] = {}
    for plugin in everything:
        if isinstance(plugin, Built):
            factories[plugin.name] = lambda _args, handle, make=plugin.make: make(handle)
        else:
            factories[plugin.name] = lambda _args, _handle, p=plugin: p  # type: ignore[attr-defined]
    refs = tuple(PluginRef(p.name, (weights or {}).get(p.name, 0)) for p in everything)  # type: ignore[attr-defined]
    config = ProfileConfig(
        scheduler_name="test",
        plugins={"multiPoint": PluginSet(refs)},
        percentage_of_nodes_to_score=percentage,
        extenders=extenders,
    )
    return build_framework(config, Registry(factories))  # type: ignore[arg-type]


def cluster_of(*nodes: dict[str, object], pods: tuple[dict[str, object], ...] = ()) -> ClusterState:
    from berth.engine.model.node import Node

    cluster = ClusterState()
    for raw in nodes:
        cluster.upsert_node(Node.from_dict(raw))
    for raw_pod in pods:
        cluster.add_pod(Pod.from_dict(raw_pod))
    return cluster


def fake_plugins_registry() -> Registry:
    """Sort, Bind, filters F1 and F2, scorers S1 and S2: one of each kind a profile needs."""
    plugins: list[Any] = [
        FakeSort("Sort"),
        FakeBindPlugin("Bind"),
        FakeFilter("F1"),
        FakeFilter("F2"),
        FakeScore("S1"),
        FakeScore("S2"),
    ]
    return Registry({p.name: (lambda _args, _handle, p=p: p) for p in plugins})


def build_exactly(spec: dict[str, Any]) -> Framework:
    """A profile document's `spec` (schedulerName added) built with only the plugins it lists."""
    return framework_from_spec(
        {"schedulerName": "t", **spec}, registry=fake_plugins_registry(), merge_defaults=False
    )
