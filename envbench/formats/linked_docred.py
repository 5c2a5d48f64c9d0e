"""The Linked-DocRED format (Genest et al., SIGIR 2023): DocRED with entity linking.

Differences from DocRED, as the dataset's README documents them: ``vertexSet`` becomes ``entities``,
each ``{"id", "type", "mentions": [{"name", "sent_id", "pos"}], "entity_linking": {...}}`` (mentions lose
their ``type``); ``labels`` becomes ``relations``. ``entity_linking`` has ``wikipedia_resource`` (a
Wikipedia title, ``#ignored#`` for NUM/TIME, ``#DocRED-<n>#`` when the entity has no page),
``wikipedia_not_resource``, ``wikidata_resource`` (a QID or null), ``method`` and ``confidence``.
Entities linked to the same resource are merged (mentions appended to the first, relations
re-pointed, self-relations dropped) and the rest re-indexed, so entity indices differ from DocRED's.

This module was written from that description; no Linked-DocRED code is used.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from envbench.core.errors import DataError
from envbench.formats.docred import (
    Doc,
    DocSet,
    entity_type,
    from_linked_docred,
    is_linked_docred,
    looks_like_predictions,
    predictions_given_as_documents,
    read_docs,
    validate_documents,
)
from etl.io import InputError, read_json, write_json_atomic

IGNORED = "#ignored#"
_SKIP_HINT = "; or pass --skip-invalid to skip invalid documents"
_QID = re.compile(r"Q[1-9][0-9]*")
_CONFIDENCE_ORDER = {"A": 0, "B": 1, "C": 2}


def read_json_file(path: str | os.PathLike[str], what: str) -> Any:
    """``etl.io.read_json`` raising DataError, so callers catch one error type."""
    try:
        return read_json(path, what=what)
    except InputError as exc:
        raise DataError(str(exc)) from None


def read_documents(
    path: str | os.PathLike[str], *, skip_invalid: bool = False, skip_flag: str | None = "--skip-invalid"
) -> DocSet:
    """``envbench.formats.docred.read_docs`` for commands: a prediction file given as documents is named as
    such, a corrupt compressed file too, and the skip hint names the command's own option
    (``skip_flag``; None: the command has none).
    """
    try:
        return read_docs(path, skip_invalid=skip_invalid)
    except DataError as exc:
        message = str(exc)
        if not message.endswith(_SKIP_HINT):  # not a validation error (a missing or unreadable file)
            raise
        if skip_flag == "--skip-invalid":
            raise
        hint = f"; or pass {skip_flag} to skip invalid documents" if skip_flag else ""
        raise DataError(message[: -len(_SKIP_HINT)] + hint) from None


def _qid_of(resource: Any) -> str | None:
    """A QID from ``wikidata_resource``, which may be a bare id or a wikidata.org URL."""
    if not isinstance(resource, str):
        return None
    m = _QID.search(resource.rsplit("/", 1)[-1])
    return m.group(0) if m else None


def to_linked_docred(
    docs: Sequence[Doc],
    links: Mapping[str, Sequence[str | None]],
    titles: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Convert DocRED documents plus a linking ``{title: [QID or None]}`` to Linked-DocRED documents.

    ``titles`` maps a QID to its English Wikipedia title; without one the QID itself is used as
    the resource. Unlinked PER/ORG/LOC/MISC entities get ``#DocRED-<n>#``, counted over the file.
    """
    out: list[dict[str, Any]] = []
    new_id = 0
    for doc in docs:
        title = doc["title"]
        qids = list(links.get(title, []))
        entities: list[dict[str, Any]] = []
        for i, ent in enumerate(doc["vertexSet"]):
            etype = entity_type(ent)
            qid = qids[i] if i < len(qids) else None
            if etype in ("NUM", "TIME"):
                linking = {"wikipedia_resource": IGNORED, "wikipedia_not_resource": None, "wikidata_resource": None,
                           "method": "num/time", "confidence": "A"}
            elif qid is None:
                new_id += 1
                linking = {"wikipedia_resource": f"#DocRED-{new_id}#", "wikipedia_not_resource": [],
                           "wikidata_resource": None, "method": "manual", "confidence": "C"}
            else:
                page = (titles or {}).get(qid, qid).replace(" ", "_")
                linking = {"wikipedia_resource": page, "wikipedia_not_resource": None, "wikidata_resource": qid,
                           "method": "hyperlinks-alignment", "confidence": "A"}
            entities.append({
                "type": etype,
                "entity_linking": linking,
                "mentions": [{"name": m["name"], "sent_id": m["sent_id"], "pos": list(m["pos"])} for m in ent],
            })
        relations = [{"r": lab["r"], "h": lab["h"], "t": lab["t"], "evidence": list(lab.get("evidence", []))}
                     for lab in doc.get("labels", [])]
        # Merge entities that share a resource into the first of them.
        for i, ent in enumerate(entities):
            res = ent["entity_linking"]["wikipedia_resource"]
            if res == IGNORED or not ent["mentions"]:
                continue
            for j in range(i + 1, len(entities)):
                other = entities[j]
                if other["entity_linking"]["wikipedia_resource"] != res:
                    continue
                ent["mentions"].extend(other["mentions"])
                other["mentions"] = []
                if _CONFIDENCE_ORDER[other["entity_linking"]["confidence"]] < _CONFIDENCE_ORDER[ent["entity_linking"]["confidence"]]:
                    ent["entity_linking"] = other["entity_linking"]
                for rel in relations:
                    rel["h"] = i if rel["h"] == j else rel["h"]
                    rel["t"] = i if rel["t"] == j else rel["t"]
        kept = [i for i, e in enumerate(entities) if e["mentions"]]
        new_index = {old: new for new, old in enumerate(kept)}
        final = []
        for old in kept:
            e = entities[old]
            final.append({"id": new_index[old], "type": e["type"], "entity_linking": e["entity_linking"], "mentions": e["mentions"]})
        rels = [{**r, "h": new_index[r["h"]], "t": new_index[r["t"]]} for r in relations if r["h"] != r["t"]]
        out.append({
            "title": title,
            "sents": doc["sents"],
            "entities": final,
            "relations": rels,
            "text": " ".join(" ".join(s) for s in doc["sents"]),
        })
    return out


def write_linked_docred(
    path: str | os.PathLike[str],
    docs: Sequence[Doc],
    links: Mapping[str, Sequence[str | None]],
    world_labels: Mapping[str, str] | None = None,
) -> int:
    """Write ``docs`` in the Linked-DocRED format; returns the number of documents."""
    converted = to_linked_docred(docs, links, world_labels)
    write_json_atomic(path, converted)
    return len(converted)


def read_linked_docred(path: str | os.PathLike[str], *, skip_invalid: bool = False) -> list[dict[str, Any]]:
    """Read a Linked-DocRED file: [{"title", "entities": [{"qid", "type", "mentions"}], "sents", "relations"}].

    ``qid`` is None for ``#ignored#`` (NUM/TIME), ``#DocRED-<n>#`` and missing links. The documents
    are validated like DocRED ones (positions, names, relation ids, evidence).
    """
    data = read_json_file(path, "Linked-DocRED JSON file")
    if looks_like_predictions(data):
        raise DataError(f"{path}: holds predictions (a list of {{title, h_idx, t_idx, r}}), not a Linked-DocRED "
                        "file; pass a Linked-DocRED or Linked-Re-DocRED file (documents with 'entities')")
    if not isinstance(data, list) or (data and not is_linked_docred(data[0])):
        raise DataError(f"{path}: not a Linked-DocRED file (expected a list of documents with 'entities', each "
                        "with 'entity_linking'); pass a Linked-DocRED or Linked-Re-DocRED file")
    checked = validate_documents([from_linked_docred(d) for d in data], str(path), skip_invalid=skip_invalid)
    ok_titles = {d["title"] for d in checked.docs}
    out = []
    for doc in data:
        if doc.get("title") not in ok_titles:
            continue
        ents = []
        for ent in doc["entities"]:
            linking = ent.get("entity_linking") or {}
            resource = linking.get("wikipedia_resource")
            qid = None if isinstance(resource, str) and resource.startswith("#") else _qid_of(linking.get("wikidata_resource"))
            ents.append({
                "qid": qid,
                "type": ent.get("type"),
                "mentions": [{"sent_id": m["sent_id"], "pos": list(m["pos"]), "name": m["name"]} for m in ent["mentions"]],
            })
        out.append({"title": doc["title"], "entities": ents, "sents": doc["sents"], "relations": doc.get("relations", [])})
    return out


def links_from_linked_docred(linked: Sequence[dict[str, Any]], docs: Sequence[Doc]) -> dict[str, list[str | None]]:
    """Project Linked-DocRED links onto DocRED entity indices by mention positions.

    A DocRED entity takes the QID of the Linked-DocRED entity holding its first mention
    (Linked-DocRED merges and re-indexes entities, so indices cannot be used directly).
    """
    by_title = {d["title"]: d for d in linked}
    out: dict[str, list[str | None]] = {}
    for doc in docs:
        ld = by_title.get(doc["title"])
        where: dict[tuple[int, int, int], str | None] = {}
        if ld:
            for ent in ld["entities"]:
                for m in ent["mentions"]:
                    where[(m["sent_id"], m["pos"][0], m["pos"][1])] = ent["qid"]
        row: list[str | None] = []
        for ent in doc["vertexSet"]:
            m = ent[0]
            row.append(where.get((m["sent_id"], m["pos"][0], m["pos"][1])))
        out[doc["title"]] = row
    return out


@dataclass
class ValidationReport:
    """What ``validate_file`` found in one file."""

    path: str
    format: str  # "DocRED" | "Linked-DocRED"
    total: int
    docset: DocSet

    def summary(self) -> str:
        d = self.docset
        return (f"{self.path}: {self.format}, {self.total} documents, {len(d.docs)} valid, "
                f"{len(d.skipped)} skipped, {len(d.warnings)} warnings")

    def to_dict(self, show: int = 10) -> dict[str, Any]:
        d = self.docset
        return {
            "file": self.path,
            "format": self.format,
            "documents": self.total,
            "valid": len(d.docs),
            "skipped": len(d.skipped),
            "warnings": len(d.warnings),
            "skipped_examples": [str(p) for p in d.skipped[:show]],
            "warning_examples": [str(p) for p in d.warnings[:show]],
        }


def validate_file(path: str | os.PathLike[str], *, skip_invalid: bool = False) -> ValidationReport:
    """Validate a DocRED/Re-DocRED or Linked-DocRED file (the format is recognised from its keys)."""
    data = read_json_file(path, "DocRED JSON file")
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON list of documents, got a {type(data).__name__}; "
                        "pass a DocRED, Re-DocRED or Linked-DocRED file")
    if looks_like_predictions(data):
        raise predictions_given_as_documents(path)
    linked = bool(data) and is_linked_docred(data[0])
    docs = [from_linked_docred(d) if is_linked_docred(d) else d for d in data]
    docset = validate_documents(docs, str(path), skip_invalid=skip_invalid)
    return ValidationReport(str(path), "Linked-DocRED" if linked else "DocRED", len(data), docset)
