"""A small seeded generator (splitmix64): stable across Python versions, unlike random.Random's
choice/shuffle algorithms. Its seed comes from stable keys (``envbench.core.seeding.derive_seed``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from envbench.core.seeding import derive_seed

T = TypeVar("T")


class Rng:
    def __init__(self, *keys: object) -> None:
        self.state = derive_seed(*keys)

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        return self.next() % n

    def chance(self, p: float) -> bool:
        return self.next() / 2**64 < p

    def choice(self, seq: Sequence[T]) -> T:
        return seq[self.below(len(seq))]

    def sample(self, seq: Sequence[T], k: int) -> list[T]:
        pool = list(seq)
        out: list[T] = []
        for _ in range(min(k, len(pool))):
            out.append(pool.pop(self.below(len(pool))))
        return out

    def between(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]."""
        return lo + self.below(hi - lo + 1)
