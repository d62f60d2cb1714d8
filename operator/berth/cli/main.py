"""The `berth` console script: one parser, one sub-command per job.

The same entry point is installed as `kubectl-berth`, which kubectl's plugin mechanism runs for
`kubectl berth ...`; help then names the command the way the user typed it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import berth

# Sub-command modules by command, imported only when the parser is built, each exposing
# `register(subparsers)`. Listing them here keeps start-up of one command from paying for
# the imports of another: a command named first on the line imports its module alone
# (`berth run` is a long-lived process that would keep the others' memory for good).
SUBCOMMAND_MODULES: dict[str, str] = {
    "simulate": "berth.cli.simulate",
    "capacity": "berth.cli.capacity",
    "explain": "berth.cli.explain",
    "run": "berth.cli.run",
    "demo": "berth.cli.demo",
    "controlplane": "berth.controlplane.cli",
}


KUBECTL_PLUGIN = "kubectl-berth"

# Imported, kopf imports these client libraries when they are installed (kopf[full-auth]) to
# offer logins through them. Berth logs in itself (berth.kube.handlers.login) and uses none of
# them; loaded, they cost every `berth` process about 20 MiB.
UNUSED_KUBE_CLIENTS = ("kubernetes", "kubernetes_asyncio", "pykube")


def _skip_unused_kube_clients() -> None:
    for name in UNUSED_KUBE_CLIENTS:
        if name not in sys.modules:
            sys.modules[name] = None  # type: ignore[assignment]  # import then raises ImportError


def _program_name() -> str:
    return "kubectl berth" if Path(sys.argv[0]).name == KUBECTL_PLUGIN else "berth"


def get_parser(prog: str = "berth", *, command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `command` (one of SUBCOMMAND_MODULES), only that sub-command's."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="A Kubernetes pod scheduler that places pods exactly like kube-scheduler.",
    )
    parser.add_argument("--version", action="version", version=f"berth {berth.__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    version = subparsers.add_parser("version", help="print the version and exit")
    version.set_defaults(handler=lambda _args: print(f"berth {berth.__version__}") or 0)
    wanted = [SUBCOMMAND_MODULES[command]] if command else list(SUBCOMMAND_MODULES.values())
    for module_name in wanted:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            # A sub-command whose module is not part of this build is simply absent.
            if error.name is not None and module_name.startswith(error.name):
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _skip_unused_kube_clients()  # before any sub-command module imports kopf
    words = list(sys.argv[1:] if argv is None else argv)
    command = words[0] if words and words[0] in SUBCOMMAND_MODULES else None
    parser = get_parser(_program_name(), command=command)
    args = parser.parse_args(words)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
