"""Turn one SchedulerProfile document into a built `Framework`, or say exactly what is wrong with it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from berth.engine.errors import FieldError
from berth.engine.framework.runtime import Framework, ProfileError, build_framework
from berth.engine.profile import parse_profile_spec, with_defaults
from berth.engine.registry import Registry

API_GROUP = "berth.dev"
KIND = "SchedulerProfile"


class InvalidProfileError(ValueError):
    """``SchedulerProfile <name>: <field>: <problem>``; the last good profile keeps serving."""

    def __init__(self, name: str, field: str, problem: str) -> None:
        self.name = name
        self.field = field
        self.problem = problem
        super().__init__(f"{KIND} {name}: {field}: {problem}")


@dataclass(frozen=True, slots=True)
class LoadedProfile:
    name: str  # metadata.name of the resource
    generation: int
    framework: Framework

    @property
    def scheduler_name(self) -> str:
        return self.framework.profile_name


def load_profile(document: Mapping[str, Any], *, registry: Registry | None = None) -> LoadedProfile:
    """Validate and build a SchedulerProfile; raises `InvalidProfileError` naming the field."""
    metadata = document.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    display = name if isinstance(name, str) and name else "<unnamed>"
    kind = document.get("kind")
    if kind != KIND:
        raise InvalidProfileError(display, "kind", f"expected {KIND!r}, got {kind!r}")
    spec = document.get("spec")
    if not isinstance(spec, Mapping):
        raise InvalidProfileError(display, "spec", "must be an object")
    try:
        config = with_defaults(parse_profile_spec(spec))
        framework = build_framework(config, registry)
    except (FieldError, ProfileError) as bad:
        raise InvalidProfileError(display, bad.field, bad.problem) from None
    generation = metadata.get("generation", 0) if isinstance(metadata, Mapping) else 0
    return LoadedProfile(display, generation if isinstance(generation, int) else 0, framework)
