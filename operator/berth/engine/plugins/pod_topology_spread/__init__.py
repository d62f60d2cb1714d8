"""PodTopologySpread: keep pods matching a selector evenly spread over topology domains.

`DoNotSchedule` constraints filter (a hard skew limit), `ScheduleAnyway`
constraints score (fewer matching pods in a node's domains is better). Pods
without constraints of their own get the configured default constraints.
"""

from berth.engine.plugins.pod_topology_spread.constraints import (
    SYSTEM_DEFAULT_CONSTRAINTS,
    DefaultingType,
    SpreadArgs,
    parse_args,
)
from berth.engine.plugins.pod_topology_spread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
)
from berth.engine.plugins.pod_topology_spread.plugin import PodTopologySpread, new_plugin

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "DefaultingType",
    "PodTopologySpread",
    "SpreadArgs",
    "new_plugin",
    "parse_args",
]
