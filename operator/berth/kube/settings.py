"""Berth's process settings, and the one loader both entry points use.

`berth run` and `kopf run -m berth.kube.handlers` must mean the same thing by
every setting, so both go through `load_settings`: defaults < a config file
(YAML, camelCase keys) < `BERTH_*` environment variables < flags. The file is
decoded strictly, as kube-scheduler decodes its configuration: an unknown key
or a value of the wrong type is refused, naming the key, instead of being
silently ignored or coerced. Every refusal is a `SettingsError` whose one-line
message names the entry (file key, variable or flag) that holds the bad value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from berth.engine.errors import FieldError
from berth.engine.extenders import ExtenderConfig
from berth.kube.extender_client import tls_context
from berth.kube.lease import LeaseTiming
from berth.profiles.extenders import extender_document, parse_extenders

__all__ = [
    "CONFIG_ENV",
    "SETTINGS",
    "SettingSpec",
    "Settings",
    "SettingsError",
    "load_settings",
    "settings_document",
]

# Names a config file for entry points without a --config flag (kopf run).
CONFIG_ENV = "BERTH_CONFIG"


@dataclass(frozen=True, slots=True)
class Settings:
    """Global settings of one Berth process (flags, environment, config file)."""

    metrics_host: str = "0.0.0.0"
    metrics_port: int = 10260
    parallel_binds: int = 64
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    pod_max_in_unschedulable_seconds: float = 300.0
    percentage_of_nodes_to_score: int = 0
    peering_name: str = "berth"
    peering_lifetime_seconds: int = 15
    # The Lease the active replica must hold to write (kube-scheduler's defaults).
    lease_name: str = "berth"
    lease_namespace: str = "berth-system"  # in a pod: POD_NAMESPACE
    lease_duration_seconds: int = 15
    lease_renew_deadline_seconds: float = 10.0
    lease_retry_period_seconds: float = 2.0
    standalone: bool = False
    priority: int | None = None  # None: derived from the pod IP or identity
    kubeconfig: str = ""  # "" = the in-cluster ServiceAccount
    seed: int | None = None  # tie-break RNG seed; None = random
    # The config file's global `extenders:` (KubeSchedulerConfiguration's shape); file only.
    extenders: tuple[ExtenderConfig, ...] = ()

    def lease_timing(self) -> LeaseTiming:
        return LeaseTiming(
            lease_duration=self.lease_duration_seconds,
            renew_deadline=self.lease_renew_deadline_seconds,
            retry_period=self.lease_retry_period_seconds,
        )

    def to_dict(self) -> dict[str, Any]:
        values = {name: getattr(self, name) for name in self.__dataclass_fields__}
        values["extenders"] = [extender_document(extender) for extender in self.extenders]
        return values


@dataclass(frozen=True, slots=True, kw_only=True)
class SettingSpec:
    """One setting under its three spellings: flag, environment variable and config key."""

    field: str  # the Settings attribute
    flag: str  # `berth run --<flag>`; the variable is BERTH_<FLAG>
    kind: type  # int, float, str or bool
    help: str
    optional: bool = False  # null / unset is a meaningful value

    @property
    def env(self) -> str:
        return "BERTH_" + self.flag.upper().replace("-", "_")

    @property
    def key(self) -> str:
        head, *rest = self.field.split("_")
        return head + "".join(part.title() for part in rest)


SETTINGS: tuple[SettingSpec, ...] = (
    SettingSpec(
        field="kubeconfig",
        flag="kubeconfig",
        kind=str,
        help="kubeconfig file (else KUBECONFIG, else in-cluster)",
    ),
    SettingSpec(
        field="metrics_host",
        flag="metrics-host",
        kind=str,
        help="address of /metrics, /healthz, /configz",
    ),
    SettingSpec(
        field="metrics_port",
        flag="metrics-port",
        kind=int,
        help="port of /metrics, /healthz, /configz",
    ),
    SettingSpec(
        field="parallel_binds",
        flag="parallel-binds",
        kind=int,
        help="Binding requests in flight at most",
    ),
    SettingSpec(
        field="pod_initial_backoff_seconds",
        flag="pod-initial-backoff-seconds",
        kind=float,
        help="first backoff",
    ),
    SettingSpec(
        field="pod_max_backoff_seconds",
        flag="pod-max-backoff-seconds",
        kind=float,
        help="longest backoff",
    ),
    SettingSpec(
        field="pod_max_in_unschedulable_seconds",
        flag="pod-max-in-unschedulable-seconds",
        kind=float,
        help="longest stay in the unschedulable queue before a retry",
    ),
    SettingSpec(
        field="percentage_of_nodes_to_score",
        flag="percentage-of-nodes-to-score",
        kind=int,
        help="0 = adaptive, as kube-scheduler",
    ),
    SettingSpec(
        field="peering_name",
        flag="peering",
        kind=str,
        help="the ClusterKopfPeering used for leader election",
    ),
    SettingSpec(
        field="peering_lifetime_seconds",
        flag="peering-lifetime-seconds",
        kind=int,
        help="peer record lifetime",
    ),
    SettingSpec(
        field="lease_name",
        flag="lease-name",
        kind=str,
        help="the coordination.k8s.io Lease the active replica must hold to write",
    ),
    SettingSpec(
        field="lease_namespace",
        flag="lease-namespace",
        kind=str,
        help="namespace of the Lease (default: POD_NAMESPACE, else berth-system)",
    ),
    SettingSpec(
        field="lease_duration_seconds",
        flag="lease-duration-seconds",
        kind=int,
        help="how long a standby waits after the last renewal it saw",
    ),
    SettingSpec(
        field="lease_renew_deadline_seconds",
        flag="lease-renew-deadline-seconds",
        kind=float,
        help="the holder stops writing when it could not renew for this long",
    ),
    SettingSpec(
        field="lease_retry_period_seconds",
        flag="lease-retry-period-seconds",
        kind=float,
        help="pause between Lease renewals and acquisition attempts",
    ),
    SettingSpec(
        field="standalone",
        flag="standalone",
        kind=bool,
        help="no peering and no Lease: always active",
    ),
    SettingSpec(
        field="priority",
        flag="priority",
        kind=int,
        help="peering priority (default: from POD_IP)",
        optional=True,
    ),
    SettingSpec(
        field="seed",
        flag="seed",
        kind=int,
        help="seed of the tie-break RNG (default: random)",
        optional=True,
    ),
)

_BY_FIELD = {spec.field: spec for spec in SETTINGS}
_BY_KEY = {spec.key: spec for spec in SETTINGS}
# Config-file keys that are not settings of their own (no flag, no variable).
_EXTENDERS_KEY = "extenders"
_FILE_ONLY_KEYS = (_EXTENDERS_KEY,)
_TRUE, _FALSE = ("true", "1"), ("false", "0")


class SettingsError(ValueError):
    """A setting Berth cannot use; the message names where it came from."""


# field -> (value, where it came from: "FILE: key", "BERTH_X", "--flag")
_Layers = dict[str, tuple[Any, str]]


def load_settings(
    *,
    environ: Mapping[str, str],
    config: Path | None = None,
    flags: Mapping[str, Any] | None = None,
) -> Settings:
    """The effective settings: defaults < config file < environment < flags, validated.

    `config` is the --config flag (else BERTH_CONFIG names the file); `flags`
    maps Settings fields to values given on the command line (None = not given).
    """
    layers: _Layers = {}
    config_path = config if config is not None else _path_from(environ.get(CONFIG_ENV))
    if config_path is not None:
        layers.update(_read_config_file(config_path))
    layers.update(_read_environment(environ))
    for field, value in (flags or {}).items():
        if value is not None:
            layers[field] = (value, f"--{_BY_FIELD[field].flag}")
    settings = Settings(**{field: value for field, (value, _) in layers.items()})
    _validate(settings, layers)
    return settings


def settings_document(settings: Settings) -> dict[str, Any]:
    """The settings as a config file would say them (camelCase keys, unset values left out)."""
    values = settings.to_dict()
    document = {spec.key: values[spec.field] for spec in SETTINGS if values[spec.field] is not None}
    if settings.extenders:
        document[_EXTENDERS_KEY] = [
            extender_document(extender, redact=False) for extender in settings.extenders
        ]
    return document


def _path_from(value: str | None) -> Path | None:
    return Path(value) if value else None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _read_config_file(path: Path) -> _Layers:
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SettingsError(f"{path}: cannot read: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        raise SettingsError(f"{path}: not valid YAML: {_one_line(str(error))}") from None
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise SettingsError(
            f"{path}: expected a mapping of settings, got {type(document).__name__}"
        )
    layers: _Layers = {}
    for key, value in document.items():
        if key == _EXTENDERS_KEY:
            layers["extenders"] = (_extenders(value, path), f"{path}: {key}")
            continue
        spec = _BY_KEY.get(key) if isinstance(key, str) else None
        if spec is None:
            known = ", ".join([*sorted(_BY_KEY), *_FILE_ONLY_KEYS])
            raise SettingsError(f'{path}: unknown field "{key}" (known: {known})')
        where = f"{path}: {key}"
        layers[spec.field] = (_typed(value, spec, where), where)
    return layers


def _extenders(value: object, path: Path) -> tuple[ExtenderConfig, ...]:
    """The global `extenders:` list, read and checked as kube-scheduler reads its own."""
    try:
        extenders = parse_extenders(value, _EXTENDERS_KEY)
        for index, extender in enumerate(extenders):
            try:
                tls_context(extender)  # kube-scheduler refuses to start on unloadable material
            except FieldError as bad:
                raise FieldError(f"{_EXTENDERS_KEY}[{index}].{bad.field}", bad.problem) from None
    except FieldError as error:
        raise SettingsError(f"{path}: {error}") from None
    return extenders


def _typed(value: object, spec: SettingSpec, where: str) -> Any:
    """A config file value as it is, if it has the setting's type (no coercion, as strict YAML)."""
    if value is None and spec.optional:
        return None
    if spec.kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, spec.kind) and (spec.kind is bool or not isinstance(value, bool)):
        return value
    raise SettingsError(f"{where}: expected {_kind_name(spec)}, got {value!r}")


def _kind_name(spec: SettingSpec) -> str:
    names = {int: "int", float: "number", str: "string", bool: "true or false"}
    return names[spec.kind] + (" or null" if spec.optional else "")


def _read_environment(environ: Mapping[str, str]) -> _Layers:
    """BERTH_* variables (an empty one counts as unset); KUBECONFIG below BERTH_KUBECONFIG and
    POD_NAMESPACE below BERTH_LEASE_NAMESPACE."""
    layers: _Layers = {}
    if environ.get("KUBECONFIG"):
        layers["kubeconfig"] = (environ["KUBECONFIG"], "KUBECONFIG")
    if environ.get("POD_NAMESPACE"):  # in a pod, the Lease lives in the pod's own namespace
        layers["lease_namespace"] = (environ["POD_NAMESPACE"], "POD_NAMESPACE")
    for spec in SETTINGS:
        text = environ.get(spec.env, "")
        if text:
            layers[spec.field] = (_parsed(text, spec), spec.env)
    return layers


def _parsed(text: str, spec: SettingSpec) -> Any:
    if spec.kind is str:
        return text
    if spec.kind is bool:
        lowered = text.strip().lower()
        if lowered in _TRUE + _FALSE:
            return lowered in _TRUE
    else:
        try:
            value = spec.kind(text)
        except ValueError:
            pass
        else:
            if not (isinstance(value, float) and not math.isfinite(value)):
                return value
    raise SettingsError(f"{spec.env}: expected {_kind_name(spec)}, got {text!r}")


def _validate(settings: Settings, layers: _Layers) -> None:
    def where(field: str) -> str:
        return layers[field][1] if field in layers else f"{_BY_FIELD[field].key} (default)"

    ranges = (
        ("metrics_port", 0, 65535),
        ("parallel_binds", 1, 10_000),
        ("percentage_of_nodes_to_score", 0, 100),
        ("peering_lifetime_seconds", 5, 3600),
    )
    for field, low, high in ranges:
        value = getattr(settings, field)
        if not low <= value <= high:
            raise SettingsError(f"{where(field)}: must be between {low} and {high}, got {value}")
    for field in ("pod_initial_backoff_seconds", "pod_max_in_unschedulable_seconds"):
        value = getattr(settings, field)
        if not value > 0:
            raise SettingsError(f"{where(field)}: must be positive, got {value}")
    for problem in settings.lease_timing().problems():
        raise SettingsError(problem)
    if settings.pod_max_backoff_seconds < settings.pod_initial_backoff_seconds:
        raise SettingsError(
            f"{where('pod_max_backoff_seconds')}: must not be less than "
            f"{where('pod_initial_backoff_seconds')} ({settings.pod_max_backoff_seconds} < "
            f"{settings.pod_initial_backoff_seconds})"
        )
