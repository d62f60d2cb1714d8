"""Out-of-tree plugins installed as Python packages, found through `berth.plugins` entry points.

A package declares each plugin as an entry point of the group `berth.plugins`: the entry
point's name is the plugin's name (what a SchedulerProfile lists) and its object is the
plugin's factory, `new_plugin(args, handle)`. `berth run`, `kopf run -m berth.kube.handlers`
and `berth simulate` build one registry at start-up from the in-tree plugins and every
installed package, so live profiles and simulations know exactly the same names.

Anything wrong with a package is fatal there, before any profile is served, rather than a
surprise on the first profile that names it: a name that clashes with an in-tree or another
installed plugin, an object that cannot be imported, an object that is not a factory.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points

from berth.engine.errors import PluginPackageError
from berth.engine.registry import PluginFactory, Registry

__all__ = ["ENTRY_POINT_GROUP", "InstalledPlugin", "installed_plugins", "plugin_registry"]

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "berth.plugins"


@dataclass(frozen=True, slots=True)
class InstalledPlugin:
    name: str
    factory: PluginFactory
    distribution: str
    version: str

    def __str__(self) -> str:
        return f"plugin {self.name} from distribution {self.distribution} version {self.version}"


def _origin(entry_point: EntryPoint) -> tuple[str, str]:
    dist = entry_point.dist
    if dist is None:
        return "<unknown distribution>", "<unknown version>"
    return dist.name, dist.version


def _described(entry_point: EntryPoint) -> str:
    distribution, version = _origin(entry_point)
    return (
        f"{ENTRY_POINT_GROUP} entry point '{entry_point.name} = {entry_point.value}' "
        f"of distribution {distribution} {version}"
    )


def _factory(entry_point: EntryPoint) -> PluginFactory:
    try:
        loaded = entry_point.load()
    except Exception as error:  # whatever importing a third-party module raises: fatal, named
        raise PluginPackageError(
            f"{_described(entry_point)}: cannot be imported: {type(error).__name__}: {error}"
        ) from error
    if not callable(loaded):
        raise PluginPackageError(
            f"{_described(entry_point)}: is a {type(loaded).__name__}, not a plugin factory "
            "(a callable new_plugin(args, handle))"
        )
    try:
        inspect.signature(loaded).bind(None, None)
    except TypeError:
        raise PluginPackageError(
            f"{_described(entry_point)}: the factory cannot be called as new_plugin(args, handle)"
        ) from None
    except ValueError:
        pass  # no signature to inspect (a builtin): trust it
    factory: PluginFactory = loaded
    return factory


def installed_plugins(*, reserved: Collection[str]) -> list[InstalledPlugin]:
    """Every plugin that installed packages declare, by name; raises `PluginPackageError` for
    a name in `reserved` (the in-tree plugins), a name declared twice, or a bad factory."""
    found: dict[str, InstalledPlugin] = {}
    declared = sorted(
        entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, _origin(e), e.value)
    )
    for entry_point in declared:
        name = entry_point.name
        if name in reserved:
            raise PluginPackageError(
                f"{_described(entry_point)}: the name {name!r} is an in-tree plugin's; "
                "an installed plugin needs a name of its own"
            )
        other = found.get(name)
        if other is not None:
            raise PluginPackageError(
                f"{_described(entry_point)}: the name {name!r} is already declared by "
                f"distribution {other.distribution} {other.version}"
            )
        distribution, version = _origin(entry_point)
        found[name] = InstalledPlugin(name, _factory(entry_point), distribution, version)
    return list(found.values())


def _log(line: str) -> None:
    logger.info("%s", line)


def plugin_registry(*, announce: Callable[[str], None] = _log) -> Registry:
    """The in-tree plugins plus every installed plugin package, each announced ("loaded plugin
    X from distribution Y version Z"; logged unless told otherwise) as it is loaded.

    Built once at start-up; raises `PluginPackageError` when an installed package is unusable.
    """
    in_tree = Registry.in_tree()
    installed = installed_plugins(reserved=in_tree.names())
    for plugin in installed:
        announce(f"loaded {plugin}")
    return Registry.in_tree({plugin.name: plugin.factory for plugin in installed})
