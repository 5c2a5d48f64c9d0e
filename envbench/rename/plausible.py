"""CovEReD's plausibility rule: a new item must have played a role the entity plays in its document.

CovEReD (counterfactual data for document-level relation extraction) replaces an entity only with an entity
that has been the head, or the tail, of one of the relation types the replaced entity is the head, or the
tail, of: a director is replaced by someone who has directed something, a film's country by a place that has
been some film's country. Here the roles of a candidate are its item-valued statements in the index, as
subject (``subject``) and as value (``value``), for the DocRED relations (``core.relations.RELATIONS``, P31
and P279 aside): on an offline KB these are the gold triples of the corpus, on the main path Wikidata's
claims. The rule (:func:`plausible`): an entity with no relation in its document takes any candidate; one with
relations takes a candidate that has at least one of its (relation, role) pairs.

Tried and not adopted: ``generate`` applies it only where ``engine.PLAUSIBLE`` says (``"off"``, the
default; ``"prefer"``; ``"filter"``), which ``bench/plausible.py`` sets to measure it (bench/RESULTS.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from envbench.core.relations import RELATIONS
from envbench.rename.fine_types import register_rows, sorted_unique

Roles = frozenset[tuple[str, str]]  # (relation, "subject" | "value")
_NOT_ROLES = frozenset({"P31", "P279"})


def entity_roles(labels: Iterable[Mapping[str, Any]], entity: int) -> Roles:
    """The (relation, role) pairs a document's gold triples give an entity."""
    out: set[tuple[str, str]] = set()
    for lab in labels:
        if lab["r"] in _NOT_ROLES:
            continue
        if lab["h"] == entity:
            out.add((lab["r"], "subject"))
        if lab["t"] == entity:
            out.add((lab["r"], "value"))
    return frozenset(out)


def item_roles(con: Any, qids: Iterable[str]) -> dict[str, Roles]:
    """The (relation, role) pairs each item has in the index's item-valued statements (DocRED relations only)."""
    register_rows(con, "_pl_items", ((q,) for q in sorted_unique(qids)), {"id": "VARCHAR"})
    rels = sorted(set(RELATIONS) - _NOT_ROLES)
    register_rows(con, "_pl_rels", ((p,) for p in rels), {"p": "VARCHAR"})
    rows = con.execute(
        """SELECT DISTINCT e.subject, e.property, 'subject' FROM edges e
               SEMI JOIN _pl_items i ON e.subject = i.id SEMI JOIN _pl_rels r ON e.property = r.p
           UNION ALL
           SELECT DISTINCT e.object, e.property, 'value' FROM edges e
               SEMI JOIN _pl_items i ON e.object = i.id SEMI JOIN _pl_rels r ON e.property = r.p"""
    ).fetchall()
    out: dict[str, set[tuple[str, str]]] = {}
    for q, pid, role in rows:
        out.setdefault(q, set()).add((pid, role))
    return {q: frozenset(v) for q, v in out.items()}


def plausible(wanted: Roles, has: Roles) -> bool:
    """Whether a candidate with roles ``has`` may replace an entity with roles ``wanted`` (the module docstring)."""
    return not wanted or not wanted.isdisjoint(has)


__all__ = ["Roles", "entity_roles", "item_roles", "plausible"]
