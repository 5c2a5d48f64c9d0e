"""Label-preservation audit: renaming must not break a type constraint that the original items met.

For a gold triple (h, r, t) the relation's subject-type constraints (Q21503250) are checked on
h's item and its value-type constraints (Q21510865) on t's item, using the index's
``property_constraints`` and the P279 closure. The classes of one constraint type form an
alternative (any of them satisfies it); the ``relation`` column says how: instance of (P31 value or
a superclass of one; the default when missing), subclass of (the item itself or a superclass), or
instance or subclass of (either). A candidate is rejected, and the next one drawn, when a check
that held for the original item fails for it. The report counts per relation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from envbench.formats.docred import Doc
from envbench.rename.fine_types import all_types, ancestors, register_rows, sorted_unique, with_superclasses
from wikidata_index.schema import (
    RELATION_INSTANCE_OR_SUBCLASS,
    RELATION_SUBCLASS_OF,
    SUBJECT_TYPE_CONSTRAINT,
    VALUE_TYPE_CONSTRAINT,
)

ROLES = {SUBJECT_TYPE_CONSTRAINT: "subject", VALUE_TYPE_CONSTRAINT: "value"}

# (relation pid, role) -> [(class, how)]
Constraints = dict[tuple[str, str], list[tuple[str, str]]]


def load_constraints(con: Any, properties: Iterable[str]) -> Constraints:
    props = sorted(set(properties))
    register_rows(con, "_audit_props", ((p,) for p in props), {"property": "VARCHAR"})
    out: Constraints = {}
    for pid, ctype, cls, rel in con.execute(
        """SELECT c.property, c.constraint_type, c.class, c.relation FROM property_constraints c
           SEMI JOIN _audit_props p ON c.property = p.property
           WHERE c.constraint_type IN (?, ?) AND c.class IS NOT NULL
           ORDER BY c.property, c.constraint_type, c.class, c.relation""",
        [SUBJECT_TYPE_CONSTRAINT, VALUE_TYPE_CONSTRAINT],
    ).fetchall():
        out.setdefault((pid, ROLES[ctype]), []).append((cls, rel or ""))
    return out


@dataclass
class RelationAudit:
    checks: int = 0  # (triple, end) pairs with a constraint whose original item was checked
    held_before: int = 0
    held_after: int = 0  # of those that held before, how many hold for the new items
    rejected: int = 0  # candidates drawn and rejected because of this relation

    def as_dict(self) -> dict[str, int]:
        return {"checks": self.checks, "held_before": self.held_before, "held_after": self.held_after,
                "rejected": self.rejected}


@dataclass
class Auditor:
    """Checks items against the constraints of the relations a document gives an entity."""

    con: Any
    constraints: Constraints
    types: dict[str, frozenset[str]] = field(default_factory=dict)  # equal sets are one object (interned)
    anc: dict[str, frozenset[str]] = field(default_factory=dict)
    report: dict[str, RelationAudit] = field(default_factory=dict)
    _memo: dict[tuple[str, str, str], bool | None] = field(default_factory=dict)
    _sets: dict[frozenset[str], frozenset[str]] = field(default_factory=dict)  # interning of ``types``
    # relation -> the (label end, role) pairs its constraints check (``record``); like ``_memo``, read
    # off ``constraints``, which do not change once loaded
    _ends: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)

    @classmethod
    def for_docs(cls, con: Any, docs: Iterable[Doc]) -> Auditor:
        rels = {lab["r"] for d in docs for lab in d.get("labels", []) or []}
        return cls(con, load_constraints(con, rels))

    def prepare(self, qids: Iterable[str]) -> None:
        """Load P31 values and closures for items (batched; call before ``holds``)."""
        new = [q for q in sorted_unique(qids) if q not in self.types]  # in order: the lookups below take it as it is
        if not new:
            return
        got = all_types(self.con, new)
        for q in new:  # interned, so candidates of one P31 set share an object (``by_p31_overlap``'s shortcut)
            classes = frozenset(got.get(q, ()))
            self.types[q] = self._sets.setdefault(classes, classes)
        classes = {c for q in new for c in self.types[q]}
        # An item is looked up as a class too (a relation may want a subclass of X), but most drawn
        # candidates are no class at all: only those with a P279 statement need the closure, the
        # others are their own only ancestor, as ``_satisfies`` assumes of any item left out.
        need = classes | with_superclasses(self.con, [q for q in new if q not in classes and q not in self.anc])
        self.anc.update(ancestors(self.con, need - self.anc.keys()))

    def _satisfies(self, qid: str, cls: str, how: str) -> bool:
        inst = any(cls in self.anc.get(c, frozenset({c})) for c in self.types.get(qid, ()))
        sub = cls in self.anc.get(qid, frozenset({qid}))
        if how == RELATION_SUBCLASS_OF:
            return sub
        if how == RELATION_INSTANCE_OR_SUBCLASS:
            return inst or sub
        return inst

    def holds(self, qid: str, pid: str, role: str) -> bool | None:
        """Whether the item meets the relation's constraint for the role (None: no constraint)."""
        key = (qid, pid, role)
        if key not in self._memo:
            alts = self.constraints.get((pid, role))
            self._memo[key] = any(self._satisfies(qid, c, how) for c, how in alts) if alts else None
        return self._memo[key]

    def entity_checks(self, doc: Doc, entity: int) -> list[tuple[str, str]]:
        """(relation, role) pairs the document's labels put on an entity, sorted and unique."""
        out = set()
        for lab in doc.get("labels", []) or []:
            if lab["h"] == entity and (lab["r"], "subject") in self.constraints:
                out.add((lab["r"], "subject"))
            if lab["t"] == entity and (lab["r"], "value") in self.constraints:
                out.add((lab["r"], "value"))
        return sorted(out)

    def required(self, qid: str, checks: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """The checks that the original item passes: those a replacement must pass too."""
        return [c for c in checks if self.holds(qid, *c)]

    def first_failure(self, qid: str, required: list[tuple[str, str]]) -> tuple[str, str] | None:
        for pid, role in required:
            if not self.holds(qid, pid, role):
                return pid, role
        return None

    def record(self, doc: Doc, old: Mapping[int, str], new: Mapping[int, str]) -> None:
        """Count one renamed document: per triple end, before (old items) and after (new items)."""
        # This runs for every triple of every output document (175,000 in the 1,000-document bench,
        # five seeds), three quarters of whose ends no constraint checks: each relation's checked
        # ends are looked up once (holds() is None for the others), and holds() is read from its
        # memo, which nearly always has the answer, and only called to fill it.
        memo, ends_of = self._memo, self._ends
        for lab in doc.get("labels", []) or []:
            pid = lab["r"]
            ends = ends_of.get(pid)
            if ends is None:
                ends = ends_of[pid] = tuple((end, role) for end, role in (("h", "subject"), ("t", "value"))
                                            if self.constraints.get((pid, role)))
            for end, role in ends:
                ei = lab[end]
                if ei not in new or ei not in old:
                    continue
                key = (old[ei], pid, role)
                before = memo[key] if key in memo else self.holds(*key)
                if before is None:
                    continue
                ra = self.report.get(pid)
                if ra is None:  # made once per relation, not once per check as setdefault would
                    ra = self.report[pid] = RelationAudit()
                ra.checks += 1
                if before:
                    ra.held_before += 1
                    key = (new[ei], pid, role)
                    if memo[key] if key in memo else self.holds(*key):
                        ra.held_after += 1

    def reject(self, pid: str) -> None:
        self.report.setdefault(pid, RelationAudit()).rejected += 1

    def summary(self) -> dict[str, Any]:
        per = {pid: self.report[pid].as_dict() for pid in sorted(self.report, key=lambda p: (int(p[1:]), p))}
        tot = RelationAudit()
        for ra in self.report.values():
            tot.checks += ra.checks
            tot.held_before += ra.held_before
            tot.held_after += ra.held_after
            tot.rejected += ra.rejected
        return {"total": tot.as_dict(), "preserved": tot.held_after == tot.held_before, "per_relation": per}
