"""Typed, frozen views of the API objects the scheduler reads, parsed once from plain dicts."""
