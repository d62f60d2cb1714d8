"""Reading a KubeSchedulerConfiguration `extenders:` list strictly into typed `ExtenderConfig`s.

The same shape is accepted in two places: a SchedulerProfile's `spec.extenders`
and the global `extenders:` of `berth run --config FILE`, so a user can paste
the list from their kube-scheduler configuration. Decoding is strict (an
unknown field is refused by name) and then checked with kube-scheduler v1.37's
rules (validateExtenders): a prioritizing extender needs a positive weight, at
most one extender binds, managed resources are valid extended resource names,
each managed by one extender only. Two checks are Berth's own, because the
configuration could never work: `urlPrefix` must be set and `httpTimeout` must
not be negative. Problems are `FieldError`s whose field is the document path.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections.abc import Mapping
from typing import Any

from berth.engine.errors import FieldError, shown
from berth.engine.extenders import (
    DEFAULT_HTTP_TIMEOUT_SECONDS,
    ExtenderConfig,
    ExtenderTLSConfig,
    ManagedResource,
    extended_resource_name_problem,
)
from berth.engine.framework.names import NODE_RESOURCES_FIT
from berth.engine.model.durations import parse_go_duration
from berth.engine.profile import ProfileConfig
from berth.profiles.strict import as_object, check_known_fields

# Where a profile's extenders list says the global ones are (berth run --config).
GLOBAL_EXTENDERS = "extenders"

_EXTENDER_FIELDS = frozenset(
    {
        "urlPrefix",
        "filterVerb",
        "preemptVerb",
        "prioritizeVerb",
        "weight",
        "bindVerb",
        "enableHTTPS",
        "tlsConfig",
        "httpTimeout",
        "nodeCacheCapable",
        "managedResources",
        "ignorable",
    }
)
_TLS_FIELDS = frozenset(
    {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData"}
)
_MANAGED_RESOURCE_FIELDS = frozenset({"name", "ignoredByScheduler"})


# Go's time.ParseDuration: an optional sign, then decimal numbers each with a unit.
def _string(raw: Mapping[Any, Any], key: str, where: str) -> str:
    value = raw.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FieldError(f"{where}.{key}", f"expected a string, got {shown(value)}")
    return value


def _flag(raw: Mapping[Any, Any], key: str, where: str) -> bool:
    value = raw.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise FieldError(f"{where}.{key}", f"expected true or false, got {shown(value)}")
    return value


def _pem(raw: Mapping[Any, Any], key: str, where: str) -> bytes:
    """A []byte field: base64 in JSON and YAML documents, as Go encodes bytes."""
    text = _string(raw, key, where)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise FieldError(f"{where}.{key}", "expected base64-encoded PEM data") from None


def _tls(raw: object, where: str) -> ExtenderTLSConfig | None:
    if raw is None:
        return None
    config = as_object(raw, where, "an object")
    check_known_fields(config, _TLS_FIELDS, where)
    return ExtenderTLSConfig(
        insecure=_flag(config, "insecure", where),
        server_name=_string(config, "serverName", where),
        cert_file=_string(config, "certFile", where),
        key_file=_string(config, "keyFile", where),
        ca_file=_string(config, "caFile", where),
        cert_data=_pem(config, "certData", where),
        key_data=_pem(config, "keyData", where),
        ca_data=_pem(config, "caData", where),
    )


def _timeout(raw: Mapping[Any, Any], where: str) -> float:
    value = raw.get("httpTimeout")
    if value is None:
        return DEFAULT_HTTP_TIMEOUT_SECONDS
    seconds = parse_go_duration(value) if isinstance(value, str) else None
    if seconds is None:
        raise FieldError(
            f"{where}.httpTimeout", f'expected a duration such as "30s", got {shown(value)}'
        )
    if seconds < 0:
        raise FieldError(f"{where}.httpTimeout", f"must not be negative, got {value!r}")
    # kube-scheduler replaces a zero timeout with its default.
    return seconds or DEFAULT_HTTP_TIMEOUT_SECONDS


def _weight(raw: Mapping[Any, Any], where: str) -> int:
    value = raw.get("weight")
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**63) <= value < 2**63:
        raise FieldError(f"{where}.weight", f"expected an integer, got {shown(value)}")
    return value


def _managed_resources(raw: object, where: str) -> tuple[ManagedResource, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise FieldError(where, f"expected a list, got {shown(raw)}")
    resources = []
    for index, item in enumerate(raw):
        at = f"{where}[{index}]"
        entry = as_object(item, at, "an object with a name")
        check_known_fields(entry, _MANAGED_RESOURCE_FIELDS, at)
        name = _string(entry, "name", at)
        problem = extended_resource_name_problem(name)
        if problem is not None:
            raise FieldError(f"{at}.name", f"Invalid value: {name!r}: {problem}")
        resources.append(ManagedResource(name, _flag(entry, "ignoredByScheduler", at)))
    return tuple(resources)


def parse_extender(raw: object, where: str) -> ExtenderConfig:
    """One `extenders[]` entry at document path `where`."""
    entry = as_object(raw, where, "an object with a urlPrefix")
    check_known_fields(entry, _EXTENDER_FIELDS, where)
    url_prefix = _string(entry, "urlPrefix", where)
    if not url_prefix:
        raise FieldError(f"{where}.urlPrefix", "must be set")
    extender = ExtenderConfig(
        url_prefix=url_prefix,
        filter_verb=_string(entry, "filterVerb", where),
        prioritize_verb=_string(entry, "prioritizeVerb", where),
        preempt_verb=_string(entry, "preemptVerb", where),
        bind_verb=_string(entry, "bindVerb", where),
        weight=_weight(entry, where),
        enable_https=_flag(entry, "enableHTTPS", where),
        tls=_tls(entry.get("tlsConfig"), f"{where}.tlsConfig"),
        http_timeout_seconds=_timeout(entry, where),
        node_cache_capable=_flag(entry, "nodeCacheCapable", where),
        managed_resources=_managed_resources(
            entry.get("managedResources"), f"{where}.managedResources"
        ),
        ignorable=_flag(entry, "ignorable", where),
    )
    if extender.is_prioritizer and extender.weight <= 0:
        raise FieldError(
            f"{where}.weight",
            f"Invalid value: {extender.weight}: must have a positive weight applied to it",
        )
    return extender


def parse_extenders(raw: object, where: str) -> tuple[ExtenderConfig, ...]:
    """An `extenders:` list at document path `where`, checked as kube-scheduler checks it."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise FieldError(where, f"expected a list of extenders, got {shown(raw)}")
    extenders = tuple(parse_extender(item, f"{where}[{index}]") for index, item in enumerate(raw))
    _check_together([(f"{where}[{i}]", extender) for i, extender in enumerate(extenders)], where)
    return extenders


def _check_together(placed: list[tuple[str, ExtenderConfig]], where: str) -> None:
    """kube-scheduler's checks across one list: a managed resource belongs to one extender,
    and at most one extender binds. `placed` pairs each extender with its document path."""
    managed_by: set[str] = set()
    for at, extender in placed:
        for position, managed in enumerate(extender.managed_resources):
            if managed.name in managed_by:
                raise FieldError(
                    f"{at}.managedResources[{position}].name",
                    f"Invalid value: {managed.name!r}: duplicate extender managed resource name",
                )
            managed_by.add(managed.name)
    binders = sum(extender.is_binder for _, extender in placed)
    if binders > 1:
        raise FieldError(
            where,
            f"Invalid value: 'found {binders} extenders implementing bind': "
            "only one extender can implement bind",
        )


def with_extenders(
    config: ProfileConfig, global_extenders: tuple[ExtenderConfig, ...], where: str
) -> ProfileConfig:
    """The profile as it runs: the global extenders (`berth run --config`) followed by its own
    `spec.extenders` (at `where`), checked together as kube-scheduler checks its one list; and,
    as kube-scheduler does, the resources they manage with ignoredByScheduler replace
    NodeResourcesFit's ignoredResources."""
    own = config.extenders
    if not global_extenders and not own:
        return config
    placed = [(f"{GLOBAL_EXTENDERS}[{i}]", e) for i, e in enumerate(global_extenders)]
    placed += [(f"{where}[{i}]", e) for i, e in enumerate(own)]
    _check_together(placed, where)
    extenders = global_extenders + own
    plugin_args = dict(config.plugin_args)
    ignored = [
        managed.name
        for extender in extenders
        for managed in extender.managed_resources
        if managed.ignored_by_scheduler
    ]
    if ignored:
        fit_args = dict(plugin_args.get(NODE_RESOURCES_FIT) or {})
        fit_args["ignoredResources"] = ignored
        plugin_args[NODE_RESOURCES_FIT] = fit_args
    return dataclasses.replace(config, extenders=extenders, plugin_args=plugin_args)


def _shown_pem(data: bytes, *, redact: bool) -> str:
    if not data:
        return ""
    return "<redacted>" if redact else base64.b64encode(data).decode("ascii")


def extender_document(extender: ExtenderConfig, *, redact: bool = True) -> dict[str, Any]:
    """An extender in its document shape: `parse_extender` reads it back unless `redact`
    hid the PEM data (as it should in /configz and logs: keyData is a private key)."""
    document: dict[str, Any] = {
        "urlPrefix": extender.url_prefix,
        "filterVerb": extender.filter_verb,
        "prioritizeVerb": extender.prioritize_verb,
        "preemptVerb": extender.preempt_verb,
        "bindVerb": extender.bind_verb,
        "weight": extender.weight,
        "enableHTTPS": extender.enable_https,
        "httpTimeout": f"{extender.http_timeout_seconds:g}s",
        "nodeCacheCapable": extender.node_cache_capable,
        "managedResources": [
            {"name": managed.name, "ignoredByScheduler": managed.ignored_by_scheduler}
            for managed in extender.managed_resources
        ],
        "ignorable": extender.ignorable,
    }
    if extender.tls is not None:
        tls = extender.tls
        document["tlsConfig"] = {
            "insecure": tls.insecure,
            "serverName": tls.server_name,
            "certFile": tls.cert_file,
            "keyFile": tls.key_file,
            "caFile": tls.ca_file,
            "certData": _shown_pem(tls.cert_data, redact=redact),
            "keyData": _shown_pem(tls.key_data, redact=redact),
            "caData": _shown_pem(tls.ca_data, redact=redact),
        }
    return document
