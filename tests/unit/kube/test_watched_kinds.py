"""Every storage and DRA kind Berth watches: added, updated and deleted in the app's cache."""

from __future__ import annotations

from typing import Any

import pytest

from berth.kube.dra_kinds import dra_kind_named
from berth.kube.storage_kinds import storage_kind_named
from tests.unit.kube.fakes import make_app
from tests.unit.kube.test_dra_watches import ONE_OF_EACH as DRA_OBJECTS
from tests.unit.kube.test_storage_watches import ONE_OF_EACH as STORAGE_OBJECTS
from tests.unit.kube.watched_objects import deliver, held, held_keys

ONE_OF_EACH: dict[str, dict[str, Any]] = {**STORAGE_OBJECTS, **DRA_OBJECTS}


@pytest.mark.parametrize("kind", sorted(ONE_OF_EACH))
async def test_watch_events_add_update_and_delete(kind: str) -> None:
    app = make_app()
    raw = ONE_OF_EACH[kind]
    watched = storage_kind_named(kind) or dra_kind_named(kind)
    assert watched is not None
    key = watched.key_of(raw)
    await deliver(app, kind, None, raw)  # kopf's initial listing has no type
    assert held_keys(app, kind) == [key]
    newer = {**raw, "metadata": {**raw["metadata"], "resourceVersion": "2"}}
    await deliver(app, kind, "MODIFIED", newer)
    assert held(app, kind)[str(key)].resource_version == "2"
    await deliver(app, kind, "DELETED", newer)
    assert held_keys(app, kind) == []
