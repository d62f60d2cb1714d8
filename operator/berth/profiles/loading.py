"""Turn one SchedulerProfile document into a built `Framework`, or say exactly what is wrong with it.

Every refusal is one `InvalidObjectError` naming the resource and the document's
field path: problems found while reading the document already carry that path;
problems the engine finds while building carry a place in the typed profile
(`ProfileField`), which is mapped back onto the document here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from berth.engine.errors import FieldError, InvalidObjectError, ProfileError, ProfileField, shown
from berth.engine.extenders import ExtenderConfig
from berth.engine.framework.runtime import Framework, build_framework
from berth.engine.registry import Registry
from berth.profiles.defaults import with_defaults
from berth.profiles.document import parse_profile_spec
from berth.profiles.extenders import with_extenders
from berth.profiles.strict import check_known_fields

API_GROUP = "berth.dev"
API_VERSION = f"{API_GROUP}/v1alpha1"
KIND = "SchedulerProfile"
_TOP_LEVEL_FIELDS = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})


@dataclass(frozen=True, slots=True)
class LoadedProfile:
    name: str  # metadata.name of the resource
    generation: int
    framework: Framework

    @property
    def scheduler_name(self) -> str:
        return self.framework.profile_name


def _named(items: object, name: str) -> int | None:
    """The index of the entry called `name` in a document list of {name, ...} objects."""
    if isinstance(items, list):
        for index, item in enumerate(items):
            if isinstance(item, Mapping) and item.get("name") == name:
                return index
    return None


def document_field(spec: Mapping[Any, Any], at: ProfileField, *, root: str = "spec") -> str:
    """Where in the profile document `spec` (rooted at `root`) the typed place `at` was written."""
    plugins = spec.get("plugins")
    if at.point:
        where = f"{root}.plugins.{at.point}"
        plugin_set = plugins.get(at.point) if isinstance(plugins, Mapping) else None
        listed = plugin_set.get(at.listed) if isinstance(plugin_set, Mapping) else None
        index = _named(listed, at.plugin) if at.plugin else None
        # A plugin the user did not list (one of the defaults) is named by its point.
        return where if index is None else f"{where}.{at.listed}[{index}].name"
    index = _named(spec.get("pluginConfig"), at.plugin)
    if index is None:
        return f"{root}.pluginConfig"
    if at.args is None:
        return f"{root}.pluginConfig[{index}].name"
    return f"{root}.pluginConfig[{index}].args" + (f".{at.args}" if at.args else "")


def _display_name(document: Mapping[Any, Any]) -> str:
    metadata = document.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return name if isinstance(name, str) and name else "<unnamed>"


def _spec(document: Mapping[Any, Any]) -> Mapping[Any, Any]:
    check_known_fields(document, _TOP_LEVEL_FIELDS, "")
    kind = document.get("kind")
    if kind != KIND:
        raise FieldError("kind", f"expected {KIND!r}, got {shown(kind)}")
    api_version = document.get("apiVersion", API_VERSION)
    if api_version != API_VERSION:
        raise FieldError("apiVersion", f"expected {API_VERSION!r}, got {shown(api_version)}")
    spec = document.get("spec")
    if not isinstance(spec, Mapping):
        raise FieldError("spec", "must be an object")
    return spec


def framework_from_spec(
    spec: Mapping[Any, Any],
    *,
    registry: Registry | None = None,
    root: str = "spec",
    merge_defaults: bool = True,
    extenders: tuple[ExtenderConfig, ...] = (),  # the global ones, called before its own
) -> Framework:
    """Build one profile document (a SchedulerProfile `spec` or a KubeSchedulerConfiguration
    `profiles[]` entry at `root`); raises `FieldError` with the document's field path.

    `merge_defaults=False` builds exactly the plugins listed (for tests with fake plugins).
    """
    config = with_extenders(parse_profile_spec(spec, root=root), extenders, f"{root}.extenders")
    try:
        return build_framework(with_defaults(config) if merge_defaults else config, registry)
    except ProfileError as bad:
        raise FieldError(document_field(spec, bad.at, root=root), bad.problem) from None


def load_profile(
    document: Mapping[Any, Any],
    *,
    registry: Registry | None = None,
    extenders: tuple[ExtenderConfig, ...] = (),  # the global ones (berth run --config)
) -> LoadedProfile:
    """Validate and build a SchedulerProfile; raises `InvalidObjectError` naming the field."""
    name = _display_name(document)
    try:
        framework = framework_from_spec(_spec(document), registry=registry, extenders=extenders)
    except FieldError as bad:
        field = bad.field.lstrip(".")
        raise InvalidObjectError(kind=KIND, name=name, field=field, problem=bad.problem) from None
    metadata = document.get("metadata")
    generation = metadata.get("generation", 0) if isinstance(metadata, Mapping) else 0
    valid = isinstance(generation, int) and not isinstance(generation, bool)
    return LoadedProfile(name, generation if valid else 0, framework)
