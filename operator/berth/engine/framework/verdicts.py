"""What one Filter plugin says about a batch of nodes: a code and reasons per node.

Reasons are a bit mask into the plugin's reason table, so a plugin that can fail
a node for several reasons at once (NodeResourcesFit) stays vectorised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from berth.engine.framework.status import Code


@dataclass(frozen=True, slots=True)
class Verdicts:
    codes: NDArray[np.int8]  # aligned with the judged slots; 0 = passes
    reason_bits: NDArray[np.uint64]  # bit i set = reasons[i] applies
    reasons: tuple[str, ...]
    all_pass: bool = False  # set by accept_all: lets the runtime skip scanning the codes

    @property
    def rejected(self) -> NDArray[np.bool_]:
        rejected: NDArray[np.bool_] = self.codes != 0
        return rejected

    def reasons_at(self, index: int) -> tuple[str, ...]:
        bits = int(self.reason_bits[index])
        return tuple(reason for bit, reason in enumerate(self.reasons) if bits >> bit & 1)


class _SharedZeros:
    """Read-only zero arrays, grown on demand, that "everyone passes" verdicts view."""

    codes: NDArray[np.int8] = np.zeros(0, dtype=np.int8)
    bits: NDArray[np.uint64] = np.zeros(0, dtype=np.uint64)
    verdicts: dict[int, Verdicts] = {}  # one per batch size: they are immutable

    @classmethod
    def of(cls, count: int) -> Verdicts:
        verdicts = cls.verdicts.get(count)
        if verdicts is not None:
            return verdicts
        if cls.codes.size < count:
            size = max(count, 2 * cls.codes.size)
            cls.codes = np.zeros(size, dtype=np.int8)
            cls.bits = np.zeros(size, dtype=np.uint64)
            cls.codes.flags.writeable = False
            cls.bits.flags.writeable = False
        if len(cls.verdicts) >= 4096:
            cls.verdicts.clear()
        verdicts = cls.verdicts[count] = Verdicts(
            cls.codes[:count], cls.bits[:count], (), all_pass=True
        )
        return verdicts


def accept_all(count: int) -> Verdicts:
    """Every node passes; one shared verdict per batch size over read-only zeros."""
    return _SharedZeros.of(count)


def reject_where(mask: NDArray[np.bool_], code: Code, reason: str) -> Verdicts:
    """Nodes where `mask` is true fail with one reason; the others pass."""
    if not mask.any():
        return accept_all(mask.size)
    codes = np.where(mask, np.int8(code), np.int8(0)).astype(np.int8)
    return Verdicts(codes, mask.astype(np.uint64), (reason,))


def combine_first_failure(parts: list[tuple[NDArray[np.bool_], Code, str]], count: int) -> Verdicts:
    """Several checks in order; each node reports the first one it fails."""
    codes = np.zeros(count, dtype=np.int8)
    bits = np.zeros(count, dtype=np.uint64)
    open_nodes = np.ones(count, dtype=bool)
    reasons: list[str] = []
    for mask, code, reason in parts:
        hit = mask & open_nodes
        if reason in reasons:
            bit = reasons.index(reason)
        else:
            bit = len(reasons)
            reasons.append(reason)
        codes[hit] = code
        bits[hit] = np.uint64(1) << np.uint64(bit)
        open_nodes &= ~hit
    return Verdicts(codes, bits, tuple(reasons))
