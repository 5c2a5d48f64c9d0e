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

Links read from a file are checked against the index they are used with
(:func:`check_links_against_index`): a QID the index lacks counts as unlinked, and a file whose
links mostly miss the index is refused (it was made for another index).

:func:`link_file` is the ``envbench link`` step: documents in, a link file (and its manifest) out.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import DataError
from envbench.core.types import LINKED_TYPES
from envbench.formats.docred import Doc, distinct_names, entity_type, read_docred, require_documents
from envbench.formats.links import Links, read_link_file
from envbench.rename.fine_types import ancestors, fits_coarse, item_types, qid_number, register_rows
from wikidata_index.names import fold

LINK_THRESHOLD = 0.5
MAX_CANDIDATES = 50
PASSES = 3
# A link file with more than this share of its linked entities missing from the index is refused.
MAX_MISSING_SHARE = 0.5
INDEX_TABLES = ("entities", "names", "types", "subclasses", "edges")


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


@dataclass
class IndexCheck:
    """Links of a file checked against an index: QIDs the index lacks become unlinked (None)."""

    path: str
    links: Links
    linked: int  # linked entities in the file
    missing: int  # of them, those whose QID the index lacks (now None in ``links``)
    examples: list[str] = field(default_factory=list)  # up to 3 such QIDs

    def note(self) -> str | None:
        """The warning line when some QIDs miss the index (those entities count as unlinked)."""
        if not self.missing:
            return None
        return (f"{self.path}: {self.missing} of its {self.linked} linked entities name items that are not in "
                f"the index (e.g. {', '.join(self.examples)}); they count as unlinked")


def _qid_span(con: Any, query: str) -> tuple[int, int] | None:
    """The smallest and largest QID number among the ``id`` column of ``query``."""
    row = con.execute(
        f"""SELECT min(n), max(n) FROM (SELECT TRY_CAST(substr(id, 2) AS BIGINT) AS n FROM ({query})
            WHERE id LIKE 'Q%') WHERE n IS NOT NULL"""
    ).fetchone()
    return (int(row[0]), int(row[1])) if row and row[0] is not None else None


# The index's items that are not classes: what a link file names (classes share ids across indexes).
_INDEX_ITEMS = """SELECT id FROM entities WHERE type = 'item'
                  AND id NOT IN (SELECT class FROM types) AND id NOT IN (SELECT id FROM subclasses)
                  AND id NOT IN (SELECT superclass FROM subclasses)"""


def check_links_against_index(
    links: Links,
    con: Any,
    *,
    path: str | os.PathLike[str],
    index: str | os.PathLike[str],
    max_missing: float = MAX_MISSING_SHARE,
) -> IndexCheck:
    """Replace QIDs absent from the index's ``entities`` table by None, counting them.

    Refuses (DataError) when more than ``max_missing`` of the linked entities miss the index: the
    link file was made for another index (the sample world's links against a kb-from-corpus
    index, or the reverse), and renaming would silently keep every such entity.
    """
    qids = sorted({q for row in links.values() for q in row if q is not None})
    register_rows(con, "_lk_file_qids", ((q,) for q in qids), {"id": "VARCHAR"})
    present = {r[0] for r in con.execute(
        "SELECT q.id FROM _lk_file_qids q SEMI JOIN entities e ON e.id = q.id").fetchall()}
    absent = [q for q in qids if q not in present]
    linked = sum(q is not None for row in links.values() for q in row)
    if not absent:
        return IndexCheck(str(path), links, linked, 0)
    gone = set(absent)
    missing = sum(q in gone for row in links.values() for q in row)
    examples = sorted(absent, key=qid_number)[:3]
    if missing > max_missing * linked:
        theirs = _qid_span(con, "SELECT id FROM _lk_file_qids")
        ours = _qid_span(con, _INDEX_ITEMS)
        spans = ""
        if theirs and ours:
            spans = f" (its QIDs run Q{theirs[0]}..Q{theirs[1]}, the index's items Q{ours[0]}..Q{ours[1]})"
        raise DataError(
            f"{path}: {missing} of its {linked} linked entities ({missing / linked:.0%}) name items that are not in "
            f"the index at {index} (e.g. {examples[0]}); the link file was most likely made for another index"
            f"{spans}: pass the link file made for this index (make-sample and kb-from-corpus write one beside "
            f"each dump), or make one with `envbench link DOCS --index {index} --out LINKS.json`"
        )
    checked = {title: [None if q in gone else q for q in row] for title, row in links.items()}
    return IndexCheck(str(path), checked, linked, missing, examples)


@dataclass
class LinkRun:
    """What ``envbench link`` did (:func:`link_file`)."""

    out: Path
    report: Path | None
    result: LinkResult | None  # None when up to date
    up_to_date: bool = False
    notes: list[str] = field(default_factory=list)  # lines after the table: skipped documents, warnings
    seconds: float = 0.0

    def summary(self) -> str:
        if self.up_to_date or self.result is None:
            return (f"{self.out} is up to date (same documents, index and parameters); nothing to do. "
                    "Pass --force to link again.")
        lines = [self.result.summary(), *self.notes]
        lines.append(f"wrote {self.out}" + (f" and {self.report}" if self.report else ""))
        return "\n".join(lines)


def link_file(
    docs_path: str | os.PathLike[str],
    index_path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    gold: str | os.PathLike[str] | None = None,
    threshold: float = LINK_THRESHOLD,
    report: str | os.PathLike[str] | None = None,
    skip_invalid: bool = False,
    force: bool = False,
    progress: bool = False,
) -> LinkRun:
    """Link the entities of a DocRED-format file and write ``out`` ({title: [QID or null]}).

    ``out`` gets a manifest beside it (``OUT.manifest.json``); a rerun with the same documents,
    gold links, index and parameters writes nothing unless ``force``. ``report`` also writes the
    coverage/accuracy report as JSON. The gold links are checked against the index
    (:func:`check_links_against_index`). ``progress``: the stages on stderr (on a terminal only).
    """
    from etl.progress import Stages

    with Stages("link", 3, enabled=progress) as stage:
        return _link_file(docs_path, index_path, out, gold=gold, threshold=threshold, report=report,
                          skip_invalid=skip_invalid, force=force, stage=stage)


def _link_file(docs_path: str | os.PathLike[str], index_path: str | os.PathLike[str], out: str | os.PathLike[str], *,
               gold: str | os.PathLike[str] | None, threshold: float, report: str | os.PathLike[str] | None,
               skip_invalid: bool, force: bool, stage: Any) -> LinkRun:
    from etl.io import dumps_json
    from etl.step import Step, check_writable, manifest_beside
    from wikidata_index.index import WikidataIndex, index_fingerprint

    t0 = time.perf_counter()
    out = Path(out)
    report_path = Path(report) if report is not None else None
    # before any work, so a long run never ends in an unwritable output
    check_writable(out, "--out")
    if report_path is not None:
        check_writable(report_path, "--report")
        if report_path.resolve() == out.resolve():
            raise DataError(f"--report {report}: it is also --out; give the report another name, e.g. "
                            f"--report {out.with_suffix('')}.report.json")
        for option, inp in (("DOCS", docs_path), ("--gold", gold)):
            if inp is not None and report_path.resolve() == Path(inp).resolve():
                raise DataError(f"--report {report}: it is the input {option}, which the report would overwrite; "
                                f"give the report another name, e.g. --report {out.with_suffix('')}.report.json")
    stage("read the documents")
    docset = read_docred(docs_path, skip_invalid=skip_invalid)
    require_documents(docset)
    notes = [n for n in (docset.skip_note(),) if n]
    gold_file = read_link_file(gold, docset.docs) if gold is not None else None
    if gold_file is not None:
        if gold_file.alignment is not None:  # a Linked-DocRED file: say how well its mentions aligned
            notes.append(f"gold {gold_file.describe()}")
        notes.extend(f"warning: {w}" for w in gold_file.warnings())
    stage("open the index")
    with WikidataIndex(index_path) as ix:
        ix.require(*INDEX_TABLES)
        outputs = [out, *([report_path] if report_path is not None else [])]
        inputs = [Path(docs_path), *([Path(gold)] if gold is not None else [])]
        parameters = {"threshold": threshold, "skip_invalid": skip_invalid, "report": report_path is not None}
        identity = {"index": {"tables_sha256": index_fingerprint(Path(index_path))}}
        with Step("link", manifest=manifest_beside(out), outputs=outputs, inputs=inputs, parameters=parameters,
                  identity=identity, force=force, protected=[Path(index_path)],
                  output_options={report_path: "--report"} if report_path is not None else None) as step:
            if step.up_to_date:
                return LinkRun(out, report_path, None, up_to_date=True, seconds=time.perf_counter() - t0)
            gold_links = None
            if gold_file is not None:
                checked = check_links_against_index(gold_file.links, ix.con, path=gold_file.path, index=index_path)
                notes.extend(f"warning: {n}" for n in (checked.note(),) if n)
                gold_links = checked.links
            stage("link the entities")
            result = link_documents(docset.docs, ix.con, gold=gold_links, threshold=threshold)
            step.path(out).write_bytes(dumps_json(result.links))
            if report_path is not None:
                step.path(report_path).write_bytes(dumps_json(result.report, indent=True))
    return LinkRun(out, report_path, result, notes=notes, seconds=time.perf_counter() - t0)
