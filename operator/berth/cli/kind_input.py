"""Objects of the watched kinds (storage, DRA) read from offline input: parsed and checked alike.

`berth simulate` reads PersistentVolumes, DeviceClasses and the like from `--existing` and
`--objects` with the same parsers the operator's watches use; a malformed one stops the run
with a message naming the file, the object and the field, and two objects of one kind and
name are refused, since a cluster cannot hold both and the second would silently win.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from berth.cli.input_files import InputError
from berth.engine.errors import InvalidObjectError
from berth.engine.model.parsing import brief_name
from berth.kube.watched_kinds import WatchedKind

__all__ = ["parse_as", "refuse_repeated"]

T = TypeVar("T")


def parse_as(watched: WatchedKind[T], path: Path | str, raw: Mapping[str, Any]) -> T:
    """`raw` parsed as `watched`; raises `InputError` naming the file, object and field."""
    try:
        return watched.parse(raw)
    except InvalidObjectError as error:
        raise InputError(f"{path}: {error}") from None


def refuse_repeated(
    objects: Sequence[tuple[Path | str, T]], identity: Callable[[T], tuple[str, str]]
) -> None:
    """Raise `InputError` for a second object of one (kind, key) `identity`."""
    seen: dict[tuple[str, str], Path | str] = {}
    for path, obj in objects:
        kind, key = identity(obj)
        where = seen.get((kind, key))
        if where is not None:
            raise InputError(
                f"{path}: {kind} {brief_name(key)}: metadata.name: another {kind} in {where} "
                "has this name"
            )
        seen[(kind, key)] = path
