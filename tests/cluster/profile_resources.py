"""SchedulerProfile resources in end-to-end tests: shipped examples renamed per test, applied
with kubectl, and Berth's verdict on them read from their status."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml

from berth.controlplane import LocalControlPlane
from tests.cluster.helpers import poll

PROFILES = "/apis/berth.dev/v1alpha1/schedulerprofiles"


def renamed_example(path: Path, name: str) -> dict[str, Any]:
    """A shipped example profile, renamed (resource and schedulerName) so that a test has its own."""
    document: dict[str, Any] = yaml.safe_load(path.read_text())
    document["metadata"]["name"] = name
    document["spec"]["schedulerName"] = name
    return document


def apply(
    plane: LocalControlPlane, document: dict[str, Any], *, check: bool = True
) -> subprocess.CompletedProcess[str]:
    return plane.kubectl("apply", "-f", "-", input=json.dumps(document), check=check)


def get_profile(plane: LocalControlPlane, name: str) -> dict[str, Any]:
    found: dict[str, Any] = plane.request("GET", f"{PROFILES}/{name}")
    return found


def accepted_condition(profile: dict[str, Any]) -> dict[str, Any] | None:
    for condition in (profile.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Accepted":
            return dict(condition)
    return None


def wait_verdict(plane: LocalControlPlane, name: str, *, generation: int) -> dict[str, Any]:
    """The profile once Berth has judged `generation` of it."""

    def probe() -> dict[str, Any] | None:
        profile = get_profile(plane, name)
        observed = (profile.get("status") or {}).get("observedGeneration")
        return profile if observed == generation and accepted_condition(profile) else None

    return poll(probe, timeout=30, description=f"SchedulerProfile {name} generation {generation}")
