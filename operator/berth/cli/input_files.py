"""Reading the YAML files a user hands to the CLI, with bounds a hostile file cannot get past.

A YAML file can ask for far more than its size suggests: an alias used a thousand times expands
a thousand-fold (the "billion laughs"), a recursive alias never ends, and a few hundred levels
of nesting exhaust Python's stack. The loader here refuses all three with a one-line message,
caps the file size, and insists on UTF-8, so that every file gives objects or an `InputError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

import yaml
from yaml.composer import Composer, ComposerError
from yaml.constructor import SafeConstructor
from yaml.error import Mark
from yaml.events import AliasEvent, Event, NodeEvent
from yaml.nodes import Node as YamlNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import Resolver
from yaml.scanner import Scanner

from berth.engine.model.parsing import brief

__all__ = [
    "MAX_ALIAS_NODES",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "InputError",
    "load_documents",
    "objects_of_kind",
    "read_objects",
]

# `kubectl get nodes -o yaml` for a 5000-node cluster is about 30 MiB.
MAX_FILE_BYTES = 64 * 1024 * 1024
# Kubernetes objects nest about 15 levels; the composer spends ~3 Python frames per level.
MAX_DEPTH = 100
# Nodes that aliases may add on top of the ones written out, per document.
MAX_ALIAS_NODES = 1_000_000


class InputError(Exception):
    """Bad input: the message is one line naming the file and, when known, the object and field."""


class _BoundedComposer(Composer):
    """PyYAML's composer, counting nesting depth and the nodes aliases expand to."""

    def __init__(self) -> None:
        super().__init__()
        self._depth = 0
        self._alias_nodes = 0
        self._composed = 0  # nodes composed so far in this document, written out or not
        self._anchor_sizes: dict[str, int] = {}

    def compose_document(self) -> YamlNode | None:
        self._alias_nodes = 0
        self._composed = 0
        self._anchor_sizes = {}
        node: YamlNode | None = super().compose_document()
        return node

    # Provided by the parser this composer is mixed with (PyYAML's or libyaml's).
    check_event: Callable[..., bool]
    peek_event: Callable[[], Event]

    def _peek(self) -> NodeEvent:
        # Where compose_node is called, the parser always has a node event next.
        return cast(NodeEvent, self.peek_event())

    def _refusal(self, problem: str) -> ComposerError:
        mark = self._peek().start_mark
        where = None if mark is None else Mark(mark.name, mark.index, mark.line, mark.column, "", 0)
        return ComposerError(None, None, problem, where)

    def compose_node(self, parent: YamlNode | None, index: int) -> YamlNode | None:
        if self.check_event(AliasEvent):
            event = self._peek()
            size = self._anchor_sizes.get(event.anchor) if event.anchor is not None else None
            if size is None and event.anchor in self.anchors:
                raise self._refusal("recursive alias")
            # An alias stands for its anchor's whole expanded subtree, here and in every
            # anchor that contains it, so nested aliases are counted at their full size.
            self._alias_nodes += size or 0
            self._composed += size or 0
            if self._alias_nodes > MAX_ALIAS_NODES:
                raise self._refusal(f"aliases expand to more than {MAX_ALIAS_NODES} nodes")
            return super().compose_node(parent, index)
        if self._depth >= MAX_DEPTH:
            raise self._refusal(f"nested deeper than {MAX_DEPTH} levels")
        anchor = self._peek().anchor
        before = self._composed
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        self._composed += 1
        if anchor is not None:
            self._anchor_sizes[anchor] = self._composed - before
        return node


class _PureLoader(_BoundedComposer, Reader, Scanner, Parser, SafeConstructor, Resolver):
    """The same in pure Python, for a PyYAML built without libyaml."""

    def __init__(self, stream: str) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        _BoundedComposer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)


_Loader: type[_PureLoader] = _PureLoader
if yaml.__with_libyaml__:
    from yaml.cyaml import CParser  # type: ignore[attr-defined]

    class _FastLoader(_BoundedComposer, CParser, SafeConstructor, Resolver):
        """libyaml scans and parses (fast, without recursion); the composer above builds nodes."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            _BoundedComposer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

    _Loader = _FastLoader  # type: ignore[assignment]


def _yaml_problem(error: yaml.YAMLError) -> str:
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        mark = error.problem_mark
        return f"line {mark.line + 1}, column {mark.column + 1}: {error.problem}"
    # Reader errors and the like: their text spans lines; keep one.
    return " ".join(str(error).split())


def _read_text(path: Path) -> str:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror or error}") from None
    if len(data) > MAX_FILE_BYTES:
        raise InputError(f"{path}: larger than the limit of {MAX_FILE_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise InputError(
            f"{path}: not UTF-8: line {line}, column {column}: byte 0x{data[error.start]:02x}"
        ) from None


def load_documents(path: Path) -> list[object]:
    """Every YAML document of `path` (empty ones as None), or `InputError`."""
    text = _read_text(path)
    documents: list[object] = []
    try:
        loader = _Loader(text)  # reads the first characters already
        try:
            while loader.check_data():  # type: ignore[no-untyped-call]
                documents.append(loader.get_data())
        finally:
            loader.dispose()
    except yaml.YAMLError as error:
        raise InputError(f"{path}: not valid YAML: {_yaml_problem(error)}") from None
    except (ValueError, OverflowError) as error:
        # PyYAML's scalar constructors raise these (e.g. an integer of 5000 digits).
        raise InputError(f"{path}: not valid YAML: {brief(str(error))}") from None
    return documents


def _objects(path: Path) -> Iterator[tuple[int, Mapping[str, Any]]]:
    position = 0
    for index, document in enumerate(load_documents(path)):
        if document is None:
            continue
        if not isinstance(document, Mapping):
            raise InputError(f"{path}: document {index + 1} is not an object")
        kind = document.get("kind", "")
        if isinstance(kind, str) and kind.endswith("List"):
            items = document.get("items") or []
            if not isinstance(items, list):
                raise InputError(f"{path}: {brief(kind)}.items must be a list")
            for item in items:
                position += 1
                if not isinstance(item, Mapping):
                    raise InputError(f"{path}: object {position} is not an object")
                yield position, item
        else:
            position += 1
            yield position, document


def read_objects(path: Path, kinds: tuple[str, ...]) -> list[Mapping[str, Any]]:
    """The objects of `path` (documents and List items), each of one of `kinds`, in file order."""
    objects = []
    for position, document in _objects(path):
        actual = document.get("kind")
        if actual not in kinds:
            expected = " or ".join(filter(None, (", ".join(kinds[:-1]), kinds[-1])))
            raise InputError(
                f"{path}: object {position}: expected kind {expected}, got {brief(actual)}"
            )
        objects.append(document)
    return objects


def objects_of_kind(path: Path, kind: str) -> list[Mapping[str, Any]]:
    return read_objects(path, (kind,))
