"""URLs as Go's net/url reads them, for CEL's `url()` and `isURL()`.

Kubernetes' URL library validates with `url.ParseRequestURI`, keeps what `url.Parse` makes of
the same text, answers its getters from Go's URL fields (`Hostname`, `Port`, `EscapedPath`,
`Query`) and reports Go's parse errors verbatim, which kube-scheduler puts in FailedScheduling
messages. Python's urllib splits, escapes and words things differently, so the parse here
follows Go 1.26's rules (with the GODEBUG defaults of kube-scheduler's go1.26 module: strict
colons in http(s) hosts, at most 10,000 query parameters). Go works on bytes, and so does this
port: a percent escape may decode to bytes that are not UTF-8.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from berth.engine.dra.cel_address import AddressError, parse_address
from berth.engine.dra.cel_semver import go_quoted
from berth.engine.dra.cel_url_escape import (
    ALNUM,
    URLError,
    escape,
    escaped_form,
    go_quote,
    go_string,
    split_encoding,
    unescape,
)

__all__ = ["GoURL", "URLError", "go_string", "parse_request_uri", "parse_url"]

_MAX_QUERY_PARAMS = 10000


def _valid_optional_port(port: bytes) -> bool:
    return not port or (port[:1] == b":" and all(0x30 <= byte <= 0x39 for byte in port[1:]))


@dataclass(frozen=True, slots=True)
class GoURL:
    """The fields of Go's url.URL that Kubernetes' getters and equality read."""

    scheme: bytes = b""
    opaque: bytes = b""
    # Username and password (None when the text had no colon); only String() shows them.
    user: tuple[bytes, bytes | None] | None = None
    host: bytes = b""
    path: bytes = b""
    raw_path: bytes = b""
    raw_query: bytes = b""
    force_query: bool = False
    omit_host: bool = False
    fragment: bytes = b""
    raw_fragment: bytes = b""

    def escaped_path(self) -> bytes:
        escaped = escaped_form(self.path, self.raw_path, "path")
        if self.path == b"*" and escaped != self.raw_path:
            return b"*"  # Go leaves a lone "*" (a request for the server itself) as it is
        return escaped

    def _split_host(self) -> tuple[bytes, bytes]:
        host, port = self.host, b""
        colon = host.rfind(b":")
        if colon != -1 and _valid_optional_port(host[colon:]):
            host, port = host[:colon], host[colon + 1 :]
        if host.startswith(b"[") and host.endswith(b"]"):
            host = host[1:-1]
        return host, port

    def hostname(self) -> bytes:
        return self._split_host()[0]

    def port(self) -> bytes:
        return self._split_host()[1]

    def query(self) -> dict[bytes, list[bytes]]:
        """url.Query: ParseQuery's values, its errors ignored (a bad pair is skipped)."""
        values: dict[bytes, list[bytes]] = {}
        query = self.raw_query
        if query.count(b"&") + 1 > _MAX_QUERY_PARAMS:
            return values
        for pair in query.split(b"&") if query else ():
            if b";" in pair or not pair:
                continue
            key, _, value = pair.partition(b"=")
            try:
                key, value = unescape(key, "query_component"), unescape(value, "query_component")
            except URLError:
                continue
            values.setdefault(key, []).append(value)
        return values

    def string(self) -> bytes:
        """url.URL.String, which upstream's URL equality compares."""
        out = bytearray()
        if self.scheme:
            out += self.scheme + b":"
        if self.opaque:
            out += self.opaque
        else:
            if (self.scheme or self.host or self.user is not None) and not (
                self.omit_host and not self.host and self.user is None
            ):
                if self.host or self.path or self.user is not None:
                    out += b"//"
                if self.user is not None:
                    username, password = self.user
                    out += escape(username, "user_password")
                    if password is not None:
                        out += b":" + escape(password, "user_password")
                    out += b"@"
                out += escape(self.host, "host")
            path = self.escaped_path()
            if path and path[:1] != b"/" and self.host:
                out += b"/"
            if not out and b":" in path.partition(b"/")[0]:
                out += b"./"
            out += path
        if self.force_query or self.raw_query:
            out += b"?" + self.raw_query
        if self.fragment:
            out += b"#" + escaped_form(self.fragment, self.raw_fragment, "fragment")
        return bytes(out)


def _operation_error(text: bytes, error: URLError) -> URLError:
    """url.Error's text: `parse "<url>": <cause>`."""
    return URLError(f"parse {go_quote(text)}: {error}")


def parse_url(text: str) -> GoURL:
    """url.Parse: the fragment cut off first; raises `URLError` with Go's message."""
    data = text.encode()
    before, hashed, fragment = data.partition(b"#")
    try:
        url = _parse(before, via_request=False)
    except URLError as error:
        raise _operation_error(before, error) from None
    if not hashed or not fragment:
        return url
    try:
        decoded, raw = split_encoding(fragment, "fragment")
    except URLError as error:
        raise _operation_error(data, error) from None
    return replace(url, fragment=decoded, raw_fragment=raw)


def parse_request_uri(text: str) -> GoURL:
    """url.ParseRequestURI: the whole text an absolute URL or path, no fragment."""
    data = text.encode()
    try:
        return _parse(data, via_request=True)
    except URLError as error:
        raise _operation_error(data, error) from None


def _scheme(data: bytes) -> tuple[bytes, bytes]:
    for index, byte in enumerate(data):
        if byte in ALNUM and not 0x30 <= byte <= 0x39:
            continue
        if 0x30 <= byte <= 0x39 or byte in b"+-.":
            if index == 0:
                return b"", data
            continue
        if byte == ord(":"):
            if index == 0:
                raise URLError("missing protocol scheme")
            return data[:index], data[index + 1 :]
        return b"", data
    return b"", data


def _parse(data: bytes, *, via_request: bool) -> GoURL:
    if any(byte < 0x20 or byte == 0x7F for byte in data):
        raise URLError("net/url: invalid control character in URL")
    if not data and via_request:
        raise URLError("empty url")
    if data == b"*":
        return GoURL(path=b"*")
    scheme, rest = _scheme(data)
    scheme = scheme.lower()
    force_query, raw_query = False, b""
    if rest.endswith(b"?") and rest.count(b"?") == 1:
        force_query, rest = True, rest[:-1]
    else:
        rest, _, raw_query = rest.partition(b"?")
    if not rest.startswith(b"/"):
        if scheme:
            return GoURL(scheme=scheme, opaque=rest, raw_query=raw_query, force_query=force_query)
        if via_request:
            raise URLError("invalid URI for request")
        if b":" in rest.partition(b"/")[0]:
            raise URLError("first path segment in URL cannot contain colon")
    user: tuple[bytes, bytes | None] | None = None
    host, omit_host = b"", False
    if (scheme or (not via_request and not rest.startswith(b"///"))) and rest.startswith(b"//"):
        authority, slash, path = rest[2:].partition(b"/")
        rest = slash + path
        user, host = _authority(scheme, authority)
    elif scheme and rest.startswith(b"/"):
        omit_host = True
    path, raw_path = split_encoding(rest, "path")
    return GoURL(
        scheme=scheme,
        user=user,
        host=host,
        path=path,
        raw_path=raw_path,
        raw_query=raw_query,
        force_query=force_query,
        omit_host=omit_host,
    )


_USERINFO = ALNUM | frozenset(b"-._:~!$&'()*+,;=%@")


def _authority(scheme: bytes, authority: bytes) -> tuple[tuple[bytes, bytes | None] | None, bytes]:
    at = authority.rfind(b"@")
    host = _host(scheme, authority[at + 1 :])
    if at < 0:
        return None, host
    userinfo = authority[:at]
    # Go checks runes: any non-ASCII character is refused, as its bytes are here.
    if not all(byte in _USERINFO for byte in userinfo):
        raise URLError("net/url: invalid userinfo")
    username, colon, password = userinfo.partition(b":")
    username = unescape(username, "user_password")
    if not colon:
        return (username, None), host
    return (username, unescape(password, "user_password")), host


def _host(scheme: bytes, host: bytes) -> bytes:
    bracket = host.rfind(b"[")
    if bracket > 0:
        raise URLError("invalid IP-literal")
    if bracket == 0:
        return _ip_literal(host)
    first = host.find(b":")
    if first != -1:
        last = host.rfind(b":")
        # Go 1.26 (urlstrictcolons=1): http(s) hosts keep the first colon, so a second one
        # makes the port invalid; other schemes take the last colon.
        at = first if last != first and scheme in (b"http", b"https") else last
        if not _valid_optional_port(host[at:]):
            raise URLError(f"invalid port {go_quote(host[at:])} after host")
    return unescape(host, "host")


def _ip_literal(host: bytes) -> bytes:
    close = host.rfind(b"]")
    if close < 0:
        raise URLError("missing ']' in host")
    colon_port = host[close + 1 :]
    if not _valid_optional_port(colon_port):
        raise URLError(f"invalid port {go_quote(colon_port)} after host")
    colon_port = unescape(colon_port, "host")
    literal = host[1:close]
    zone = literal.find(b"%25")
    if zone >= 0:
        literal = unescape(literal[:zone], "host") + unescape(literal[zone:], "zone")
    else:
        literal = unescape(literal, "host")
    address_text = literal.decode("utf-8", "surrogateescape")
    try:
        address = parse_address(address_text)
    except AddressError as error:
        raise URLError(f"invalid host: {_requoted(address_text, str(error))}") from None
    if address.bits == 32:
        raise URLError("invalid IP-literal")
    return b"[" + literal + b"]" + colon_port


def _requoted(text: str, message: str) -> str:
    """netip's message with its quoted texts in strconv.Quote's form (they may hold any byte)."""

    def quote(part: str) -> str:
        return go_quote(part.encode("utf-8", "surrogateescape"))

    head = f"ParseAddr({go_quoted(text)}): "
    body = message.removeprefix(head)
    for start in range(len(text)):
        tail = f" (at {go_quoted(text[start:])})"
        if body.endswith(tail):
            body = body.removesuffix(tail) + f" (at {quote(text[start:])})"
            break
    return f"ParseAddr({quote(text)}): {body}"
