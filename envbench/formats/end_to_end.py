"""End-to-end prediction files: mentions, clusters and relations predicted from the text alone.

The given-entities format (:mod:`envbench.formats.predictions`) indexes the gold ``vertexSet``; an
end-to-end system has no gold entities to index, so its predictions carry their own. The envbench
end-to-end format is a JSON list (optionally .gz/.bz2/.zst), one object per document::

    {"title": "Loud Tour-1",
     "entities": [{"mentions": [[0, 3, 5], [2, 0, 1]], "type": "ORG"}, ...],
     "relations": [{"h": 0, "t": 1, "r": "P17", "evidence": [0, 2]}, ...]}

- ``title`` names a gold document (an Env twin is a document of its own, ``<title>-k``);
- each entity is a cluster of mention spans ``[sentence, start, end]``: 0-based sentence id, token
  positions inside that sentence, ``end`` exclusive (DocRED's ``sent_id`` and ``pos``), and a coarse
  type (PER, ORG, LOC, MISC, NUM, TIME);
- each relation points at two entities of the same object by their 0-based position in ``entities``,
  with a Wikidata property id of the 96 DocRED relations and, optionally, evidence sentence ids.

Spans are positions in the document the prediction is for: on an Env twin, the twin's own tokens,
whose positions move when a renaming changes a name's token count.

JEREX (lavis-nlp/jerex, ``jerex/evaluation/joint_evaluator.py``, ``store_predictions``) writes a JSON
list with one object per test document, in the order of the document file it read, without titles, in
one of two layouts. Both have ``mentions``, token spans counted over the whole document, end exclusive
(its ``TokenSpan.orig_span`` in ``jerex/entities.py``), ``relations`` (``{"head": i, "tail": j, "type":
R}`` over the entities, R a property id such as P17) and, since April 2021, ``tokens`` (the document's
tokens, which here must equal the gold document's: they show that the rows follow the gold file).

- the current layout (since June 2021, commit e3db02a): each mention ``{"start": s, "end": e}``, and
  ``entities`` as ``{"mentions": [mention indices], "type": T}``, one entity per cluster;
- the first layout (April 2021): each mention ``[s, e]``, ``clusters`` (lists of indices into
  ``mentions``) and ``entities`` as ``{"cluster": i, "type": T}``.

T is the key of its types file, DocRED's PER/ORG/.... :func:`from_jerex` maps either onto the envbench
format by position in the gold file.

seq2rel (JohnGiorgi/seq2rel) is not read: its output is a linearised string of mention *texts*
(``seq2rel/common/util.py``: mentions joined by ``;``, then ``@TYPE@``, relations closed by ``@REL@``),
which it scores by lower-cased string match; it has no spans, and entities appear only inside
relations, so neither mention detection nor coreference can be scored from it, and mapping a text back
to spans is ambiguous wherever a name occurs twice (see docs/pipeline.md).

Reading (:func:`load_end_to_end`) checks the file's shape and the format; :func:`check_end_to_end`
checks every document against its gold document. A problem is one line naming the file, the document
and the field; with ``skip_invalid`` the document's row is skipped instead (its gold entities and
relations then count as missed) and the skipped rows are counted and listed. Among the problems: a
mention span in two entities whose mention sets differ (MUC and B³ score a partition of the mentions,
and on overlapping clusters give recall above 1 or below 0); two entities with the same mentions are
one cluster, counted once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from envbench.core.errors import DataError
from envbench.core.relations import NAME_TO_ID, RELATIONS
from envbench.core.types import COARSE_TYPES
from envbench.formats.docred import json_type, read_json_file
from etl.io import shorten

Span = tuple[int, int, int]  # (sentence, start, end), end exclusive
Format = Literal["auto", "envbench", "jerex"]
FORMATS: tuple[str, ...] = ("auto", "envbench", "jerex")
SHAPE = '{"title", "entities": [{"mentions": [[sent, start, end], ...], "type"}], "relations": [{"h", "t", "r"}]}'
SKIP_FLAG = "--skip-invalid"


@dataclass(frozen=True)
class Entity:
    """A predicted entity: its distinct mention spans, in the order given, and its coarse type."""

    mentions: tuple[Span, ...]
    type: str


@dataclass(frozen=True)
class Relation:
    h: int
    t: int
    r: str
    evidence: frozenset[int] = frozenset()


@dataclass(frozen=True)
class DocPrediction:
    title: str
    entities: tuple[Entity, ...]
    relations: tuple[Relation, ...]


@dataclass(frozen=True)
class Skipped:
    """A row left out under --skip-invalid: its position in the file, its title, and the problem."""

    row: int
    title: str | None
    problem: str

    def __str__(self) -> str:
        return self.problem


@dataclass
class EndToEndPredictions:
    """The checked predictions of one file, by title, and what was left out."""

    source: str
    docs: dict[str, DocPrediction]
    skipped: list[Skipped] = field(default_factory=list)
    format: str = "envbench"


# --------------------------------------------------------------------------- reading
def detect_format(data: Any, source: str) -> str:
    """``envbench`` or ``jerex`` from the first row's keys; an error naming both shapes otherwise.

    A row with a title is envbench's; one without a title but with ``mentions`` (a key envbench rows
    keep inside their entities) is JEREX's, in either layout."""
    first = data[0] if isinstance(data, list) and data else None
    if isinstance(first, Mapping):
        if "title" in first:
            return "envbench"
        if "mentions" in first:
            return "jerex"
        if "entities" in first:
            return "envbench"  # refused row by row: it has no title
    raise DataError(
        f"{source}: neither the envbench end-to-end format (rows {{title, entities, relations}}) nor JEREX's "
        "predictions.json (rows {tokens, mentions, entities, relations}); see docs/pipeline.md, or pass "
        "--pred-format"
    )


def load_end_to_end(path: str | os.PathLike[str]) -> list[Any]:
    """Read a prediction file (a JSON list of rows), refusing given-entities predictions and gold files."""
    data = read_json_file(path, "end-to-end prediction JSON file")
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON list with one object per document, got {json_type(data)}; "
                        f"write [{SHAPE}, ...]")
    first = data[0] if data else None
    if isinstance(first, Mapping) and "h_idx" in first:
        raise DataError(f"{path}: holds given-entities predictions ({{title, h_idx, t_idx, r}}), which index the "
                        "gold entities; score them without --end-to-end")
    if isinstance(first, Mapping) and {"vertexSet", "sents"} & first.keys():
        raise DataError(f"{path}: holds DocRED documents (title, sents, vertexSet), not predictions; give it as "
                        "--gold, and as --pred the system's predictions")
    return data


def _sentence_starts(doc: Mapping[str, Any]) -> list[int]:
    starts, n = [], 0
    for sent in doc["sents"]:
        starts.append(n)
        n += len(sent)
    return [*starts, n]


class _Fault(Exception):
    """The first problem of a JEREX row, in JEREX's field names: (field, problem)."""


def _jerex_span(span: Any) -> tuple[Any, Any] | None:
    """(start, end) of a JEREX mention: ``{"start", "end"}`` (the current layout) or ``[start, end]`` (the first)."""
    if isinstance(span, Mapping) and span.keys() >= {"start", "end"}:
        return span["start"], span["end"]
    if isinstance(span, list) and len(span) == 2:
        return span[0], span[1]
    return None


def _jerex_mentions(row: Mapping[str, Any], starts: Sequence[int]) -> list[list[int]]:
    """The mentions of a row as envbench spans ``[sentence, start, end]`` of the gold document."""
    n = starts[-1]
    form = "[start, end]" if "clusters" in row else "{start, end}"
    out: list[list[int]] = []
    for k, span in enumerate(row["mentions"]):
        got = _jerex_span(span)
        if got is None or not all(type(x) is int for x in got) or not 0 <= got[0] < got[1] <= n:
            raise _Fault(f"mentions[{k}]", f"{shorten(repr(span), 60)} is not a {form} token span of the "
                         f"document ({n} tokens)")
        start, end = got
        sid = max(j for j in range(len(starts) - 1) if starts[j] <= start)
        if end > starts[sid + 1]:
            raise _Fault(f"mentions[{k}]", f"{[start, end]} crosses the end of sentence {sid} (document tokens "
                         f"{starts[sid]}-{starts[sid + 1] - 1})")
        out.append([sid, start - starts[sid], end - starts[sid]])
    return out


def _jerex_indices(indices: Any, where: str, mentions: Sequence[Any]) -> list[Any]:
    """The mentions that a list of mention indices names."""
    if not isinstance(indices, list):
        raise _Fault(where, f"is {json_type(indices)}, not a list of mention indices")
    for mi in indices:
        if type(mi) is not int or not 0 <= mi < len(mentions):
            have = f"0-{len(mentions) - 1}" if mentions else "none"
            raise _Fault(where, f"holds {shorten(repr(mi), 40)}, not a mention index ({have})")
    return [mentions[mi] for mi in indices]


def _jerex_entities(row: Mapping[str, Any], mentions: Sequence[Any]) -> list[dict[str, Any]]:
    """The entities of a row, each ``{mentions: spans, type}``, in either layout."""
    out: list[dict[str, Any]] = []
    clusters = row.get("clusters")
    for ei, ent in enumerate(row["entities"]):
        if not isinstance(ent, Mapping):
            raise _Fault(f"entities[{ei}]", f"is {json_type(ent)}, not an object")
        if clusters is None:  # the current layout: the entity lists its mentions
            spans = _jerex_indices(ent.get("mentions"), f"entities[{ei}].mentions", mentions)
        else:  # the first layout: the entity names a cluster
            ci = ent.get("cluster")
            if type(ci) is not int or not 0 <= ci < len(clusters):
                raise _Fault(f"entities[{ei}].cluster", f"{shorten(repr(ci), 40)} is not a cluster index "
                             f"(0-{len(clusters) - 1})")
            spans = _jerex_indices(clusters[ci], f"clusters[{ci}]", mentions)
        out.append({"mentions": spans, "type": ent.get("type")})
    return out


def _jerex_relations(row: Mapping[str, Any], n_entities: int) -> list[dict[str, Any]]:
    """The relations of a row as envbench's ``{h, t, r}``."""
    rels = row.get("relations", [])
    if not isinstance(rels, list):
        raise _Fault("relations", f"is {json_type(rels)}, not a list of relations {{head, tail, type}}")
    out: list[dict[str, Any]] = []
    for ri, rel in enumerate(rels):
        if not isinstance(rel, Mapping):
            raise _Fault(f"relations[{ri}]", f"is {json_type(rel)}, not an object {{head, tail, type}}")
        for end in ("head", "tail"):
            v = rel.get(end)
            if type(v) is not int or not 0 <= v < n_entities:
                have = f"0-{n_entities - 1}" if n_entities else "none"
                raise _Fault(f"relations[{ri}].{end}", f"{shorten(repr(v), 40)} is not an entity of this document "
                             f"(entities: {have})")
        r = rel.get("type")
        if not isinstance(r, str) or r not in RELATIONS:
            raise _Fault(f"relations[{ri}].type", f"{shorten(repr(r), 40)} is not one of the 96 DocRED relations; "
                         "JEREX writes the keys of its types file, property ids such as 'P17'")
        out.append({"h": rel["head"], "t": rel["tail"], "r": r})
    return out


def _jerex_row(row: Any, doc: Mapping[str, Any]) -> dict[str, Any]:
    """One JEREX row as an envbench row of ``doc``; raises ``_Fault`` at its first problem."""
    layout = ("mentions", "clusters", "entities") if isinstance(row, Mapping) and "clusters" in row \
        else ("mentions", "entities")
    if not isinstance(row, Mapping) or not all(isinstance(row.get(k), list) for k in layout):
        raise _Fault("row", f"is not an object with the lists {', '.join(layout[:-1])} and {layout[-1]}")
    tokens = row.get("tokens")
    gold_tokens = [tok for sent in doc["sents"] for tok in sent]
    if tokens is not None and tokens != gold_tokens:
        k = next((i for i, (a, b) in enumerate(zip(tokens, gold_tokens)) if a != b),
                 min(len(tokens), len(gold_tokens))) if isinstance(tokens, list) else None
        what = ("is not a list of tokens" if k is None else
                f"differ from the gold document's at token {k} "
                f"({shorten(repr(tokens[k]), 30) if k < len(tokens) else 'none'} here, "
                f"{shorten(repr(gold_tokens[k]), 30) if k < len(gold_tokens) else 'none'} in the gold)")
        raise _Fault("tokens", f"{what}; JEREX writes one row per document of the file it read, in order, so "
                     "pass as --gold that very file")
    mentions = _jerex_mentions(row, _sentence_starts(doc))
    entities = _jerex_entities(row, mentions)
    return {"title": doc["title"], "entities": entities, "relations": _jerex_relations(row, len(entities))}


def from_jerex(rows: Sequence[Any], gold_docs: Sequence[Mapping[str, Any]], source: str) -> list[Any]:
    """JEREX's predictions.json (either layout) as envbench rows, row i for gold document i (JEREX writes
    no titles).

    Document-level spans become (sentence, start, end) of the gold document of that position. The first
    problem of a row (tokens that are not the gold document's, a span that crosses a sentence end or
    leaves the document, an index that points nowhere, relations that are no list) is kept with it, in
    JEREX's field names, so that :func:`check_end_to_end` reports (or skips) it with the rest.
    """
    if len(rows) != len(gold_docs):
        raise DataError(
            f"{source}: JEREX predictions hold {len(rows)} documents and the gold file {len(gold_docs)}; JEREX "
            "writes one row per document of the file it read, in order, so pass as --gold that very file"
        )
    out: list[Any] = []
    for row, doc in zip(rows, gold_docs):
        try:
            out.append(_jerex_row(row, doc))
        except _Fault as fault:
            out.append({"title": doc["title"], "_jerex_problem": fault.args})
    return out


# --------------------------------------------------------------------------- checking
def shared_mention(clusters: Sequence[Sequence[Span]]) -> tuple[Span, int, int] | None:
    """The first mention span that two clusters with different mention sets both hold, as (span, the
    earlier cluster's index, the later one's); None when the clusters partition their mentions (two
    clusters with the same mentions are one cluster, as the scorers count them)."""
    sets = [frozenset(c) for c in clusters]
    owner: dict[Span, int] = {}
    for i, cluster in enumerate(clusters):
        for span in cluster:
            j = owner.setdefault(span, i)
            if sets[j] != sets[i]:
                return span, j, i
    return None


def _span_problem(span: Any, sents: Sequence[Sequence[str]]) -> str | None:
    if not (isinstance(span, list) and len(span) == 3 and all(type(x) is int for x in span)):
        return f"{span!r} is not [sentence, start, end]"
    sid, start, end = span
    if not 0 <= sid < len(sents):
        return f"{span} names sentence {sid}, but the document has {len(sents)} (0-{len(sents) - 1})"
    n = len(sents[sid])
    if not 0 <= start < end <= n:
        return f"{span} is outside sentence {sid} ({n} tokens: 0 <= start < end <= {n})"
    return None


def _doc_problem(row: Mapping[str, Any], doc: Mapping[str, Any]) -> tuple[str, str] | DocPrediction:
    """The (field, problem) of the first fault of a row, or its checked prediction."""
    if "_jerex_problem" in row:
        return row["_jerex_problem"]
    ents, rels = row.get("entities"), row.get("relations", [])
    if not isinstance(ents, list):
        return "entities", f"is {json_type(ents)}, not a list of entities"
    if not isinstance(rels, list):
        return "relations", f"is {json_type(rels)}, not a list of relations"
    sents = doc["sents"]
    entities: list[Entity] = []
    for ei, ent in enumerate(ents):
        where = f"entities[{ei}]"
        if not isinstance(ent, Mapping):
            return where, f"is {json_type(ent)}, not an object {{mentions, type}}"
        mentions = ent.get("mentions")
        if not isinstance(mentions, list) or not mentions:
            return f"{where}.mentions", "is empty; an entity needs at least one mention span"
        spans: dict[Span, None] = {}
        for mi, span in enumerate(mentions):
            bad = _span_problem(span, sents)
            if bad is not None:
                return f"{where}.mentions[{mi}]", bad
            spans.setdefault((span[0], span[1], span[2]), None)
        ty = ent.get("type")
        if not isinstance(ty, str) or ty not in COARSE_TYPES:
            return f"{where}.type", f"{shorten(repr(ty), 40)} is not one of {', '.join(COARSE_TYPES)}"
        entities.append(Entity(tuple(spans), ty))
    shared = shared_mention([e.mentions for e in entities])
    if shared is not None:
        span, first, ei = shared
        mi = next(k for k, m in enumerate(ents[ei]["mentions"]) if tuple(m) == span)
        return (f"entities[{ei}].mentions[{mi}]", f"{list(span)} is also a mention of entities[{first}], whose "
                "mentions differ; a mention belongs to one entity (MUC and B³ score a partition of the mentions): "
                "merge the two entities, or keep the mention in one")
    relations: list[Relation] = []
    for ri, rel in enumerate(rels):
        where = f"relations[{ri}]"
        if not isinstance(rel, Mapping):
            return where, f"is {json_type(rel)}, not an object {{h, t, r}}"
        for end in ("h", "t"):
            v = rel.get(end)
            if type(v) is not int or not 0 <= v < len(entities):
                have = f"0-{len(entities) - 1}" if entities else "none"
                return f"{where}.{end}", f"{v!r} is not an entity of this document (entities: {have})"
        r = rel.get("r")
        if not isinstance(r, str) or r not in RELATIONS:  # a list or an object is no id (nor hashable)
            hint = ""
            if isinstance(r, str) and r.strip().casefold() in NAME_TO_ID:
                hint = f" (did you mean {NAME_TO_ID[r.strip().casefold()]!r}?)"
            return (f"{where}.r", f"{shorten(repr(r), 40)} is not one of the 96 DocRED relations{hint}; use a "
                    "property id such as 'P17'")
        ev = rel.get("evidence")
        if ev is not None and not (isinstance(ev, list) and all(type(e) is int for e in ev)):
            return f"{where}.evidence", f"{ev!r} is not a list of sentence ids"
        relations.append(Relation(rel["h"], rel["t"], r, frozenset(ev or ())))
    return DocPrediction(doc["title"], tuple(entities), tuple(relations))


def check_end_to_end(
    rows: Sequence[Any],
    gold_docs: Sequence[Mapping[str, Any]],
    *,
    source: str = "predictions",
    pred_format: str = "auto",
    skip_invalid: bool = False,
) -> EndToEndPredictions:
    """Check every row against its gold document (spans against that document's own sentences).

    Raises DataError on the first problem, naming the document and the field, unless ``skip_invalid``,
    which skips the row and records it. A title that occurs twice, or names no gold document, is a
    problem of that row.
    """
    fmt = detect_format(rows, source) if pred_format == "auto" and rows else pred_format
    if fmt == "auto":
        fmt = "envbench"
    if fmt == "jerex":
        rows = from_jerex(rows, gold_docs, source)
    elif fmt != "envbench":
        raise DataError(f"--pred-format {fmt!r}: use one of {', '.join(FORMATS)}")
    by_title = {d["title"]: d for d in gold_docs}
    docs: dict[str, DocPrediction] = {}
    skipped: list[Skipped] = []
    hint = f"; or pass {SKIP_FLAG} to skip such rows" if not skip_invalid else ""
    for i, row in enumerate(rows):
        title = row.get("title") if isinstance(row, Mapping) else None
        if not isinstance(row, Mapping) or not isinstance(title, str):
            problem = (f"{source}: row {i}: has no string title; each row is {SHAPE}" if isinstance(row, Mapping)
                       else f"{source}: row {i}: is {json_type(row)}, not an object {SHAPE}")
        elif title not in by_title:
            problem = (f"{source}: document {title!r} (row {i}): title is not a document of the gold file; "
                       "check that the predictions were made for this --gold")
        elif title in docs:
            problem = f"{source}: document {title!r} (row {i}): title repeats an earlier row; give each document once"
        else:
            got = _doc_problem(row, by_title[title])
            if isinstance(got, DocPrediction):
                docs[title] = got
                continue
            where, what = got
            problem = f"{source}: document {title!r} (row {i}): {where} {what}"
        if not skip_invalid:
            raise DataError(problem + hint)
        skipped.append(Skipped(i, title if isinstance(title, str) else None, problem))
    return EndToEndPredictions(source, docs, skipped, fmt)


def write_rows(docs: Sequence[DocPrediction]) -> list[dict[str, Any]]:
    """Rows of the envbench end-to-end format (what :func:`check_end_to_end` reads back)."""
    out = []
    for d in docs:
        ents = [{"mentions": [list(s) for s in e.mentions], "type": e.type} for e in d.entities]
        rels = [{"h": r.h, "t": r.t, "r": r.r, **({"evidence": sorted(r.evidence)} if r.evidence else {})}
                for r in d.relations]
        out.append({"title": d.title, "entities": ents, "relations": rels})
    return out


__all__ = ["FORMATS", "DocPrediction", "EndToEndPredictions", "Entity", "Relation", "Skipped", "Span",
           "check_end_to_end", "detect_format", "from_jerex", "load_end_to_end", "shared_mention", "write_rows"]
