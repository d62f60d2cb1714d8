"""Preemption candidates put to the extenders that support preemption, as kube-scheduler does.

After the dry run, each interested extender with a preemptVerb is sent the
candidates (node -> victims) and answers the ones it keeps, victims by UID; the
next extender gets what the previous kept. A failure, or a kept node without
victims, is skipped for an ignorable extender and is an error otherwise (with
kube-scheduler's text). The answer's UIDs are found among the pods on that node.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping

from berth.engine.cluster import ClusterState
from berth.engine.extenders import ExtenderConfig, MetaVictims
from berth.engine.extenders.calls import (
    CandidateVictims,
    ExtenderCall,
    ExtenderFailed,
    PreemptCall,
)
from berth.engine.model.pod import Pod
from berth.engine.plugins.default_preemption.selection import Candidate


def consult_extenders(
    cluster: ClusterState,
    pod: Pod,
    candidates: list[Candidate],
    extenders: tuple[ExtenderConfig, ...],  # the interested ones with a preemptVerb, in order
) -> Generator[ExtenderCall, object, list[Candidate] | ExtenderFailed]:
    """The candidates the extenders keep (callExtenders), or the error that ends preemption."""
    victims = {
        candidate.node_name: CandidateVictims(candidate.victims, candidate.pdb_violations)
        for candidate in candidates
    }
    if not extenders or not victims:
        return candidates
    for extender in extenders:
        answer = yield PreemptCall(extender, pod, victims)
        kept = answer if isinstance(answer, ExtenderFailed) else _kept(cluster, extender, answer)
        if isinstance(kept, ExtenderFailed):
            if extender.ignorable:
                continue
            return kept
        checked: dict[str, CandidateVictims] = {}
        for node_name, found in kept.items():
            if found.pods:
                checked[node_name] = found
            elif not extender.ignorable:
                return ExtenderFailed(f'expected at least one victim pod on node "{node_name}"')
        victims = checked
        if not victims:
            break
    return [
        Candidate(node_name, found.pods, found.pdb_violations)
        for node_name, found in victims.items()
    ]


def _kept(
    cluster: ClusterState, extender: ExtenderConfig, answer: object
) -> dict[str, CandidateVictims] | ExtenderFailed:
    """The extender's answer with its UIDs resolved to the pods on each node (convertToVictims)."""
    if not isinstance(answer, Mapping):
        raise TypeError(f"a PreemptCall is answered with node -> MetaVictims, not {answer!r}")
    kept: dict[str, CandidateVictims] = {}
    for node_name, meta in answer.items():
        if not isinstance(meta, MetaVictims):
            raise TypeError(f"a PreemptCall is answered with MetaVictims, not {meta!r}")
        slot = cluster.slot_of(node_name)
        if slot is None:
            return ExtenderFailed(f'nodeinfo not found for node name "{node_name}"')
        on_node = {other.uid: other for other in cluster.pods_on(slot).values()}
        pods = []
        for uid in meta.uids:
            found = on_node.get(uid)
            if found is None:
                return ExtenderFailed(
                    f"extender: {extender.name} claims to preempt pod (UID: &{{{uid}}}) on "
                    f"node: {node_name}, but the pod is not found on that node"
                )
            pods.append(found)
        kept[node_name] = CandidateVictims(tuple(pods), meta.num_pdb_violations)
    return kept
