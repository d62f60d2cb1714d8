"""The committed extender captures still say what the real kube-scheduler sends and says.

Re-runs `tests.extender_capture` (its own control plane, so that it can start
kube-scheduler with its own extenders whatever the session's kube-scheduler is
doing) into a temporary directory and compares with tests/data/extender/: the
same calls with the same shapes, in the same order for each pod, and the same
messages. (Across pods the order is not kube-scheduler's to keep: one pod's bind
runs in its binding cycle while the next pod's filter may already be sent.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.extender_capture import DATA
from tests.extender_capture import main as capture


def _load(directory: Path, name: str) -> Any:
    return json.loads((directory / name).read_text(encoding="utf-8"))


Shape = tuple[str, str, tuple[tuple[str, bool], ...]]


def _shape(call: dict[str, Any]) -> Shape:
    """A call without its volatile content: verb, pod, and which fields were null."""
    body = call["body"]
    pod = body.get("Pod", {}).get("metadata", {}).get("name") or body.get("PodName")
    return call["verb"], pod, tuple(sorted((key, value is None) for key, value in body.items()))


def _per_pod(calls: list[dict[str, Any]]) -> dict[str, list[Shape]]:
    """Each pod's calls in the order they were made."""
    grouped: dict[str, list[Shape]] = {}
    for call in calls:
        shape = _shape(call)
        grouped.setdefault(shape[1], []).append(shape)
    return grouped


def test_kube_scheduler_still_sends_and_says_what_was_captured(tmp_path: Path) -> None:
    capture(["--out", str(tmp_path)])
    for name in ("calls-full.json", "calls-cached.json"):
        fresh = _per_pod(_load(tmp_path, name))
        assert fresh == _per_pod(_load(DATA, name)), name
    fresh_messages = _load(tmp_path, "messages.json")
    committed = _load(DATA, "messages.json")
    for scenario, message in committed.items():
        if isinstance(message, str) and scenario != "url":
            expected = message.replace(committed["url"], fresh_messages["url"])
            assert fresh_messages[scenario] == expected, scenario
