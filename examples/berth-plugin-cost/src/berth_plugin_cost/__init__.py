"""NodeCost, an out-of-tree Berth score plugin: prefer nodes that cost less, by a node label."""

from berth_plugin_cost.args import DEFAULT_LABEL, NodeCostArgs, Normalization, parse_args
from berth_plugin_cost.plugin import NAME, NodeCost, new_plugin

__all__ = [
    "DEFAULT_LABEL",
    "NAME",
    "NodeCost",
    "NodeCostArgs",
    "Normalization",
    "new_plugin",
    "parse_args",
]
