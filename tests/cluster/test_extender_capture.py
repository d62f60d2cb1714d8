"""The committed extender captures still say what the real kube-scheduler sends and says.

Re-runs `tests.extender_capture` (its own control plane, so that it can start
kube-scheduler with its own extenders whatever the session's kube-scheduler is
doing) into a temporary directory and compares with tests/data/extender/: the
same calls in the same order with the same shapes, and the same messages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.extender_capture import DATA
from tests.extender_capture import main as capture


def _load(directory: Path, name: str) -> Any:
    return json.loads((directory / name).read_text(encoding="utf-8"))


def _shape(call: dict[str, Any]) -> tuple[str, str, tuple[tuple[str, bool], ...]]:
    """A call without its volatile content: verb, pod, and which fields were null."""
    body = call["body"]
    pod = body.get("Pod", {}).get("metadata", {}).get("name") or body.get("PodName")
    return call["verb"], pod, tuple(sorted((key, value is None) for key, value in body.items()))


def test_kube_scheduler_still_sends_and_says_what_was_captured(tmp_path: Path) -> None:
    capture(["--out", str(tmp_path)])
    for name in ("calls-full.json", "calls-cached.json"):
        fresh = [_shape(call) for call in _load(tmp_path, name)]
        assert fresh == [_shape(call) for call in _load(DATA, name)], name
    fresh_messages = _load(tmp_path, "messages.json")
    committed = _load(DATA, "messages.json")
    for scenario, message in committed.items():
        if isinstance(message, str) and scenario != "url":
            expected = message.replace(committed["url"], fresh_messages["url"])
            assert fresh_messages[scenario] == expected, scenario
