"""Where Berth's CEL environment and kube-scheduler's disagree on what an expression may call.

cel-expr-python lacks a few of the functions Kubernetes' stored-expressions environment
declares (docs/dra-cel.md lists them and says why); an expression using one fails to compile
with cel-cpp's message, and `not_provided_note` names the missing functions after it, so a
user reading FailedScheduling learns it is Berth's gap, not their typo. cel-cpp's lists library
also has two functions cel-go's lacks (`first`, `last`); upstream rejects them, so Berth does.
"""

from __future__ import annotations

import re

__all__ = ["EXTRA_MEMBER_FUNCTIONS", "UNPLANNABLE_MEMBER_FUNCTIONS", "not_provided_note"]

# Kubernetes' format library.
_NOT_PROVIDED = frozenset(("format", "validate"))
_UNDECLARED = re.compile(r"undeclared reference to '(\w+)'")
_CIDR_STRING = "no matching overload for 'string' applied to '(net.CIDR)'"

EXTRA_MEMBER_FUNCTIONS = frozenset(("first", "last"))
# Declared by cel-cpp but failing when the program is planned (no `cel.@mapInsert` runtime):
# rejected at compile time, named as missing, rather than failing on the first device.
UNPLANNABLE_MEMBER_FUNCTIONS = frozenset(("transformMap", "transformMapEntry"))


def not_provided_note(detail: str) -> str:
    """A note naming the Kubernetes CEL functions a compile error is about that Berth lacks."""
    missing = {
        name
        for name in _UNDECLARED.findall(detail)
        if name in _NOT_PROVIDED or name in UNPLANNABLE_MEMBER_FUNCTIONS
    }
    if _CIDR_STRING in detail:
        missing.add("string(cidr)")
    if not missing:
        return ""
    return f" (Berth's CEL environment does not provide {', '.join(sorted(missing))})"
