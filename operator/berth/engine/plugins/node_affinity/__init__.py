"""NodeAffinity plugin: filtering on nodeSelector and required node affinity, scoring on preferred terms."""

from berth.engine.plugins.node_affinity.plugin import (
    REASON_CONFLICT,
    REASON_ENFORCED,
    REASON_POD,
    NodeAffinity,
    NodeAffinityArgs,
    new_plugin,
    parse_args,
    pinned_node_names,
)

__all__ = [
    "REASON_CONFLICT",
    "REASON_ENFORCED",
    "REASON_POD",
    "NodeAffinity",
    "NodeAffinityArgs",
    "new_plugin",
    "parse_args",
    "pinned_node_names",
]
