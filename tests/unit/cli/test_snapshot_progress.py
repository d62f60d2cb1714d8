"""Reading a cluster snapshot says how far it is, collection by collection, on a terminal only."""

from __future__ import annotations

import io
from typing import Any

from berth.cli.cluster_snapshot import WORKLOAD_PATHS, read_snapshot
from berth.cli.progress import listing_progress
from berth.kube.dra_kinds import DRA_INPUT_KINDS
from berth.kube.storage_kinds import STORAGE_KINDS


class EmptyCluster:
    """An API server with nothing in it (every listing is empty)."""

    def __init__(self) -> None:
        self.listed: list[str] = []

    async def list_json(self, path: str, **_: Any) -> tuple[list[Any], str]:
        self.listed.append(path)
        return [], "1"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


async def test_each_collection_listed_is_reported() -> None:
    cluster = EmptyCluster()
    seen: list[tuple[int, int]] = []
    await read_snapshot(cluster, progress=lambda done, total: seen.append((done, total)))  # type: ignore[arg-type]
    total = 5 + len(WORKLOAD_PATHS) + len(STORAGE_KINDS) + len(DRA_INPUT_KINDS)
    assert seen == [(done, total) for done in range(1, total + 1)]
    assert len(cluster.listed) == total


def test_the_listing_line_goes_to_a_terminal_only() -> None:
    assert listing_progress(io.StringIO()) is None
    terminal = Terminal()
    progress = listing_progress(terminal)
    assert progress is not None
    progress(9, 9)
    assert terminal.getvalue() == "\rlisted 9/9 kinds of object from the cluster\n"
