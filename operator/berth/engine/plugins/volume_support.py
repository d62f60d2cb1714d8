"""VolumeBinding stand-in: Berth cannot bind PersistentVolumeClaims yet, so pods that use them are
refused up front with a message that says so, instead of being placed where their volumes may not go.

It sits where kube-scheduler's VolumeBinding sits in the default profile (same name).
"""

from __future__ import annotations

from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework import names
from berth.engine.framework.handle import Handle
from berth.engine.framework.interfaces import PluginArgs
from berth.engine.model.pod import Pod
from berth.engine.unsupported import UnsupportedFeature

__all__ = ["VolumeSupport", "new_plugin", "unsupported_message"]


def unsupported_message(claims: tuple[str, ...]) -> str:
    return (
        f"pod uses PersistentVolumeClaim(s) [{' '.join(claims)}], "
        "which this scheduler does not support yet"
    )


class VolumeSupport(UnsupportedFeature):
    name = names.VOLUME_BINDING

    def refusal(self, pod: Pod) -> str | None:
        return unsupported_message(pod.claim_names) if pod.claim_names else None


# The fields of kube-scheduler's v1 VolumeBindingArgs; strict decoding refuses any other.
_ARG_FIELDS = frozenset({"apiVersion", "kind", "bindTimeoutSeconds", "shape"})


def new_plugin(args: PluginArgs | None, handle: Handle | None = None) -> VolumeSupport:
    """Accepts and ignores `VolumeBindingArgs` (bindTimeoutSeconds, shape): nothing binds yet."""
    unknown = sorted(set(args or {}) - _ARG_FIELDS)
    if unknown:
        raise InvalidPluginArgsError(names.VOLUME_BINDING, unknown[0], "unknown field")
    return VolumeSupport()
