"""DefaultPreemption (kube-scheduler v1.37): when no node fits, pick a node and the pods to evict.

PostFilter only. Eligibility (preemptionPolicy, victims still terminating on the
nominated node), potential nodes (failed as Unschedulable), a dry run per node
that evicts the fewest lower-priority pods (PDB-violating ones reprieved first),
and upstream's tie-break among candidate nodes.
"""

from __future__ import annotations

from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import PluginArgs
from berth.engine.plugins.default_preemption.args import DefaultPreemptionArgs, parse_args
from berth.engine.plugins.default_preemption.plugin import (
    MESSAGE_PREFIX,
    NO_VICTIMS,
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    NOT_HELPFUL,
    DefaultPreemption,
    found_message,
)
from berth.engine.plugins.default_preemption.selection import Candidate, pick_candidate


def new_plugin(args: PluginArgs | None, handle: Handle) -> DefaultPreemption:
    return DefaultPreemption(parse_args(args), handle)


__all__ = [
    "MESSAGE_PREFIX",
    "NOT_ELIGIBLE_NEVER",
    "NOT_ELIGIBLE_TERMINATING",
    "NOT_HELPFUL",
    "NO_VICTIMS",
    "Candidate",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "found_message",
    "new_plugin",
    "parse_args",
    "pick_candidate",
]
