"""All randomness in envbench comes from seeds derived by hashing stable keys.

Python's ``hash()`` is salted per process and set/dict order of unsorted input is not
stable, so neither may decide anything. ``random.Random`` is avoided for choices
because its algorithms are not promised to be stable across Python versions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_SEP = "\x1f"  # unit separator: cannot occur in titles, so ("a", "bc") != ("ab", "c")


def key_bytes(*keys: object) -> bytes:
    return _SEP.join(str(k) for k in keys).encode("utf-8")


def derive_seed(*keys: object) -> int:
    """A 64-bit seed from stable keys, e.g. ``derive_seed(seed, title, entity_index)``."""
    return int.from_bytes(hashlib.sha256(key_bytes(*keys)).digest()[:8], "big")


def stable_hash_hex(*keys: object) -> str:
    """Hex md5 of the keys; matches DuckDB's ``md5(concat_ws(chr(31), ...))`` so SQL and Python agree."""
    return hashlib.md5(key_bytes(*keys)).hexdigest()


def stable_shuffle(options: Sequence[T], *keys: object) -> list[T]:
    """A deterministic permutation: sort by the hash of (keys, position, item)."""
    return [o for _, o in sorted(((derive_seed(*keys, i, o), o) for i, o in enumerate(options)), key=lambda x: x[0])]


def stable_uniform(*keys: object) -> float:
    """A float in [0, 1) from the keys."""
    return derive_seed(*keys) / 2**64
