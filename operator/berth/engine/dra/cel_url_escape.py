"""Go's net/url percent-escaping and Go's quoting of texts, for the URL parse port.

net/url decides per byte and per URL component ("mode") what must be escaped, unescapes with
checks that differ by component (a host refuses most escapes), and quotes the texts in its
errors with strconv.Quote. Both work on bytes, and a percent escape may decode to bytes that are
not UTF-8; `go_string` turns such bytes into CEL text as Go does when it reads them as runes.
"""

from __future__ import annotations

import codecs
import unicodedata

__all__ = [
    "ALNUM",
    "URLError",
    "escape",
    "escaped_form",
    "go_quote",
    "go_string",
    "split_encoding",
    "unescape",
]

ALNUM = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_SUB_DELIMS_HOST = frozenset(b"!$&'()*+,;=:[]<>\"")
_UNRESERVED = frozenset(b"-_.~")
_RESERVED = frozenset(b"$&+,/:;=?@")


class URLError(ValueError):
    """A text is not a URL to Go; the message is net/url's."""


def shouldescape(byte: int, mode: str) -> bool:
    """net/url's shouldEscape for one byte in one of its encoding modes."""
    if byte in ALNUM:
        return False
    if mode in ("host", "zone") and byte in _SUB_DELIMS_HOST:
        return False
    if byte in _UNRESERVED:
        return False
    if byte in _RESERVED:
        if mode == "path":
            return byte == ord("?")
        if mode == "path_segment":
            return byte in b"/;,?"
        if mode == "user_password":
            return byte in b"@/?:"
        if mode == "query_component":
            return True
        if mode == "fragment":
            return False
    return not (mode == "fragment" and byte in b"!()*")


def _go_replace(error: UnicodeError) -> tuple[str, int]:
    # Go reads each byte of a bad sequence as one U+FFFD; Python's "replace" groups them.
    assert isinstance(error, UnicodeDecodeError)
    return "\ufffd", error.start + 1


codecs.register_error("berth-go-replace", _go_replace)


def go_string(data: bytes) -> str:
    """Go bytes as CEL text: each byte that is not UTF-8 becomes U+FFFD."""
    return data.decode("utf-8", "berth-go-replace")


_SHORT_ESCAPES = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}


def go_quote(data: bytes) -> str:
    """strconv.Quote: printable runes kept, the rest escaped, bytes not UTF-8 as \\xNN."""
    parts = ['"']
    index = 0
    while index < len(data):
        width = next(
            (
                size
                for size in (1, 2, 3, 4)
                if _decodes(data[index : index + size]) and index + size <= len(data)
            ),
            0,
        )
        if not width:
            parts.append(f"\\x{data[index]:02x}")
            index += 1
            continue
        character = data[index : index + width].decode("utf-8")
        index += width
        code = ord(character)
        if character in '"\\':
            parts.append("\\" + character)
        elif character == " " or (code >= 0x20 and _printable(character)):
            parts.append(character)
        elif code in _SHORT_ESCAPES:
            parts.append(_SHORT_ESCAPES[code])
        elif code < 0x20 or code == 0x7F:
            parts.append(f"\\x{code:02x}")
        elif code < 0x10000:
            parts.append(f"\\u{code:04x}")
        else:
            parts.append(f"\\U{code:08x}")
    parts.append('"')
    return "".join(parts)


def _decodes(chunk: bytes) -> bool:
    try:
        return len(chunk.decode("utf-8")) == 1
    except UnicodeDecodeError:
        return False


def _printable(character: str) -> bool:
    # unicode.IsPrint: letters, marks, numbers, punctuation, symbols (and ASCII space).
    return unicodedata.category(character)[0] in "LMNPS"


def unescape(text: bytes, mode: str) -> bytes:
    """net/url's unescape: validates `text` for `mode` and decodes its percent escapes."""
    index = 0
    while index < len(text):
        byte = text[index]
        if byte == ord("%"):
            escape = text[index : index + 3]
            if len(escape) < 3 or escape[1] not in _HEX or escape[2] not in _HEX:
                raise URLError(f"invalid URL escape {go_quote(escape)}")
            value = int(escape[1:], 16)
            if mode == "host" and value < 0x80 and escape != b"%25":
                raise URLError(f"invalid URL escape {go_quote(escape)}")
            if (
                mode == "zone"
                and escape != b"%25"
                and value != ord(" ")
                and shouldescape(value, "host")
            ):
                raise URLError(f"invalid URL escape {go_quote(escape)}")
            index += 3
            continue
        if mode in ("host", "zone") and byte < 0x80 and shouldescape(byte, mode):
            quoted = go_quote(bytes((byte,)))
            raise URLError(f"invalid character {quoted} in host name")
        index += 1
    decoded = bytearray()
    index = 0
    while index < len(text):
        byte = text[index]
        if byte == ord("%"):
            decoded.append(int(text[index + 1 : index + 3], 16))
            index += 3
            continue
        decoded.append(ord(" ") if byte == ord("+") and mode == "query_component" else byte)
        index += 1
    return bytes(decoded)


def escape(data: bytes, mode: str) -> bytes:
    escaped = bytearray()
    for byte in data:
        if byte == ord(" ") and mode == "query_component":
            escaped.append(ord("+"))
        elif shouldescape(byte, mode):
            escaped += b"%%%02X" % byte
        else:
            escaped.append(byte)
    return bytes(escaped)


def _valid_encoded(data: bytes, mode: str) -> bool:
    return all(byte in b"!$&'()*+,;=:@[]%" or not shouldescape(byte, mode) for byte in data)


def _valid_optional_port(port: bytes) -> bool:
    return not port or (port[:1] == b":" and all(0x30 <= byte <= 0x39 for byte in port[1:]))


def split_encoding(text: bytes, mode: str) -> tuple[bytes, bytes]:
    """The decoded value of a path or fragment, and its spelling if Go's escape would differ
    (url.URL's RawPath, RawFragment: kept so the URL prints as written)."""
    decoded = unescape(text, mode)
    return decoded, b"" if escape(decoded, mode) == text else text


def escaped_form(decoded: bytes, raw: bytes, mode: str) -> bytes:
    """EscapedPath/EscapedFragment: the raw spelling if it still encodes the value, else
    Go's escape of the value."""
    if raw and _valid_encoded(raw, mode):
        try:
            if unescape(raw, mode) == decoded:
                return raw
        except URLError:
            pass
    return escape(decoded, mode)
