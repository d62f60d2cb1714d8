"""What a selector's text says about its use of `device`, read from its tokens.

Two things cel-expr-python's checker cannot tell us, because `device` reaches it as a dynamic
map: which fields of `device` an expression names (upstream declares `device` as an object,
so `device.nosuch` is a compile error there), and which attribute domains it looks up by a
literal key (to give a device that lacks one the empty map upstream's lookup default gives).
"""

from __future__ import annotations

import re

__all__ = [
    "check_device_fields",
    "literal_call_arguments",
    "literal_domains",
    "undeclared_member_call",
    "wrap_call_arguments",
]

_TOKEN = re.compile(
    r"""(?P<string>[rRbB]{0,2}(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))"""
    r"|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<comment>//[^\n]*)"
    r"|(?P<space>\s+)"
    r"|(?P<other>.)",
    re.DOTALL,
)
# A domain is a DNS subdomain; other literal keys cannot name one.
_DOMAIN = re.compile(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?")


def _tokens(expression: str) -> list[tuple[str, str, int]]:
    """(kind, text, offset) of each token, without spaces and comments."""
    tokens = []
    for match in _TOKEN.finditer(expression):
        kind = match.lastgroup or "other"
        if kind not in ("space", "comment"):
            tokens.append((kind, match.group(), match.start()))
    return tokens


def _string_value(literal: str) -> str | None:
    """The text of a plain string literal, or None when it uses escapes or is bytes."""
    prefix = len(literal) - len(literal.lstrip("rRbB"))
    if "b" in literal[:prefix].lower():
        return None
    body = literal[prefix:]
    quote = 3 if body[:3] in ('"""', "'''") else 1
    text = body[quote:-quote]
    return None if "\\" in text else text


def literal_domains(expression: str) -> tuple[frozenset[str], bool]:
    """Domain-like string literals used as index keys, and whether any index key is computed."""
    domains: set[str] = set()
    computed = False
    tokens = _tokens(expression)
    for position, (kind, text, _) in enumerate(tokens[:-1]):
        if kind != "other" or text != "[":
            continue
        key_kind, key_text, _ = tokens[position + 1]
        closed = position + 2 < len(tokens) and tokens[position + 2][1] == "]"
        value = _string_value(key_text) if key_kind == "string" else None
        if value is not None and closed and _DOMAIN.fullmatch(value):
            domains.add(value)
        elif key_kind != "string" or not closed:
            computed = True
    return frozenset(domains), computed


def _location(expression: str, offset: int) -> tuple[str, str]:
    """A cel-go issue location: "<input>:line:column" and the line with a caret under it."""
    line_start = expression.rfind("\n", 0, offset) + 1
    line_end = expression.find("\n", offset)
    line = expression[line_start : line_end if line_end >= 0 else len(expression)]
    line_number = expression.count("\n", 0, offset) + 1
    column = offset - line_start
    return f"<input>:{line_number}:{column + 1}", f" | {line}\n | {'.' * column}^"


def check_device_fields(expression: str, fields: frozenset[str]) -> str | None:
    """cel-go's issue text for the first `device.<field>` naming no field of `device`, if any."""
    tokens = _tokens(expression)
    for position in range(len(tokens) - 2):
        kind, text, _ = tokens[position]
        if kind != "ident" or text != "device":
            continue
        if position and tokens[position - 1][1] == ".":
            continue  # a field called "device" of something else
        dot, field = tokens[position + 1], tokens[position + 2]
        if dot[1] == "." and field[0] == "ident" and field[1] not in fields:
            where, caret = _location(expression, dot[2])
            return f"ERROR: {where}: undefined field '{field[1]}'\n{caret}"
    return None


def literal_call_arguments(expression: str, functions: frozenset[str]) -> list[str]:
    """String literals (as written) passed first to a member call of one of `functions`.

    cel-go compiles such a constant argument when it builds the program (the regex functions'
    patterns), so an invalid one fails before any device is seen.
    """
    tokens = _tokens(expression)
    found = []
    for position in range(len(tokens) - 4):
        dot, name, paren, argument, after = tokens[position : position + 5]
        if (
            dot[1] == "."
            and name[0] == "ident"
            and name[1] in functions
            and paren[1] == "("
            and argument[0] == "string"
            and after[1] in (",", ")")
        ):
            found.append(argument[1])
    return found


def undeclared_member_call(expression: str, functions: frozenset[str]) -> str | None:
    """cel-go's issue text for the first member call of one of `functions`, if any: for
    functions the runtime has that Kubernetes' environment does not declare."""
    tokens = _tokens(expression)
    for position in range(len(tokens) - 2):
        dot, name, paren = tokens[position : position + 3]
        if dot[1] == "." and name[0] == "ident" and name[1] in functions and paren[1] == "(":
            where, caret = _location(expression, paren[2])
            return f"ERROR: {where}: undeclared reference to '{name[1]}' (in container '')\n{caret}"
    return None


def wrap_call_arguments(expression: str, *, function: str, wrapper: str) -> str:
    """The expression with each argument list of `function(...)` passed through `wrapper`.

    `function` is a dotted global name ("lists.range"); the text is otherwise unchanged, so
    compile errors are taken from the original and only the program uses the wrapped text.
    """
    pattern = [*re.split(r"(\.)", function), "("]  # "lists.range" -> lists . range (
    tokens = _tokens(expression)
    inserts: list[tuple[int, str]] = []
    for position in range(len(tokens) - len(pattern) + 1):
        window = [text for _, text, _ in tokens[position : position + len(pattern)]]
        preceded_by_dot = position > 0 and tokens[position - 1][1] == "."
        if window != pattern or preceded_by_dot:
            continue
        open_index = position + len(pattern) - 1
        depth = 0
        for _, text, offset in tokens[open_index:]:
            depth += text in "([{"
            depth -= text in ")]}"
            if depth == 0:
                inserts += [(tokens[open_index][2] + 1, f"{wrapper}("), (offset, ")")]
                break
    for offset, text in sorted(inserts, reverse=True):
        expression = expression[:offset] + text + expression[offset:]
    return expression
