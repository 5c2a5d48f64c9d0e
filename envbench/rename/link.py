"""Offline entity linking of DocRED documents to the index (``envbench link``).

1. Candidates: items with an English label or alias equal to a mention name, exactly or after
   folding (case, diacritics, whitespace; ``wikidata_index.names.fold``), also with DocRED's token
   spaces around punctuation removed (:func:`name_variants`). NUM and TIME entities
   are never linked (they are renamed by rule).
2. Type filter: one of the item's non-deprecated P31 classes, or a P279 ancestor of one, must be a
   root class of the entity's DocRED coarse type (``fine_types.COARSE_ROOTS``; MISC takes any
   typed item). At most ``MAX_CANDIDATES`` per entity survive (exact matches, then popularity).
3. Joint disambiguation per document: a candidate's *support* is the number of the document's gold
   triples (h, r, t) on the entity for which the index has the edge with the other end's chosen
   item (first pass: with any candidate of the other end). Three passes of
   ``score = 2 * support + exact + 0.5 * ln(1 + popularity)``, each choosing the best-scoring
   candidate per entity (ties: smaller QID number).
4. Abstain: the confidence of the choice is its softmax share of ``exp(score)`` among the entity's
   candidates; at or below ``LINK_THRESHOLD`` (0.5) the entity stays unlinked, so an even split
   between two equally good items abstains. A lone candidate has confidence 1.0.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from envbench.core.types import LINKED_TYPES
from envbench.formats.docred import Doc, distinct_names, entity_type
from envbench.formats.links import Links
from envbench.rename.fine_types import ancestors, fits_coarse, item_types, qid_number, register_rows
from wikidata_index.names import fold

LINK_THRESHOLD = 0.5
MAX_CANDIDATES = 50
PASSES = 3


@dataclass
class LinkResult:
    links: Links
    report: dict[str, Any]
    confidence: dict[str, list[float | None]] = field(default_factory=dict)

    def summary(self) -> str:
        lines = ["type   linked / entities   coverage"]
        for t, c in self.report["coverage"].items():
            lines.append(f"{t:<6} {c['linked']:>6} / {c['entities']:<10} {c['coverage']:.3f}")
        acc = self.report.get("accuracy")
        if acc:
            lines.append(
                f"against gold: {acc['correct']} correct of {acc['predicted']} linked "
                f"(accuracy {acc['accuracy']:.3f}); recall {acc['recall']:.3f} of {acc['gold_linked']} gold links; "
                f"{acc['linked_where_gold_null']} linked where gold has none"
            )
        return "\n".join(lines)


_SPACE_BEFORE = re.compile(r" ([.,;:!?)\]}%]|'s\b|’s\b|n't\b)")
_SPACE_AFTER = re.compile(r"([(\[{$]) ")
_SPACE_AROUND = re.compile(r" ?([-/–]) ?")


def name_variants(name: str) -> list[str]:
    """The mention name and, when it differs, the name with DocRED's token spaces around punctuation
    removed ("Jean - Paul" -> "Jean-Paul", "St . Louis" -> "St. Louis"), so tokenised mention names
    still meet Wikidata's written labels."""
    joined = _SPACE_AROUND.sub(r"\1", _SPACE_AFTER.sub(r"\1", _SPACE_BEFORE.sub(r"\1", name)))
    return [name] if joined == name else [name, joined]


def _score(support: int, exact: bool, popularity: int) -> float:
    return 2.0 * support + (1.0 if exact else 0.0) + 0.5 * math.log1p(max(popularity, 0))


def link_documents(
    docs: Sequence[Doc], con: Any, *, gold: Links | None = None, threshold: float = LINK_THRESHOLD
) -> LinkResult:
    """Link every PER/ORG/LOC/MISC entity of ``docs`` (see the module docstring)."""
    mentions = []
    for d, doc in enumerate(docs):
        for e, entity in enumerate(doc["vertexSet"]):
            if entity_type(entity) in LINKED_TYPES:
                for name in distinct_names(entity):
                    for variant in name_variants(name):
                        mentions.append((d, e, variant, fold(variant)))
    register_rows(con, "_lk_mentions", mentions, {"d": "INTEGER", "e": "INTEGER", "name": "VARCHAR", "folded": "VARCHAR"})
    rows = con.execute(
        """SELECT m.d, m.e, n.id, max((n.name = m.name)::INT) AS exact, any_value(coalesce(x.popularity, 0)) AS pop
           FROM _lk_mentions m JOIN names n ON n.folded = m.folded AND n.lang = 'en'
           LEFT JOIN entities x ON x.id = n.id
           GROUP BY m.d, m.e, n.id"""
    ).fetchall()
    types = item_types(con, {r[2] for r in rows})
    anc = ancestors(con, {c for cs in types.values() for c in cs})
    cands: dict[tuple[int, int], list[tuple[str, bool, int]]] = defaultdict(list)
    for d, e, qid, exact, pop in rows:
        coarse = entity_type(docs[d]["vertexSet"][e])
        if fits_coarse(coarse, types.get(qid, []), anc):
            cands[(d, e)].append((qid, bool(exact), int(pop)))
    for lst in cands.values():
        lst.sort(key=lambda c: (not c[1], -c[2], qid_number(c[0])))
        del lst[MAX_CANDIDATES:]

    labels = [
        (d, lab["h"], lab["t"], lab["r"])
        for d, doc in enumerate(docs)
        for lab in doc.get("labels", []) or []
        if (d, lab["h"]) in cands and (d, lab["t"]) in cands
    ]
    flat = [(d, e, q) for (d, e), lst in cands.items() for q, _, _ in lst]
    register_rows(con, "_lk_cands", flat, {"d": "INTEGER", "e": "INTEGER", "id": "VARCHAR"})
    register_rows(con, "_lk_labels", labels, {"d": "INTEGER", "h": "INTEGER", "t": "INTEGER", "r": "VARCHAR"})
    edge_rows = con.execute(
        """SELECT DISTINCT l.d, l.h, c1.id, l.t, c2.id, l.r FROM _lk_labels l
           JOIN _lk_cands c1 ON c1.d = l.d AND c1.e = l.h
           JOIN _lk_cands c2 ON c2.d = l.d AND c2.e = l.t
           JOIN edges g ON g.subject = c1.id AND g.property = l.r AND g.object = c2.id"""
    ).fetchall()
    # (d, entity, qid) -> [(triple id, other entity, other qid)]
    support_edges: dict[tuple[int, int, str], list[tuple[tuple[int, int, str], int, str]]] = defaultdict(list)
    for d, h, hq, t, tq, r in edge_rows:
        support_edges[(d, h, hq)].append(((h, t, r), t, tq))
        support_edges[(d, t, tq)].append(((h, t, r), h, hq))

    links: Links = {}
    confidence: dict[str, list[float | None]] = {}
    for d, doc in enumerate(docs):
        n = len(doc["vertexSet"])
        choice: dict[int, str] = {}
        scores: dict[int, list[tuple[float, str]]] = {}
        for _ in range(PASSES):
            new_choice: dict[int, str] = {}
            for e in range(n):
                lst = cands.get((d, e))
                if not lst:
                    continue
                scored = []
                for q, exact, pop in lst:
                    triples = {
                        tr for tr, other, oq in support_edges.get((d, e, q), [])
                        if choice.get(other, oq) == oq
                    }
                    scored.append((_score(len(triples), exact, pop), q))
                scored.sort(key=lambda s: (-s[0], qid_number(s[1])))
                scores[e] = scored
                new_choice[e] = scored[0][1]
            if new_choice == choice:
                break
            choice = new_choice
        qids: list[str | None] = [None] * n
        conf: list[float | None] = [None] * n
        for e, scored in scores.items():
            top = scored[0][0]
            share = 1.0 / sum(math.exp(s - top) for s, _ in scored)
            conf[e] = round(share, 6)
            if share > threshold:
                qids[e] = scored[0][1]
        links[doc["title"]] = qids
        confidence[doc["title"]] = conf
    return LinkResult(links, link_report(docs, links, gold, threshold), confidence)


def link_report(
    docs: Sequence[Doc], links: Links, gold: Links | None = None, threshold: float = LINK_THRESHOLD
) -> dict[str, Any]:
    """Coverage per coarse type and, given gold links, accuracy and recall."""
    cov = {t: {"entities": 0, "linked": 0} for t in (*LINKED_TYPES, "total")}
    acc = {"gold_linked": 0, "predicted": 0, "correct": 0, "linked_where_gold_null": 0}
    for doc in docs:
        pred = links.get(doc["title"], [])
        ref = gold.get(doc["title"]) if gold else None
        for e, entity in enumerate(doc["vertexSet"]):
            t = entity_type(entity)
            if t not in LINKED_TYPES:
                continue
            p = pred[e] if e < len(pred) else None
            for key in (t, "total"):
                cov[key]["entities"] += 1
                cov[key]["linked"] += p is not None
            if ref is not None and e < len(ref):
                g = ref[e]
                acc["gold_linked"] += g is not None
                if g is not None and p is not None:
                    acc["predicted"] += 1
                    acc["correct"] += p == g
                elif g is None and p is not None:
                    acc["linked_where_gold_null"] += 1
    report: dict[str, Any] = {
        "coverage": {t: {**c, "coverage": round(c["linked"] / c["entities"], 6) if c["entities"] else 0.0}
                     for t, c in cov.items()},
        "threshold": threshold,
    }
    if gold is not None:
        acc_out: dict[str, Any] = dict(acc)
        acc_out["accuracy"] = round(acc["correct"] / acc["predicted"], 6) if acc["predicted"] else 0.0
        acc_out["recall"] = round(acc["correct"] / acc["gold_linked"], 6) if acc["gold_linked"] else 0.0
        report["accuracy"] = acc_out
    return report
