"""DynamicResources stand-in: Berth does not allocate DRA ResourceClaims yet, so pods that reference
them (`spec.resourceClaims`) are refused with a message that says so, instead of being placed as if
they needed no device.

It sits where kube-scheduler's DynamicResources sits in the default profile (same name).
"""

from __future__ import annotations

from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework import names
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import PluginArgs
from berth.engine.model.pod import Pod
from berth.engine.unsupported import UnsupportedFeature

__all__ = ["DynamicResources", "new_plugin", "unsupported_message"]


def unsupported_message(claims: tuple[str, ...]) -> str:
    return (
        f"pod uses ResourceClaim(s) [{' '.join(claims)}]; this scheduler does not support "
        "dynamic resource allocation (DRA) yet"
    )


class DynamicResources(UnsupportedFeature):
    name = names.DYNAMIC_RESOURCES

    def refusal(self, pod: Pod) -> str | None:
        if not pod.resource_claims:
            return None
        return unsupported_message(tuple(claim.name for claim in pod.resource_claims))


# The fields of kube-scheduler's v1 DynamicResourcesArgs; strict decoding refuses any other.
_ARG_FIELDS = frozenset({"apiVersion", "kind", "filterTimeout"})


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> DynamicResources:
    """Accepts and ignores `DynamicResourcesArgs` (filterTimeout...): nothing is allocated yet."""
    unknown = sorted(set(args or {}) - _ARG_FIELDS)
    if unknown:
        raise InvalidPluginArgsError(names.DYNAMIC_RESOURCES, unknown[0], "unknown field")
    return DynamicResources()
