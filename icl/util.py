"""Small helpers for messages (plurals, quantiles, clipped text) and the 64-bit bounds of recorded integers."""

from __future__ import annotations

import math
from collections.abc import Sequence

# Integers recorded in JSON (manifests, run.json) fit 64 bits: the JSON writer (orjson) stores no more, and a seed
# or count past that failed there after the work was done. Seeds take the whole signed range.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 document``, ``2 documents``; ``words`` for irregular plurals (``1 entry``, ``2 entries``)."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def clip(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters, then how many more there were (a server's error page can be huge)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit:,} more characters)"


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile by the nearest-rank rule (a value that occurred); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def median(values: Sequence[float]) -> float:
    """The middle value (mean of the two middle ones for an even count); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


__all__ = ["INT64_MAX", "INT64_MIN", "clip", "median", "plural", "quantile"]
