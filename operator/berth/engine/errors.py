"""Every way Berth's input can be wrong: one hierarchy of (field, problem) errors.

Bad input must be easy to fix, so each error names the field at fault. Parsers deep
inside an object know only a path relative to where they were called; the layer
that knows the whole object turns that into the error users see::

    ValueError
    └── FieldError                   (field, problem); field relative to the caller
        ├── InvalidObjectError       "<Kind> <name>: <field>: <problem>": what users see
        └── ProfileError             a profile cannot be built; `at` is a `ProfileField`
            └── InvalidPluginArgsError   a plugin's args are wrong; field inside the args
    PluginPackageError               an installed plugin package cannot be used (fatal at start)

The engine knows profiles only as typed values (`berth.engine.profile`), so a
`ProfileError` says where in the *typed* profile the problem is (a plugin at an
extension point, a path inside a plugin's args); `berth.profiles`, which knows
the SchedulerProfile document, maps that onto the document's field path.

Problems never embed an unbounded value: `shown()` gives a short repr, and every
problem is capped, because messages end up in logs and in a resource's status.
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass

# A status condition's message holds at most 32768 characters; a message is read by people.
MAX_PROBLEM_LENGTH = 1000

_SHORT = reprlib.Repr()
_SHORT.maxlevel = 3
_SHORT.maxstring = 60
_SHORT.maxother = 60
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = _SHORT.maxset = 6
_SHORT.maxlong = 40


def shown(value: object) -> str:
    """A repr of `value` that stays short however big or deeply nested the value is."""
    return _SHORT.repr(value)


def capped(problem: str) -> str:
    """`problem`, cut to `MAX_PROBLEM_LENGTH` characters."""
    if len(problem) <= MAX_PROBLEM_LENGTH:
        return problem
    return problem[: MAX_PROBLEM_LENGTH - 3] + "..."


class FieldError(ValueError):
    """A problem with one field, before we know which object it belongs to.

    Parsers deep inside an object raise this with a path relative to where they
    were called; the object-level parser prefixes the rest of the path and turns it
    into an `InvalidObjectError`.
    """

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = capped(problem)
        super().__init__(self._message())

    def _message(self) -> str:
        return f"{self.field}: {self.problem}"

    def under(self, prefix: str) -> FieldError:
        joined = (
            f"{prefix}.{self.field}"
            if self.field and not self.field.startswith("[")
            else (f"{prefix}{self.field}")
        )
        return FieldError(joined, self.problem)


class InvalidObjectError(FieldError):
    """An API object (or a part of one) cannot be understood.

    The message always reads ``<Kind> <namespace/name>: <field path>: <problem>`` so
    that a user can find the offending line in their manifest.
    """

    def __init__(self, *, kind: str, name: str, field: str, problem: str) -> None:
        self.kind = kind
        self.name = name
        super().__init__(field, problem)

    def _message(self) -> str:
        return f"{self.kind} {self.name}: {self.field}: {self.problem}"


@dataclass(frozen=True, slots=True)
class ProfileField:
    """A place in a typed profile (`berth.engine.profile.ProfileConfig`).

    One of: an extension point (`point` alone); a plugin in a point's `enabled` or
    `disabled` list (`point`, `plugin`, `listed`); a plugin's configuration entry
    (`plugin` alone); a path inside a plugin's args (`plugin`, `args`).
    """

    point: str = ""
    plugin: str = ""
    listed: str = "enabled"
    args: str | None = None

    @classmethod
    def of_point(cls, point: str) -> ProfileField:
        return cls(point=point)

    @classmethod
    def listing(cls, point: str, plugin: str, *, listed: str = "enabled") -> ProfileField:
        return cls(point=point, plugin=plugin, listed=listed)

    @classmethod
    def config_of(cls, plugin: str) -> ProfileField:
        return cls(plugin=plugin)

    @classmethod
    def args_of(cls, plugin: str, path: str = "") -> ProfileField:
        return cls(plugin=plugin, args=path)

    def __str__(self) -> str:
        if self.point and self.plugin:
            return f"plugins.{self.point}.{self.listed}[{self.plugin}]"
        if self.point:
            return f"plugins.{self.point}"
        if self.args is None:
            return f"pluginConfig[{self.plugin}]"
        return f"pluginConfig[{self.plugin}].args" + (f".{self.args}" if self.args else "")


class ProfileError(FieldError):
    """A profile cannot be built; `at` says where in the typed profile."""

    def __init__(self, at: ProfileField, problem: str) -> None:
        super().__init__(str(at), problem)
        self.at = at


class InvalidPluginArgsError(ProfileError):
    """A plugin's args are wrong; `field` is the path inside `args` ("" = args as a whole)."""

    def __init__(self, plugin: str, field: str, problem: str) -> None:
        super().__init__(ProfileField.args_of(plugin, field), problem)
        self.plugin = plugin
        self.field = field


class PluginPackageError(ValueError):
    """An installed plugin package cannot be used: its entry point clashes with another plugin,
    cannot be imported, or is not a factory. Fatal at start-up; the message names the entry
    point and its distribution."""
