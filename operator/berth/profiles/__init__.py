"""SchedulerProfile documents <-> runnable engine profiles, with errors that name the resource and field.

The only layer that knows the document shape of a profile; the engine sees typed
`ProfileConfig` values. Refusals are `berth.engine.errors.InvalidObjectError`.
"""

from berth.profiles.defaults import DEFAULT_MULTI_POINT, default_profile_config, with_defaults
from berth.profiles.document import parse_profile_spec
from berth.profiles.loading import (
    API_GROUP,
    API_VERSION,
    KIND,
    LoadedProfile,
    document_field,
    framework_from_spec,
    load_profile,
)
from berth.profiles.plugin_packages import ENTRY_POINT_GROUP, InstalledPlugin, plugin_registry

__all__ = [
    "API_GROUP",
    "API_VERSION",
    "DEFAULT_MULTI_POINT",
    "ENTRY_POINT_GROUP",
    "KIND",
    "InstalledPlugin",
    "LoadedProfile",
    "default_profile_config",
    "document_field",
    "framework_from_spec",
    "load_profile",
    "parse_profile_spec",
    "plugin_registry",
    "with_defaults",
]
