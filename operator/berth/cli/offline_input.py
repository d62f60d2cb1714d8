"""What the offline commands (`berth simulate`, `berth capacity`) share: their checked input.

Both read nodes, bound pods, budgets and profiles the same way (from files, or for
`simulate --from-cluster` from the live cluster), report bad input as one line
on stderr prefixed with the command's name (exit status 2), and fall back to kube-scheduler's
default profile when no profile file is given.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from berth.cli.cluster_snapshot import load_cluster_input
from berth.cli.input_files import InputError
from berth.cli.simulate_input import SimulationInput, load_input
from berth.cli.simulate_output import MAX_MESSAGE, emit, printable
from berth.engine.errors import PluginPackageError
from berth.engine.framework.runtime import Framework, build_framework
from berth.engine.registry import Registry
from berth.profiles import default_profile_config, plugin_registry

__all__ = [
    "EXIT_BAD_INPUT",
    "OfflineInput",
    "add_input_arguments",
    "read_input",
    "say",
    "whole_number",
]

EXIT_BAD_INPUT = 2


def say(command: str, message: str) -> None:
    """One line on stderr, prefixed like every message of `berth COMMAND`."""
    emit(f"berth {command}: {printable(message, MAX_MESSAGE)}\n", sys.stderr)


@dataclass(frozen=True, slots=True)
class OfflineInput:
    inputs: SimulationInput
    registry: Registry

    def default_framework(self) -> Framework | None:
        """kube-scheduler's default profile for every pod, unless a profile file was given."""
        if self.inputs.profiles is not None:
            return None
        return build_framework(default_profile_config(), self.registry)


def whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least `minimum`, refused naming the rule."""
    rule = "must not be negative" if minimum == 0 else f"must be at least {minimum}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{rule}, got {value}")
        return value

    return parse


def add_input_arguments(
    parser: argparse.ArgumentParser, *, nodes_in: Any = None, nodes_required: bool = True
) -> None:
    """--nodes, --existing and --profile, as every offline command reads them; `nodes_in` is a
    group --nodes belongs to (simulate's, shared with --from-cluster)."""
    (nodes_in or parser).add_argument(
        "--nodes",
        required=nodes_in is None and nodes_required,
        type=Path,
        help="YAML of Node objects",
    )
    parser.add_argument(
        "--existing",
        type=Path,
        help="YAML of Pods already bound (spec.nodeName set), PodDisruptionBudgets, storage "
        "and DRA objects (as --objects)",
    )
    parser.add_argument(
        "--objects",
        type=Path,
        help="YAML of PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes, "
        "CSIDrivers, CSIStorageCapacities, VolumeAttachments, and of DeviceClasses, "
        "ResourceClaims, ResourceClaimTemplates, ResourceSlices and DeviceTaintRules "
        "(Dynamic Resource Allocation)",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        help="YAML of SchedulerProfile objects; pods are matched by schedulerName (default: "
        "kube-scheduler's default profile for every pod)",
    )


def read_input(
    args: argparse.Namespace,
    *,
    command: str,
    check: Callable[[SimulationInput], None] | None = None,
) -> OfflineInput | None:
    """The checked input named by `args`, its warnings said on stderr; None when it cannot be
    used, after saying why in one line naming the file, the object and the field. `check` may
    raise `InputError` for the command's own rules."""
    try:
        registry = plugin_registry()  # logs what it loaded; stderr stays for answers and errors
        load = load_cluster_input if getattr(args, "from_cluster", False) else load_input
        inputs = load(args, registry=registry)
        if check is not None:
            check(inputs)
    except (InputError, PluginPackageError) as error:
        say(command, str(error))
        return None
    for warning in inputs.warnings:
        say(command, f"warning: {warning}")
    return OfflineInput(inputs, registry)
