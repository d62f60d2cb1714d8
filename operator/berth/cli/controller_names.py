"""Deterministic stand-ins for the names and UIDs the control plane makes up at random.

Controllers create pods with `metadata.generateName` and the API server appends five random
characters; UIDs are random too; and the `pod-template-hash` / `controller-revision-hash` labels
hash Go structs in a form Python cannot reproduce. A simulation must give the same answer every
run and keep every name and UID unique, so this module derives each of them from the workload:

- hashes are FNV-1a (32 bits) of the template as canonical JSON, written with the alphabet the
  API machinery uses for such hashes (`rand.SafeEncodeString`): the same shape as upstream's, not
  the same value;
- a generated name is the prefix (cut to 58 characters, as the API server cuts it) plus five
  characters of that alphabet. The suffix of the i-th pod is a bijection of i (an affine map
  modulo 27^5), so the pods of one owner never collide while looking as scattered as real ones;
- a UID is a UUIDv5 of the object's identity, unique per kind, namespace and name.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

__all__ = ["generated_name", "object_uid", "template_hash"]

# k8s.io/apimachinery/pkg/util/rand: no vowels and no digits that read as letters.
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_SUFFIX_LENGTH = 5
_SUFFIXES = len(_ALPHABET) ** _SUFFIX_LENGTH
# Not a multiple of 3 (27^5 = 3^15), so i -> (start + i * step) mod 27^5 is one-to-one.
_STEP = 8_867_624  # about 27^5 times the golden ratio: neighbours land far apart
# The API server keeps 63 - 5 characters of a generateName (names.MaxGeneratedNameLength).
MAX_GENERATED_PREFIX = 58

# Fixed, so that a UID is the same in every run (any constant UUID would do).
_UID_NAMESPACE = uuid.UUID("5f1d3b8e-6c2a-4d7e-9a41-0bee70000000")


def _fnv1a_32(data: bytes) -> int:
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def _safe_encode(text: str) -> str:
    return "".join(_ALPHABET[ord(character) % len(_ALPHABET)] for character in text)


def template_hash(template: Mapping[str, Any]) -> str:
    """The stand-in for `pod-template-hash` and revision hashes: stable for one template."""
    canonical = json.dumps(template, sort_keys=True, separators=(",", ":"), default=str)
    return _safe_encode(str(_fnv1a_32(canonical.encode())))


def generated_name(prefix: str, index: int) -> str:
    """The name the API server would give the `index`-th object created with `generateName: prefix`."""
    value = (_fnv1a_32(prefix.encode()) + index * _STEP) % _SUFFIXES
    suffix = []
    for _ in range(_SUFFIX_LENGTH):
        value, digit = divmod(value, len(_ALPHABET))
        suffix.append(_ALPHABET[digit])
    return prefix[:MAX_GENERATED_PREFIX] + "".join(suffix)


def object_uid(kind: str, namespace: str, name: str) -> str:
    """A UID for an object read or made without one; the same identity gives the same UID."""
    return str(uuid.uuid5(_UID_NAMESPACE, f"{kind}/{namespace}/{name}"))
