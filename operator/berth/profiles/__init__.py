"""SchedulerProfile resources <-> runnable engine profiles, with errors that name the resource and field."""

from berth.profiles.loading import (
    API_GROUP,
    KIND,
    InvalidProfileError,
    LoadedProfile,
    load_profile,
)

__all__ = ["API_GROUP", "KIND", "InvalidProfileError", "LoadedProfile", "load_profile"]
