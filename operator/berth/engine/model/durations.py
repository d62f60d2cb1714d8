"""Go duration strings ("30s", "1m30s", "1.5h") as kube-scheduler's configuration spells them.

Plugin args (DynamicResourcesArgs' timeouts) and extender settings (httpTimeout) are
`metav1.Duration`s; both are read with this one parser.
"""

from __future__ import annotations

import re

__all__ = ["parse_go_duration"]

_DURATION_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def parse_go_duration(text: str) -> float | None:
    """Seconds in a Go duration string ("30s", "1m30s", "1.5h", "0"), or None if it is not one."""
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    if not body:
        return None
    seconds = 0.0
    position = 0
    while position < len(body):
        match = _DURATION_PART.match(body, position)
        if match is None:
            return None
        seconds += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        position = match.end()
    return -seconds if text.startswith("-") else seconds
