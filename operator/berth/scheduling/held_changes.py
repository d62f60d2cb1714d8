"""Changes to the cache held back while a decision waits on its extenders.

kube-scheduler decides on a snapshot of the cluster taken when the cycle starts,
so what the watches deliver meanwhile cannot change a decision half-way. Berth
decides on its live cache, which is safe while a decision never awaits. A
decision that calls extenders does await (their HTTP answers), so for its
duration every change that would reach the cache or the queue (watch intake,
the end of a binding cycle) is held here, in arrival order, and applied once the
pod is assumed: the decision sees one consistent cluster, and nothing is lost.
Decisions without extenders never hold anything and pay one attribute check.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

logger = logging.getLogger(__name__)


class HeldChanges:
    def __init__(self) -> None:
        self._held: list[tuple[Callable[..., object], tuple[Any, ...]]] | None = None

    @property
    def holding(self) -> bool:
        return self._held is not None

    def apply(self, change: Callable[..., object], *args: Any) -> None:
        """`change(*args)` now, or once the decision that holds changes is assumed."""
        if self._held is None:
            change(*args)
        else:
            self._held.append((change, args))

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Hold every change applied inside the block; apply them in order when it ends."""
        if self._held is not None:
            raise RuntimeError("changes are already held: decisions do not overlap")
        self._held = []
        try:
            yield
        finally:
            held, self._held = self._held, None
            for change, args in held:
                try:
                    change(*args)
                except Exception:
                    # Each change was applied at once before; one that fails must not take
                    # the later ones with it (the same failure would have cost only itself).
                    logger.exception("Applying a held change %s failed", change.__qualname__)
