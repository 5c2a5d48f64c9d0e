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
from dataclasses import dataclass, field
from typing import Any

from envbench.formats.docred import (
    SKIP_FLAG,
    Doc,
    DocSet,
    entity_type,
    read_docred,
)
from etl.io import write_json_atomic

IGNORED = "#ignored#"
_QID = re.compile(r"(?:.*[/:])?(Q[1-9][0-9]*)")  # "Q42", "wd:Q42", "https://www.wikidata.org/wiki/Q42"
_CONFIDENCE_ORDER = {"A": 0, "B": 1, "C": 2}


def _qid_of(resource: Any) -> str | None:
    """A QID from ``wikidata_resource``, which may be a bare id or a wikidata.org URL ending in one."""
    if not isinstance(resource, str):
        return None
    m = _QID.fullmatch(resource.strip())
    return m.group(1) if m else None


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


@dataclass
class LinkedDocredFile:
    """A Linked-DocRED file as read: the records of its valid documents and what their links lack."""

    path: str
    records: list[dict[str, Any]]  # {"title", "entities": [{"qid", "type", "mentions"}], "sents", "relations"}
    docset: DocSet
    entities: int = 0
    no_linking: list[tuple[str, int]] = field(default_factory=list)  # (title, entity) without entity_linking
    # (title, entity, value): a wikidata_resource that is neither null nor a Wikidata item id
    bad_resource: list[tuple[str, int, Any]] = field(default_factory=list)

    def warnings(self) -> list[str]:
        """One line per kind of link the file lacks, with counts (those entities stay unlinked)."""
        out = []
        if self.no_linking:
            title, i = self.no_linking[0]
            out.append(f"{self.path}: {len(self.no_linking)} of its {self.entities} entities have no entity_linking "
                       f"(e.g. document {title!r} entity {i}); they stay unlinked")
        if self.bad_resource:
            title, i, value = self.bad_resource[0]
            out.append(f"{self.path}: {len(self.bad_resource)} of its {self.entities} entities have a "
                       f"wikidata_resource that is not a Wikidata item id (e.g. {value!r} in document {title!r} "
                       f"entity {i}); they stay unlinked")
        return out


def read_linked_docred_file(path: str | os.PathLike[str], *, skip_invalid: bool = False,
                            skip_flag: str | None = SKIP_FLAG) -> LinkedDocredFile:
    """Read a Linked-DocRED file: its valid documents as records with one ``qid`` per entity.

    ``qid`` is None for ``#ignored#`` (NUM/TIME), ``#DocRED-<n>#`` and missing links; entities
    without ``entity_linking`` or with a ``wikidata_resource`` that is no item id are counted. The
    documents are validated like DocRED ones (positions, names, relation ids, evidence).
    """
    docset = read_docred(path, skip_invalid=skip_invalid, skip_flag=skip_flag, expect="linked-docred")
    result = LinkedDocredFile(str(path), [], docset)
    for doc in docset.source:
        ents = []
        for i, ent in enumerate(doc["entities"]):
            result.entities += 1
            linking = ent.get("entity_linking")
            if not isinstance(linking, dict):
                result.no_linking.append((doc["title"], i))
                linking = {}
            resource = linking.get("wikipedia_resource")
            wikidata = linking.get("wikidata_resource")
            qid = _qid_of(wikidata)
            if wikidata is not None and qid is None:
                result.bad_resource.append((doc["title"], i, wikidata))
            if isinstance(resource, str) and resource.startswith("#"):
                qid = None
            ents.append({
                "qid": qid,
                "type": ent.get("type"),
                "mentions": [{"sent_id": m["sent_id"], "pos": list(m["pos"]), "name": m["name"]} for m in ent["mentions"]],
            })
        result.records.append({"title": doc["title"], "entities": ents, "sents": doc["sents"],
                               "relations": doc.get("relations", [])})
    return result


def read_linked_docred(path: str | os.PathLike[str], *, skip_invalid: bool = False) -> list[dict[str, Any]]:
    """The records of :func:`read_linked_docred_file`:
    [{"title", "entities": [{"qid", "type", "mentions"}], "sents", "relations"}]."""
    return read_linked_docred_file(path, skip_invalid=skip_invalid).records


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
    docset = read_docred(path, skip_invalid=skip_invalid, expect="any")
    return ValidationReport(str(path), docset.format, docset.total, docset)
