"""The FailedScheduling message, rendered byte-for-byte like kube-scheduler's FitError."""

from __future__ import annotations

from collections import Counter

import numpy as np

from berth.engine.framework.interfaces import FilterDiagnosis, FilterFailures
from berth.engine.framework.status import Status

NO_NODES_AVAILABLE = "no nodes available to schedule pods"


def fit_error_message(diagnosis: FilterDiagnosis) -> str:
    """``0/N nodes are available: <PreFilter msg or histogram>. <PostFilter msg>``.

    The histogram counts every reason of every failed node (a node can add to
    several), adds the absent-node reason for nodes never judged, and sorts the
    ``"<count> <reason>"`` strings as plain strings, so "10 x" precedes "2 y".
    """
    message = f"0/{diagnosis.node_count} nodes are available:"
    if diagnosis.pre_filter_message:
        message += f" {diagnosis.pre_filter_message}."
    else:
        reasons: Counter[str] = Counter()
        for batch in diagnosis.failures:
            for bit, reason in enumerate(batch.reasons):
                hits = int(((batch.reason_bits >> np.uint64(bit)) & np.uint64(1)).sum())
                if hits:
                    reasons[reason] += hits
        explicit = diagnosis.explicit_count
        if explicit < diagnosis.node_count and diagnosis.absent_status is not None:
            for reason in diagnosis.absent_status.reasons:
                reasons[reason] += diagnosis.node_count - explicit
        histogram = sorted(f"{count} {reason}" for reason, count in reasons.items())
        if histogram:
            message += f" {', '.join(histogram)}."
    if diagnosis.post_filter_message:
        message += f" {diagnosis.post_filter_message}"
    return message


def one_node_message(node_name: str, status: Status) -> str:
    """The FitError kube-scheduler reports when Reserve or Permit rejects the chosen node: a
    diagnosis over that one node (`0/1 nodes are available: 1 <reason>.`)."""
    reasons = status.reasons
    failure = FilterFailures(
        status.plugin,
        np.zeros(1, dtype=np.intp),
        np.asarray([int(status.code)], dtype=np.int8),
        np.asarray([(1 << len(reasons)) - 1], dtype=np.uint64),
        reasons,
    )
    return fit_error_message(FilterDiagnosis(node_count=1, failures=[failure]))
