"""NodeResourcesFit (kube-scheduler v1.37): filter on free capacity, score by allocation strategy.

Filter compares the pod's actual requests with each node's allocatable minus what
its pods request, reporting every short resource at once; Score applies the
configured strategy (LeastAllocated by default) to non-zero cpu/memory requests.
"""

from __future__ import annotations

from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import PluginArgs
from berth.engine.plugins.node_resources_fit.args import (
    NodeResourcesFitArgs,
    ScoringStrategy,
    ScoringStrategyType,
    parse_fit_args,
)
from berth.engine.plugins.node_resources_fit.fit_requests import TOO_MANY_PODS, insufficient
from berth.engine.plugins.node_resources_fit.plugin import NodeResourcesFit


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> NodeResourcesFit:
    if handle is None:
        return NodeResourcesFit(parse_fit_args(args))
    # The services are attached when a scheduler starts serving the profile, after building.
    return NodeResourcesFit(parse_fit_args(args), cluster=lambda: handle.services.cluster)


__all__ = [
    "TOO_MANY_PODS",
    "NodeResourcesFit",
    "NodeResourcesFitArgs",
    "ScoringStrategy",
    "ScoringStrategyType",
    "insufficient",
    "new_plugin",
]
