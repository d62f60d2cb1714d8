"""How an allocation attempt can fail beyond "these claims do not fit this node".

kube-scheduler's allocator returns a plain error for problems in the claims or classes
(a missing class, a broken CEL expression, an impossible constraint): the DynamicResources
plugin turns it into an Error status, which aborts the scheduling attempt. A deadline
(DRASchedulerFilterTimeout) is told apart because the plugin reports it differently
("node X: timed out trying to allocate devices").

    AllocationError      the claims or classes are broken; message in upstream's words
    └── AllocationTimeout  the filter deadline passed during the search

(Problems confined to one node, such as an invalid pool, are not errors but an outcome:
`berth.engine.dra.allocator.NodeFailure`.)
"""

from __future__ import annotations

__all__ = ["AllocationError", "AllocationTimeout"]


class AllocationError(Exception):
    """The claims cannot be allocated anywhere as written; `str()` is kube-scheduler's message."""


class AllocationTimeout(AllocationError):
    """The allocation ran past its deadline."""
