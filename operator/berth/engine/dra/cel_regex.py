"""Kubernetes' regex functions for CEL (k8s.io/apiserver `library.Regex`): `find`, `findAll`.

Upstream runs Go's regexp, an RE2 dialect, so Berth uses RE2 too (google-re2): the same
syntax, the same leftmost-first matching, no backtracking. Go's `FindAllString` skips an empty
match right after a previous match, which Python's finditer does not; `_find_all` follows Go.
An invalid pattern fails the evaluation with Go's wording ("Illegal regex: error parsing
regexp: ..."), which kube-scheduler reports verbatim.
"""

from __future__ import annotations

import functools
from typing import Any

import re2  # google-re2: untyped (ignore_missing_imports)
from cel_expr_python import cel

from berth.engine.dra.cel_library import CelFunctionError, overload

__all__ = ["REGEX_EXTENSION", "RegexError", "compile_pattern"]

# RE2's error texts for its error codes, and Go's regexp/syntax texts for the same codes.
_GO_ERROR_TEXTS = {
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
}
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # an invalid selector is reported once, by the scheduler


class RegexError(ValueError):
    """A pattern is not a valid RE2 expression; the message is Go's regexp error."""


def _go_error(pattern: str, error: Exception) -> str:
    raw = error.args[0] if error.args else ""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    code, _, argument = text.partition(": ")
    go_code = _GO_ERROR_TEXTS.get(code)
    if go_code is None:
        return f"error parsing regexp: {text}: `{pattern}`"
    if code == "trailing \\":
        argument = ""  # Go names no text for this one
    return f"error parsing regexp: {go_code}: `{argument}`"


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str) -> Any:
    """The compiled RE2 expression; raises `RegexError` with Go's message."""
    try:
        return re2.compile(pattern, options=_OPTIONS)
    except re2.error as error:
        raise RegexError(_go_error(pattern, error)) from None


def _compiled(pattern: str) -> Any:
    try:
        return compile_pattern(pattern)
    except RegexError as error:
        raise CelFunctionError(f"Illegal regex: {error}") from None


def _find(text: str, pattern: str) -> str:
    match = _compiled(pattern).search(text)
    return "" if match is None else str(match.group())


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    compiled = _compiled(pattern)
    found: list[str] = []
    position, previous_end = 0, -1
    while position <= len(text) and (limit < 0 or len(found) < limit):
        match = compiled.search(text, position)
        if match is None:
            break
        start, end = match.span()
        # Go drops an empty match that abuts the previous match, and steps past it.
        accept = not (start == end and start == previous_end)
        position = end + 1 if start == end else end
        previous_end = end
        if accept:
            found.append(str(match.group()))
    return found


def _declarations() -> list[cel.FunctionDecl]:
    string, strings, integer = cel.Type.STRING, cel.Type.List(cel.Type.STRING), cel.Type.INT
    find = overload("string_find_string", string, [string, string], _find, member=True)
    find_all = [
        overload("string_find_all_string", strings, [string, string], _find_all, member=True),
        overload(
            "string_find_all_string_int",
            strings,
            [string, string, integer],
            _find_all,
            member=True,
        ),
    ]
    return [cel.FunctionDecl("find", [find]), cel.FunctionDecl("findAll", find_all)]


REGEX_EXTENSION = cel.CelExtension("kubernetes.regex", _declarations())
