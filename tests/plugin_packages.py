"""Install a plugin package for one test: a `.dist-info` with an `entry_points.txt` on sys.path.

That is what pip leaves behind for an installed package (minus the code, which the entry
points here find in this repository): `importlib.metadata` discovers the distribution on
`sys.path` exactly as it discovers one pip installed, so the loader under test runs for real.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from berth.profiles import ENTRY_POINT_GROUP


def install_distribution(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    name: str,
    entry_points: Mapping[str, str],
    version: str = "1.0",
) -> Path:
    """Make distribution `name` declare `entry_points` (plugin name -> "module:object") under
    `berth.plugins`, installed in `root` (added to sys.path for this test); returns `root`."""
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = [f"[{ENTRY_POINT_GROUP}]", *(f"{key} = {value}" for key, value in entry_points.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    monkeypatch.syspath_prepend(str(root))  # also invalidates the import caches
    return root
