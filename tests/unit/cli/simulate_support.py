"""Helpers for `berth simulate` and `berth capacity` tests: write objects to YAML files, run the command in-process."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from berth.cli.main import main


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str

    def json(self) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.out)
        return result


def write(path: Path, *objects: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(objects))
    return path


def berth(command: str, *argv: str | Path) -> Outcome:
    """Run `berth COMMAND ARGV...` in-process, capturing its output."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([command, *map(str, argv)])
    return Outcome(code, out.getvalue(), err.getvalue())


def simulate(*argv: str | Path) -> Outcome:
    return berth("simulate", *argv)
