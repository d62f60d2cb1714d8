"""`DefaultPreemptionArgs`: how many candidate nodes the dry run must find, defaulted and validated as v1.37 does."""

from __future__ import annotations

from dataclasses import dataclass

from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework import names
from berth.engine.framework.interfaces import PluginArgs

PLUGIN = names.DEFAULT_PREEMPTION
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100
_PERCENTAGE = "minCandidateNodesPercentage"
_ABSOLUTE = "minCandidateNodesAbsolute"


@dataclass(frozen=True, slots=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
    min_candidate_nodes_absolute: int = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE

    def num_candidates(self, potential_nodes: int) -> int:
        """max(percentage of the potential nodes, absolute minimum), never more than there are."""
        wanted = potential_nodes * self.min_candidate_nodes_percentage // 100
        wanted = max(wanted, self.min_candidate_nodes_absolute)
        return min(wanted, potential_nodes)


def _integer(args: PluginArgs, key: str, default: int) -> int:
    value = args.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidPluginArgsError(PLUGIN, key, f"must be an integer, got {value!r}")
    return value


def parse_args(args: PluginArgs | None) -> DefaultPreemptionArgs:
    """Default missing fields (an explicit 0 stays 0), then validate like kube-scheduler."""
    if args is None:
        return DefaultPreemptionArgs()
    unknown = sorted(set(args) - {_PERCENTAGE, _ABSOLUTE})
    if unknown:
        raise InvalidPluginArgsError(PLUGIN, unknown[0], "unknown field")
    percentage = _integer(args, _PERCENTAGE, DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE)
    absolute = _integer(args, _ABSOLUTE, DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE)
    if not 0 <= percentage <= 100:
        raise InvalidPluginArgsError(
            PLUGIN, _PERCENTAGE, f"{percentage}: not in valid range [0, 100]"
        )
    if absolute < 0:
        raise InvalidPluginArgsError(PLUGIN, _ABSOLUTE, f"{absolute}: not in valid range [0, inf)")
    if percentage == 0 and absolute == 0:
        raise InvalidPluginArgsError(
            PLUGIN, _PERCENTAGE, f"0: cannot be zero at the same time as {_ABSOLUTE}"
        )
    return DefaultPreemptionArgs(percentage, absolute)
