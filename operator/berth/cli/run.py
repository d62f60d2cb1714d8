"""`berth run`: the scheduler itself, as a kopf operator with peering as leader election.

Settings come from defaults < a config file (`--config`) < BERTH_* environment
variables < flags. `--write-config-to FILE` writes the effective settings and
exits, like kube-scheduler's flag of that name.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from berth.kube.app import Settings

logger = logging.getLogger("berth")

# flag name -> (Settings field, type)
_FLAGS: dict[str, tuple[str, type]] = {
    "kubeconfig": ("kubeconfig", str),
    "metrics-host": ("metrics_host", str),
    "metrics-port": ("metrics_port", int),
    "parallel-binds": ("parallel_binds", int),
    "pod-initial-backoff-seconds": ("pod_initial_backoff_seconds", float),
    "pod-max-backoff-seconds": ("pod_max_backoff_seconds", float),
    "pod-max-in-unschedulable-seconds": ("pod_max_in_unschedulable_seconds", float),
    "percentage-of-nodes-to-score": ("percentage_of_nodes_to_score", int),
    "peering": ("peering_name", str),
    "peering-lifetime-seconds": ("peering_lifetime_seconds", int),
    "priority": ("priority", int),
    "lease-name": ("lease_name", str),
    "lease-namespace": ("lease_namespace", str),
    "lease-duration-seconds": ("lease_duration_seconds", int),
    "lease-renew-deadline-seconds": ("lease_renew_deadline_seconds", float),
    "lease-retry-period-seconds": ("lease_retry_period_seconds", float),
    "seed": ("seed", int),
}


_KIND_BY_FIELD: dict[str, type] = dict(_FLAGS.values()) | {"standalone": bool}


def _camel(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(part.title() for part in rest)


class ConfigError(ValueError):
    pass


def _coerce(value: object, kind: type, where: str) -> Any:
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
            return value.lower() in ("true", "1")
        raise ConfigError(f"{where}: expected true or false, got {value!r}")
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: expected {kind.__name__}, got {value!r}") from None


def _validate(settings: Settings) -> None:
    checks = [
        (settings.metrics_port, 0, 65535, "metricsPort"),
        (settings.parallel_binds, 1, 10_000, "parallelBinds"),
        (settings.percentage_of_nodes_to_score, 0, 100, "percentageOfNodesToScore"),
        (settings.peering_lifetime_seconds, 5, 3600, "peeringLifetimeSeconds"),
    ]
    for value, low, high, name in checks:
        if not low <= value <= high:
            raise ConfigError(f"{name}: must be between {low} and {high}, got {value}")
    for problem in settings.lease_timing().problems():
        raise ConfigError(problem)
    if settings.pod_initial_backoff_seconds <= 0:
        raise ConfigError("podInitialBackoffSeconds: must be positive")
    if settings.pod_max_backoff_seconds < settings.pod_initial_backoff_seconds:
        raise ConfigError("podMaxBackoffSeconds: must not be less than podInitialBackoffSeconds")


def resolve_settings(args: argparse.Namespace, environ: dict[str, str]) -> Settings:
    fields = {f.name: f for f in dataclasses.fields(Settings)}
    values: dict[str, Any] = {}
    if args.config is not None:
        try:
            document = yaml.safe_load(Path(args.config).read_text()) or {}
        except (OSError, yaml.YAMLError) as error:
            raise ConfigError(f"{args.config}: cannot read: {error}") from None
        if not isinstance(document, dict):
            raise ConfigError(f"{args.config}: expected a mapping of settings")
        by_camel = {_camel(name): name for name in fields}
        for key, value in document.items():
            name = by_camel.get(key)
            if name is None:
                raise ConfigError(
                    f"{args.config}: unknown setting {key!r}; known: {sorted(by_camel)}"
                )
            kind = _KIND_BY_FIELD.get(name, str)
            values[name] = _coerce(value, kind, f"{args.config}: {key}")
    for flag, (name, kind) in _FLAGS.items():
        env_name = "BERTH_" + flag.upper().replace("-", "_")
        if name == "kubeconfig" and "KUBECONFIG" in environ:
            values[name] = environ["KUBECONFIG"]
        if env_name in environ:
            values[name] = _coerce(environ[env_name], kind, env_name)
        flag_value = getattr(args, name)
        if flag_value is not None:
            values[name] = flag_value
    if "BERTH_STANDALONE" in environ:
        values["standalone"] = _coerce(environ["BERTH_STANDALONE"], bool, "BERTH_STANDALONE")
    if args.standalone:
        values["standalone"] = True
    values.setdefault("identity", environ.get("POD_ID", ""))
    if environ.get("POD_NAMESPACE"):  # in a pod, the Lease lives in the pod's own namespace
        values.setdefault("lease_namespace", environ["POD_NAMESPACE"])
    settings = Settings(**values)
    _validate(settings)
    return settings


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run the scheduler (kopf operator; kopf peering elects the leader)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", type=Path, help="YAML file of settings (camelCase keys)")
    parser.add_argument(
        "--write-config-to", type=Path, help="write the effective settings and exit"
    )
    for flag, (name, kind) in _FLAGS.items():
        parser.add_argument(f"--{flag}", dest=name, type=kind, default=None)
    parser.add_argument(
        "--standalone",
        action="store_true",
        help="no peering and no Lease: always active (one replica only)",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if not args.verbose:
        # kopf logs every handled object at INFO ("Handler 'pod_event' succeeded."):
        # thousands of lines per burst, and measurable CPU on the event path.
        logging.getLogger("kopf.objects").setLevel(logging.WARNING)
    try:
        settings = resolve_settings(args, dict(os.environ))
    except ConfigError as error:
        print(f"berth run: {error}", file=sys.stderr)
        return 2
    if args.write_config_to is not None:
        document = {_camel(k): v for k, v in settings.to_dict().items() if v is not None}
        args.write_config_to.write_text(yaml.safe_dump(document, sort_keys=True))
        return 0

    import kopf

    import berth.kube.handlers  # noqa: F401 - registers the handlers
    from berth.kube.wiring import default_priority

    kopf_settings = kopf.OperatorSettings()
    kopf_settings.peering.lifetime = settings.peering_lifetime_seconds
    kopf.run(
        clusterwide=True,
        settings=kopf_settings,
        standalone=settings.standalone,
        peering_name=None if settings.standalone else settings.peering_name,
        priority=settings.priority if settings.priority is not None else default_priority(),
        memo=kopf.Memo(settings=settings),
    )
    return 0
