"""A scheduling profile as the engine takes it: typed, already merged with the defaults.

Reading and checking the SchedulerProfile document (its field paths, types and
kube-scheduler's merge of defaults) is `berth.profiles`' job; the engine's
`Framework` is built from this value and reports problems relative to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from berth.engine.extenders.config import ExtenderConfig

MULTI_POINT = "multiPoint"
EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)
ALL_POINTS = (MULTI_POINT, *EXTENSION_POINTS)


@dataclass(frozen=True, slots=True)
class PluginRef:
    name: str
    weight: int = 0  # 0 = unset: a scoring plugin then weighs 1


@dataclass(frozen=True, slots=True)
class PluginSet:
    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ProfileConfig:
    scheduler_name: str
    plugins: Mapping[str, PluginSet] = field(default_factory=dict)
    plugin_args: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None
    # The profile's own extenders (SchedulerProfile spec.extenders), in the order written.
    extenders: tuple[ExtenderConfig, ...] = ()

    def point(self, name: str) -> PluginSet:
        return self.plugins.get(name, PluginSet())
