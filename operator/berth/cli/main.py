"""The `berth` console script: one parser, one sub-command per job.

The same entry point is installed as `kubectl-berth`, which kubectl's plugin mechanism runs for
`kubectl berth ...`; help then names the command the way the user typed it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import berth

# Each sub-command's module, exposing `register(subparsers)`, by the command's name. A
# command line naming one of them builds the parser with that module alone: `berth run`
# then never imports the offline commands (simulate's reports, the control-plane tools),
# a fifth of a scheduler's start-up. Help and unknown commands import them all.
SUBCOMMAND_MODULES: dict[str, str] = {
    "simulate": "berth.cli.simulate",
    "capacity": "berth.cli.capacity",
    "explain": "berth.cli.explain",
    "run": "berth.cli.run",
    "demo": "berth.cli.demo",
    "controlplane": "berth.controlplane.cli",
}


KUBECTL_PLUGIN = "kubectl-berth"

# Imported, kopf imports these client libraries when they are installed (kopf[full-auth]
# installs them) to offer logins through them. Berth logs in itself (berth.kube.handlers.login)
# and uses none of them; loaded, they cost every `berth` process about 20 MiB for good.
UNUSED_KUBE_CLIENTS = ("kubernetes", "kubernetes_asyncio", "pykube")


@contextlib.contextmanager
def _unused_kube_clients_hidden() -> Iterator[None]:
    """kopf, imported and its registry made within, sees no client library.

    Only for that moment: afterwards the libraries import as usual, so that a plugin
    package that uses one (loaded later, with the profiles) still finds it.
    """
    hidden = [name for name in UNUSED_KUBE_CLIENTS if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # import then raises ImportError
    try:
        yield
        if "kopf" in sys.modules:
            # kopf probes for the clients again when its default registry is first made.
            sys.modules["kopf"].get_default_registry()
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def _program_name() -> str:
    return "kubectl berth" if Path(sys.argv[0]).name == KUBECTL_PLUGIN else "berth"


def command_named(argv: Sequence[str]) -> str | None:
    """The sub-command a command line names when it starts with one; None otherwise.

    A top-level option first (`--help`, `--version`) keeps the whole parser, so that
    `berth --help run` still lists every command.
    """
    return argv[0] if argv and not argv[0].startswith("-") else None


def get_parser(prog: str = "berth", command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `command` a known sub-command, only that sub-command is registered."""
    module_names = (
        [SUBCOMMAND_MODULES[command]]
        if command in SUBCOMMAND_MODULES
        else list(SUBCOMMAND_MODULES.values())
    )
    parser = argparse.ArgumentParser(
        prog=prog,
        description="A Kubernetes pod scheduler that places pods exactly like kube-scheduler.",
    )
    parser.add_argument("--version", action="version", version=f"berth {berth.__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    version = subparsers.add_parser("version", help="print the version and exit")
    version.set_defaults(handler=lambda _args: print(f"berth {berth.__version__}") or 0)
    for module_name in module_names:
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
    words = sys.argv[1:] if argv is None else argv
    with _unused_kube_clients_hidden():
        parser = get_parser(_program_name(), command_named(words))
    args = parser.parse_args(words)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
