"""Hypothesis strategies for the scalar values of the Kubernetes API, at their legal extremes.

Names are DNS-1123 labels or subdomains up to their maximal lengths, label keys may carry a
subdomain prefix, label values use the whole allowed charset, and quantities come in every
spelling `resource.ParseQuantity` accepts, from ``1n`` to ``8Ei``. A small shared vocabulary is
mixed in so that generated selectors sometimes match generated labels.
"""

from __future__ import annotations

from hypothesis import strategies as st

_ALNUM_LOWER = "abcdefghijklmnopqrstuvwxyz0123456789"
_ALNUM = _ALNUM_LOWER + "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# Keys and values that several objects share, so that selectors, affinities and spreads bite.
COMMON_KEYS = (
    "zone",
    "tier",
    "topology.kubernetes.io/zone",
    "kubernetes.io/hostname",
    "example.com/rack",
)
COMMON_VALUES = ("a", "b", "1", "7", "007", "12")


def _lengths(maximum: int) -> st.SearchStrategy[int]:
    """Mostly short, sometimes exactly the limit: the limit is where parsers break."""
    return st.one_of(st.integers(1, min(8, maximum)), st.just(maximum), st.integers(1, maximum))


@st.composite
def _bounded_word(
    draw: st.DrawFn, *, edge: str, middle: str, maximum: int, minimum: int = 1
) -> str:
    length = draw(_lengths(maximum).filter(lambda n: n >= minimum))
    if length == 1:
        return draw(st.sampled_from(edge))
    inner = draw(st.text(alphabet=middle, min_size=length - 2, max_size=length - 2))
    return draw(st.sampled_from(edge)) + inner + draw(st.sampled_from(edge))


def dns_labels(maximum: int = 63) -> st.SearchStrategy[str]:
    """RFC 1123 labels: lower-case alphanumerics and '-', alphanumeric at both ends."""
    return _bounded_word(edge=_ALNUM_LOWER, middle=_ALNUM_LOWER + "-", maximum=maximum)


@st.composite
def dns_subdomains(draw: st.DrawFn, maximum: int = 253) -> str:
    """RFC 1123 subdomains: dot-joined labels, at most `maximum` characters in all."""
    parts = [draw(dns_labels(min(63, maximum)))]
    while draw(st.booleans()):
        room = maximum - sum(len(p) + 1 for p in parts) - 1
        if room < 1:
            break
        parts.append(draw(dns_labels(min(63, room))))
    name = ".".join(parts)
    assert len(name) <= maximum
    return name


def qualified_name_parts() -> st.SearchStrategy[str]:
    """The name part of a label key: alphanumerics, '-', '_', '.', at most 63 characters."""
    return _bounded_word(edge=_ALNUM, middle=_ALNUM + "-_.", maximum=63)


@st.composite
def qualified_names(draw: st.DrawFn) -> str:
    """Label keys, taint keys, topology keys: ``[prefix/]name``."""
    if draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(COMMON_KEYS))
    name = draw(qualified_name_parts())
    if draw(st.booleans()):
        return f"{draw(dns_subdomains())}/{name}"
    return name


def label_values() -> st.SearchStrategy[str]:
    """Empty, or a qualified-name-like word of at most 63 characters."""
    return st.one_of(
        st.sampled_from(COMMON_VALUES),
        st.just(""),
        _bounded_word(edge=_ALNUM, middle=_ALNUM + "-_.", maximum=63),
    )


def labels(max_size: int = 4) -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(qualified_names(), label_values(), max_size=max_size)


def unicode_text(max_size: int = 64) -> st.SearchStrategy[str]:
    """Annotation values: any text, including surrogates-free astral characters and controls."""
    return st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=max_size)


_DECIMAL_SUFFIXES = ("n", "u", "m", "", "k", "M", "G", "T", "P", "E")
_BINARY_SUFFIXES = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
# Values the API server accepts and stores; beyond int64 it caps them at 2^63-1.
EXTREME_QUANTITIES = (
    "0",
    "1n",
    "1m",
    "0.001",
    ".5",
    "5.",
    "1e3",
    "1E-3",
    "+2",
    "8Ei",
    "7Ei",
    "9223372036854775807",
    "1E18",
    "999P",
)


@st.composite
def _spelled_quantities(draw: st.DrawFn) -> str:
    whole = str(draw(st.integers(0, 4096)))
    number = draw(
        st.sampled_from(
            (whole, f"{whole}.5", f"{whole}.", f".{draw(st.integers(0, 999)):03d}", f"+{whole}")
        )
    )
    form = draw(st.integers(0, 2))
    if form == 0:
        return number + draw(st.sampled_from(_DECIMAL_SUFFIXES))
    if form == 1:
        return number + draw(st.sampled_from(_BINARY_SUFFIXES))
    return f"{number}{draw(st.sampled_from('eE'))}{draw(st.integers(-9, 15))}"


def quantities() -> st.SearchStrategy[str | int]:
    """Non-negative quantities in every legal spelling, as strings or plain JSON integers."""
    return st.one_of(
        st.sampled_from(EXTREME_QUANTITIES),
        _spelled_quantities(),
        st.integers(0, 2**63 - 1),
    )


def small_quantities() -> st.SearchStrategy[str]:
    """Requests that a generated node can hold, so that some pods do get bound."""
    return st.sampled_from(("100m", "250m", "1", "2", "64Mi", "1Gi", "0", "1n", "1m"))
