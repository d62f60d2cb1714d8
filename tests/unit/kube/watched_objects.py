"""Deliver a watch event to the handler Berth registers for a storage or DRA kind, and read
what the app's cache then holds of that kind (kind names are unique across the two)."""

from __future__ import annotations

from typing import Any

import kopf

from berth.kube import handlers
from berth.kube.app import BerthApp

__all__ = ["deliver", "held", "held_keys"]


def held(app: BerthApp, kind: str) -> dict[str, Any]:
    """The API's version of every object of `kind` the app's cache holds, by key."""
    cluster = app.scheduler.cache.cluster
    store = cluster.storage if kind in handlers.STORAGE_HANDLERS else cluster.dra
    return dict(store.held(kind))


def held_keys(app: BerthApp, kind: str) -> list[str]:
    return sorted(held(app, kind))


async def deliver(app: BerthApp, kind: str, event_type: str | None, raw: dict[str, Any]) -> None:
    """Through the registered kopf handler, as kopf would call it."""
    handler = handlers.STORAGE_HANDLERS.get(kind) or handlers.DRA_HANDLERS[kind]
    await handler(event={"type": event_type, "object": raw}, memo=kopf.Memo(berth=app))
