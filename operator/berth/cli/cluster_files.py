"""The cluster files `berth simulate` and `berth explain` both read, declared and loaded once.

Both commands take the same `--nodes`, `--existing` and `--profile` files with the same checks
(`simulate_input`), report bad input as one line and warnings on stderr, and fall back to
kube-scheduler's default profile for every pod when no profile file is given.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from berth.cli.input_files import InputError
from berth.cli.simulate_input import SimulationInput, load_input
from berth.engine.errors import PluginPackageError
from berth.engine.framework.runtime import Framework, build_framework
from berth.profiles import default_profile_config, plugin_registry

__all__ = ["add_cluster_arguments", "load_cluster_files"]


def add_cluster_arguments(parser: argparse.ArgumentParser, *, nodes_required: bool = True) -> None:
    parser.add_argument("--nodes", required=nodes_required, type=Path, help="YAML of Node objects")
    parser.add_argument(
        "--existing",
        type=Path,
        help="YAML of Pods already bound (spec.nodeName set) and PodDisruptionBudgets",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        help="YAML of SchedulerProfile objects; pods are matched by schedulerName (default: "
        "kube-scheduler's default profile for every pod)",
    )


def load_cluster_files(
    files: argparse.Namespace,
    *,
    say: Callable[[str], None],
    check: Callable[[SimulationInput], None] = lambda _inputs: None,
) -> tuple[SimulationInput, Framework | None] | None:
    """The checked input and, without profiles, the default profile; None once `say` has told
    why the input cannot be used. `check` may raise `InputError` for a command's own rules."""
    try:
        registry = plugin_registry()  # logs what it loaded; stderr stays for answers and errors
        inputs = load_input(files, registry=registry)
        check(inputs)
    except (InputError, PluginPackageError) as error:
        say(str(error))
        return None
    for warning in inputs.warnings:
        say(f"warning: {warning}")
    if inputs.profiles is not None:
        return inputs, None
    return inputs, build_framework(default_profile_config(), registry)
