"""Settings tests start from a clean environment: a developer's KUBECONFIG or BERTH_* must not leak in."""

from __future__ import annotations

import pytest

from berth.kube.settings import CONFIG_ENV, SETTINGS


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("KUBECONFIG", "POD_IP", CONFIG_ENV, *(spec.env for spec in SETTINGS)):
        monkeypatch.delenv(name, raising=False)
