"""DynamicResourcesArgs (kubescheduler.config.k8s.io/v1), decoded strictly.

`filterTimeout` bounds one node's allocation attempt in Filter (DRASchedulerFilterTimeout,
on by default; zero turns the bound off); `bindingTimeout` bounds PreBind's wait for
device binding conditions (DRADeviceBindingConditions, on by default; at least a
second). The defaults are kube-scheduler v1.37's.
"""

from __future__ import annotations

from dataclasses import dataclass

from berth.engine.errors import InvalidPluginArgsError
from berth.engine.framework import names
from berth.engine.framework.interfaces import PluginArgs
from berth.engine.model.durations import parse_go_duration

__all__ = ["DEFAULT_BINDING_TIMEOUT", "DEFAULT_FILTER_TIMEOUT", "DynamicResourcesArgs"]

DEFAULT_FILTER_TIMEOUT = 10.0
DEFAULT_BINDING_TIMEOUT = 600.0

# The fields of kube-scheduler's v1 DynamicResourcesArgs; strict decoding refuses any other.
_ARG_FIELDS = frozenset({"apiVersion", "kind", "filterTimeout", "bindingTimeout"})


@dataclass(frozen=True, slots=True)
class DynamicResourcesArgs:
    filter_timeout: float = DEFAULT_FILTER_TIMEOUT  # seconds; 0: no bound
    binding_timeout: float = DEFAULT_BINDING_TIMEOUT  # seconds

    @classmethod
    def parse(cls, args: PluginArgs | None) -> DynamicResourcesArgs:
        raw = dict(args or {})
        unknown = sorted(set(raw) - _ARG_FIELDS)
        if unknown:
            raise InvalidPluginArgsError(names.DYNAMIC_RESOURCES, unknown[0], "unknown field")
        filter_timeout = _duration(raw, "filterTimeout", DEFAULT_FILTER_TIMEOUT)
        if filter_timeout < 0:
            raise InvalidPluginArgsError(
                names.DYNAMIC_RESOURCES, "filterTimeout", "must be zero or positive"
            )
        binding_timeout = _duration(raw, "bindingTimeout", DEFAULT_BINDING_TIMEOUT)
        if binding_timeout < 1:
            raise InvalidPluginArgsError(
                names.DYNAMIC_RESOURCES, "bindingTimeout", "must be at least 1 second"
            )
        return cls(filter_timeout=filter_timeout, binding_timeout=binding_timeout)


def _duration(raw: dict[str, object], field: str, default: float) -> float:
    value = raw.get(field)
    if value is None:
        return default
    seconds = parse_go_duration(value) if isinstance(value, str) else None
    if seconds is None:
        raise InvalidPluginArgsError(
            names.DYNAMIC_RESOURCES, field, f"expected a duration such as 10s, got {value!r}"
        )
    return seconds
