"""One shared frozenset per distinct value, for the sets nearly every pod holds alike.

Pods name the same few resources (`cpu`, `memory`) and need no node feature; one set
each costs about 0.2 KiB a pod, so tens of thousands of pods hold a shared copy instead.
The table is bounded: its values come from the cluster.
"""

from __future__ import annotations

__all__ = ["shared_set"]

_SHARED: dict[frozenset[str], frozenset[str]] = {}
_MAX_SHARED = 4096


def shared_set(values: frozenset[str]) -> frozenset[str]:
    """`values`, or the equal set handed out before (frozensets are immutable)."""
    shared = _SHARED.get(values)
    if shared is not None:
        return shared
    if len(_SHARED) < _MAX_SHARED:
        _SHARED[values] = values
    return values
