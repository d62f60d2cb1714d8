"""Label selectors (pods, namespaces) and node selectors (node affinity), with their exact matching rules."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from berth.engine.errors import FieldError
from berth.engine.model.parsing import brief

Labels = Mapping[str, str]


class Operator(StrEnum):
    IN = "In"
    NOT_IN = "NotIn"
    EXISTS = "Exists"
    DOES_NOT_EXIST = "DoesNotExist"
    GT = "Gt"
    LT = "Lt"


_SELECTOR_OPERATORS = (Operator.IN, Operator.NOT_IN, Operator.EXISTS, Operator.DOES_NOT_EXIST)


_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = re.compile(rf"{_DNS_LABEL}(\.{_DNS_LABEL})*")
_QUALIFIED_NAME_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


def qualified_name_problem(value: str) -> str | None:
    """Why `value` is not a valid label name (Kubernetes' IsQualifiedName), or None."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return "prefix part must be non-empty"
        if len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix):
            return (
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                "alphanumeric characters, '-' or '.', and must start and end with an "
                "alphanumeric character"
            )
    else:
        return (
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character with an optional DNS subdomain "
            "prefix and '/'"
        )
    if not name:
        return "name part must be non-empty"
    if len(name) > 63:
        return "name part must be no more than 63 characters"
    if not _QUALIFIED_NAME_PART.fullmatch(name):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character"
        )
    return None


_GO_DECIMAL = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_LABEL_VALUE_MAX = 63


def is_label_value(text: str) -> bool:
    """apimachinery's IsValidLabelValue: at most 63 characters, alphanumeric at both ends."""
    return len(text) <= _LABEL_VALUE_MAX and _LABEL_VALUE.fullmatch(text) is not None


def parse_go_int64(text: str) -> int | None:
    """Go's `strconv.ParseInt(text, 10, 64)`: ASCII digits with an optional sign, in int64 range."""
    if not _GO_DECIMAL.fullmatch(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: Operator
    values: frozenset[str]

    def matches(self, labels: Labels) -> bool:
        present = self.key in labels
        if self.operator is Operator.IN:
            return present and labels[self.key] in self.values
        if self.operator is Operator.NOT_IN:
            return not present or labels[self.key] not in self.values
        if self.operator is Operator.EXISTS:
            return present
        if self.operator is Operator.DOES_NOT_EXIST:
            return not present
        # Gt / Lt: integer comparison against the single value; a label that is
        # missing or not an integer never matches.
        if not present:
            return False
        have = parse_go_int64(labels[self.key])
        (bound,) = self.values
        want = parse_go_int64(bound)
        if have is None or want is None:
            return False
        return have > want if self.operator is Operator.GT else have < want


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A metav1.LabelSelector. The empty selector matches everything."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Labels) -> bool:
        return all(requirement.matches(labels) for requirement in self.requirements)

    @property
    def is_empty(self) -> bool:
        return not self.requirements

    def with_requirements(self, extra: Sequence[Requirement]) -> LabelSelector:
        return LabelSelector((*self.requirements, *extra))


# A nil selector (field absent) matches nothing, unlike the empty selector `{}`.
MATCH_NOTHING: LabelSelector | None = None


def _parse_values(raw: object, field: str) -> frozenset[str]:
    if raw is None:
        return frozenset()
    if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
        raise FieldError(field, f"expected a list of strings, got {brief(raw)}")
    return frozenset(raw)


def _parse_requirement(raw: object, field: str, allowed: Sequence[Operator]) -> Requirement:
    if not isinstance(raw, Mapping):
        raise FieldError(field, f"expected an object, got {brief(raw)}")
    key = raw.get("key")
    if not isinstance(key, str) or not key:
        raise FieldError(f"{field}.key", "must be a non-empty string")
    try:
        operator = Operator(str(raw.get("operator")))
    except ValueError:
        raise FieldError(
            f"{field}.operator", f"unsupported operator {brief(raw.get('operator'))}"
        ) from None
    if operator not in allowed:
        raise FieldError(
            f"{field}.operator", f"operator {brief(operator.value)} is not allowed here"
        )
    values = _parse_values(raw.get("values"), f"{field}.values")
    if operator in (Operator.IN, Operator.NOT_IN) and not values:
        raise FieldError(f"{field}.values", f"must be non-empty for operator {operator.value}")
    if operator in (Operator.EXISTS, Operator.DOES_NOT_EXIST) and values:
        raise FieldError(f"{field}.values", f"must be empty for operator {operator.value}")
    if operator in (Operator.GT, Operator.LT):
        if len(values) != 1:
            raise FieldError(
                f"{field}.values", f"operator {operator.value} needs exactly one value"
            )
        if parse_go_int64(next(iter(values))) is None:
            raise FieldError(f"{field}.values", f"operator {operator.value} needs an integer value")
    return Requirement(key, operator, values)


def parse_label_selector(raw: object, field: str) -> LabelSelector | None:
    """Parse a metav1.LabelSelector; None (absent) stays None, which matches nothing."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise FieldError(field, f"expected a label selector object, got {brief(raw)}")
    requirements: list[Requirement] = []
    match_labels = raw.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping):
        raise FieldError(f"{field}.matchLabels", "expected a map of strings")
    for key, value in match_labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise FieldError(
                f"{field}.matchLabels", f"entry {brief(key)}: {brief(value)} is not a string pair"
            )
        requirements.append(Requirement(key, Operator.IN, frozenset((value,))))
    expressions = raw.get("matchExpressions") or []
    if not isinstance(expressions, list):
        raise FieldError(f"{field}.matchExpressions", "expected a list")
    for index, expression in enumerate(expressions):
        requirements.append(
            _parse_requirement(
                expression, f"{field}.matchExpressions[{index}]", _SELECTOR_OPERATORS
            )
        )
    return LabelSelector(tuple(requirements))


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """A `matchFields` entry; only ``metadata.name`` with In/NotIn exists."""

    operator: Operator
    values: frozenset[str]

    def matches(self, node_name: str) -> bool:
        inside = node_name in self.values
        return inside if self.operator is Operator.IN else not inside


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    expressions: tuple[Requirement, ...]
    fields: tuple[FieldRequirement, ...]
    # A term kube-scheduler could not parse (unknown operator, bad value) never
    # matches; it is kept so the user's term count is unchanged.
    valid: bool = True

    @property
    def is_empty(self) -> bool:
        return not self.expressions and not self.fields

    def matches(self, labels: Labels, node_name: str) -> bool:
        if not self.valid or self.is_empty:
            return False
        return all(r.matches(labels) for r in self.expressions) and all(
            f.matches(node_name) for f in self.fields
        )


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """Required node affinity: terms are ORed. No usable term means no node matches."""

    terms: tuple[NodeSelectorTerm, ...]

    def matches(self, labels: Labels, node_name: str) -> bool:
        return any(term.matches(labels, node_name) for term in self.terms)


_NODE_OPERATORS = tuple(Operator)


def parse_node_selector_term(raw: object, field: str) -> NodeSelectorTerm:
    if not isinstance(raw, Mapping):
        raise FieldError(field, f"expected a node selector term, got {brief(raw)}")
    expressions_raw = raw.get("matchExpressions") or []
    fields_raw = raw.get("matchFields") or []
    if not isinstance(expressions_raw, list) or not isinstance(fields_raw, list):
        raise FieldError(field, "matchExpressions and matchFields must be lists")
    valid = True
    expressions: list[Requirement] = []
    for index, item in enumerate(expressions_raw):
        try:
            requirement = _parse_requirement(
                item, f"{field}.matchExpressions[{index}]", _NODE_OPERATORS
            )
        except FieldError:
            # kube-scheduler swallows node-selector parse errors: the term just never matches.
            valid = False
            continue
        # labels.NewRequirement also rejects a value that is no valid label value, even
        # one that parses as an integer for Gt/Lt ("+5", "-5").
        if not all(is_label_value(value) for value in requirement.values):
            valid = False
        expressions.append(requirement)
    fields: list[FieldRequirement] = []
    for index, item in enumerate(fields_raw):
        try:
            requirement = _parse_requirement(
                item, f"{field}.matchFields[{index}]", (Operator.IN, Operator.NOT_IN)
            )
        except FieldError:
            valid = False
            continue
        if requirement.key != "metadata.name" or len(requirement.values) != 1:
            valid = False
            continue
        fields.append(FieldRequirement(requirement.operator, requirement.values))
    return NodeSelectorTerm(tuple(expressions), tuple(fields), valid)


def parse_node_selector(raw: object, field: str) -> NodeSelector | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise FieldError(field, f"expected a node selector, got {brief(raw)}")
    terms_raw = raw.get("nodeSelectorTerms") or []
    if not isinstance(terms_raw, list):
        raise FieldError(f"{field}.nodeSelectorTerms", "expected a list")
    return NodeSelector(
        tuple(
            parse_node_selector_term(term, f"{field}.nodeSelectorTerms[{index}]")
            for index, term in enumerate(terms_raw)
        )
    )
