"""`berth run`: the scheduler itself, as a kopf operator with peering as leader election.

Settings come from defaults < a config file (`--config`, else $BERTH_CONFIG) <
BERTH_* environment variables < flags; each flag's variable is shown in
brackets. `--write-config-to FILE` writes the effective settings and exits,
like kube-scheduler's flag of that name.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from berth.engine.errors import PluginPackageError
from berth.kube.settings import (
    CONFIG_ENV,
    SETTINGS,
    Settings,
    SettingsError,
    load_settings,
    settings_document,
)
from berth.profiles import plugin_registry

logger = logging.getLogger("berth")

_METAVARS = {int: "N", float: "SECONDS", str: "TEXT"}


def resolve_settings(args: argparse.Namespace, environ: dict[str, str]) -> Settings:
    """The effective settings of `berth run` with these arguments in this environment."""
    flags = {spec.field: getattr(args, spec.field) for spec in SETTINGS}
    return load_settings(environ=environ, config=args.config, flags=flags)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run the scheduler (kopf operator; kopf peering elects the leader)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help=f"YAML file of settings, camelCase keys [{CONFIG_ENV}]",
    )
    parser.add_argument(
        "--write-config-to", type=Path, metavar="FILE", help="write the effective settings and exit"
    )
    for spec in SETTINGS:
        help_text = f"{spec.help} [{spec.env}]"
        if spec.kind is bool:
            parser.add_argument(
                f"--{spec.flag}", dest=spec.field, action="store_const", const=True, help=help_text
            )
        else:
            parser.add_argument(
                f"--{spec.flag}",
                dest=spec.field,
                type=spec.kind,
                metavar=_METAVARS[spec.kind],
                help=help_text,
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
    except SettingsError as error:
        print(f"berth run: {error}", file=sys.stderr)
        return 2
    if args.write_config_to is not None:
        text = yaml.safe_dump(settings_document(settings), sort_keys=True)
        try:
            args.write_config_to.write_text(text, encoding="utf-8")
        except OSError as error:
            print(f"berth run: {args.write_config_to}: cannot write: {error}", file=sys.stderr)
            return 2
        return 0

    try:
        registry = plugin_registry()
    except PluginPackageError as error:
        print(f"berth run: {error}", file=sys.stderr)
        return 2

    import kopf

    import berth.kube.handlers  # noqa: F401 - registers the handlers

    _smaller_tls_read_buffers()

    # Peering (leader election) is set up by the startup handler, from these settings:
    # the same code serves `kopf run -m berth.kube.handlers`.
    kopf.run(clusterwide=True, memo=kopf.Memo(settings=settings, registry=registry))
    return 0


# asyncio gives every TLS connection a 256 KiB read buffer, zero-filled and so resident. Berth
# holds about a hundred (one per kind watched, and one per bind or event in flight: HTTP/1.1,
# where kube-scheduler multiplexes one HTTP/2 connection): 25 MiB. A TLS record carries at
# most 16 KiB, so one record per read still fits; a large listing takes more, cheap reads.
TLS_READ_BUFFER_BYTES = 16 * 1024


def _smaller_tls_read_buffers() -> None:
    import asyncio.sslproto

    asyncio.sslproto.SSLProtocol.max_size = TLS_READ_BUFFER_BYTES
