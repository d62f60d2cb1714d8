"""Errors that name the object and the field at fault, so bad input is easy to fix."""

from __future__ import annotations


class InvalidObjectError(ValueError):
    """An API object (or a part of one) cannot be understood.

    The message always reads ``<Kind> <namespace/name>: <field path>: <problem>`` so
    that a user can find the offending line in their manifest.
    """

    def __init__(self, *, kind: str, name: str, field: str, problem: str) -> None:
        self.kind = kind
        self.name = name
        self.field = field
        self.problem = problem
        super().__init__(f"{kind} {name}: {field}: {problem}")


class FieldError(ValueError):
    """A problem with one field, before we know which object it belongs to.

    Parsers deep inside an object raise this with a path relative to where they
    were called; the object-level parser prefixes the rest of the path and turns it
    into an `InvalidObjectError`.
    """

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")

    def under(self, prefix: str) -> FieldError:
        joined = (
            f"{prefix}.{self.field}"
            if self.field and not self.field.startswith("[")
            else (f"{prefix}{self.field}")
        )
        return FieldError(joined, self.problem)
