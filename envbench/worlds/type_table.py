"""The subject-type / value-type class table of the 96 DocRED relations (envbench/data/relation_types.json).

Used two ways: ``kb-from-corpus`` infers an entity's fine class (P31) from the roles it plays in
gold relations, and both world generators write the table as P2302 type constraints on property
entities, so an index built from their dumps has real-looking ``property_constraints``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from envbench.core.relations import RELATIONS


@dataclass(frozen=True)
class ClassInfo:
    qid: str
    label: str
    coarse: str  # the DocRED type its instances usually get
    coarse_all: tuple[str, ...]  # every DocRED type its instances get (usual first)
    parent: str | None  # one P279 superclass (a simplified chain)


@dataclass(frozen=True)
class TypeTable:
    classes: Mapping[str, ClassInfo]
    subject: Mapping[str, tuple[str, ...]]  # relation -> subject classes, most useful first
    value: Mapping[str, tuple[str, ...]]  # relation -> value classes, most useful first
    coarse_fallback: Mapping[str, str]  # coarse type -> the class used when nothing finer is known
    value_kinds: Mapping[str, str]  # relation -> "time" | "quantity" (absent: item-valued)
    sources: tuple[str, ...]

    def ancestors(self, qid: str, extra_parents: Mapping[str, str | None] | None = None) -> list[str]:
        """The class and its P279 chain up to the root, nearest first.

        ``extra_parents`` gives parents of classes the table does not know (e.g. from an index).
        """
        out: list[str] = []
        cur: str | None = qid
        while cur is not None and cur not in out:
            out.append(cur)
            info = self.classes.get(cur)
            cur = info.parent if info else (extra_parents or {}).get(cur)
        return out

    def coarse_of(self, qid: str) -> str | None:
        info = self.classes.get(qid)
        return info.coarse if info else None

    def fits(self, qid: str, coarse: str, extra: Mapping[str, str] | None = None) -> bool:
        """Whether instances of class ``qid`` can carry the DocRED type ``coarse``."""
        info = self.classes.get(qid)
        if info is not None:
            return coarse in info.coarse_all
        return (extra or {}).get(qid) == coarse

    def role_classes(self, pid: str, role: str) -> tuple[str, ...]:
        """Classes the table gives for ``role`` ("subject" or "value") of relation ``pid``."""
        table = self.subject if role == "subject" else self.value
        return table.get(pid, ())

    def datatype(self, pid: str) -> str:
        kind = self.value_kinds.get(pid)
        return {"time": "time", "quantity": "quantity"}.get(kind or "", "wikibase-item")

    def is_fallback(self, qid: str) -> bool:
        return qid in set(self.coarse_fallback.values())

    def infer(
        self,
        roles: Iterable[tuple[str, str]],
        coarse: str,
        overrides: Mapping[tuple[str, str], tuple[str, ...]] | None = None,
        coarse_of: Mapping[str, str] | None = None,
        extra_parents: Mapping[str, str | None] | None = None,
    ) -> str:
        """The fine class of an entity of coarse type ``coarse`` from its (relation, role) pairs.

        Each role votes for the first class in its list whose coarse type matches; a vote for a
        class also supports its subclasses, so "tail of P131" (administrative territorial entity)
        and "tail of P19" (city) agree on city only when the chain links them. The class with most
        support wins; ties go to the deeper (more specific) class, then to the smaller QID.
        ``overrides`` replaces the table's classes for a (relation, role), e.g. from an index's
        constraints; ``coarse_of`` and ``extra_parents`` give coarse types and P279 parents of
        classes the table does not know.
        Returns the coarse fallback class when no role helps.
        """
        votes: dict[str, int] = {}
        for pid, role in roles:
            classes = (overrides or {}).get((pid, role)) or self.role_classes(pid, role)
            for c in classes:
                if self.fits(c, coarse, coarse_of):
                    votes[c] = votes.get(c, 0) + 1
                    break
        if not votes:
            return self.coarse_fallback.get(coarse, self.coarse_fallback["MISC"])

        def chain(c: str) -> list[str]:
            return self.ancestors(c, extra_parents)

        def support(c: str) -> int:
            return sum(votes.get(a, 0) for a in chain(c))

        best = max(votes, key=lambda c: (support(c), len(chain(c)), -int(c[1:])))
        return best


@functools.lru_cache(maxsize=1)
def load_type_table() -> TypeTable:
    """The bundled table (read once)."""
    raw: dict[str, Any] = json.loads(resources.files("envbench").joinpath("data/relation_types.json").read_text("utf-8"))
    classes = {}
    for q, v in raw["classes"].items():
        kinds = (v["coarse"],) if isinstance(v["coarse"], str) else tuple(v["coarse"])
        classes[q] = ClassInfo(q, v["label"], kinds[0], kinds, v.get("parent"))
    rels = raw["relations"]
    missing = set(RELATIONS) - set(rels)
    if missing:  # pragma: no cover - guarded by a test
        raise ValueError(f"relation_types.json lacks {sorted(missing)}")
    return TypeTable(
        classes=classes,
        subject={p: tuple(v["subject"]) for p, v in rels.items()},
        value={p: tuple(v["value"]) for p, v in rels.items()},
        coarse_fallback=dict(raw["coarse_fallback"]),
        value_kinds=dict(raw["value_kinds"]),
        sources=tuple(raw["sources"]),
    )
