"""The one shared score normaliser (kube-scheduler's DefaultNormalizeScore)."""

from __future__ import annotations

import numpy as np

from berth.engine.framework.interfaces import MAX_NODE_SCORE, Scores


def go_div(numerator: Scores, denominator: int | Scores) -> Scores:
    """Integer division truncating toward zero, as Go does (numpy's // floors)."""
    quotient = np.abs(numerator) // np.abs(denominator)
    return np.where((numerator < 0) ^ (np.asarray(denominator) < 0), -quotient, quotient).astype(
        np.int64
    )


def normalize_to_max(
    scores: Scores, *, reverse: bool = False, max_score: int = MAX_NODE_SCORE
) -> Scores:
    """Scale so the highest raw score becomes `max_score`; `reverse` flips it (fewest is best).

    All-zero input stays 0, or becomes `max_score` everywhere when reversed.
    """
    if scores.size == 0:
        return scores
    highest = int(scores.max())
    if highest <= 0:
        return np.full_like(scores, max_score) if reverse else scores.copy()
    scaled = go_div(max_score * scores, highest)
    return max_score - scaled if reverse else scaled
