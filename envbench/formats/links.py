"""Entity links (QID or None per entity index) from the three accepted link-file formats.

* the project's format, also written by ``envbench link``: ``{title: [QID or null, ...]}``,
  one entry per entity index of the document;
* Linked-DocRED / Linked-Re-DocRED files (a JSON list of documents whose ``entities`` carry
  ``entity_linking.wikidata_resource``). Linked-DocRED merges and re-indexes entities, so each
  DocRED entity is aligned by its mentions' ``(sent_id, pos)``: it takes the QID of the linked
  entity that shares most of its mentions (ties: the linked entity listed first).

What a link file lacks is said, never silently turned into unlinked entities (``LinkFile.warnings``):
documents it has no entry for, Linked-DocRED entities without ``entity_linking`` or with a
``wikidata_resource`` that is no item id, and Linked-DocRED documents whose mentions do not align.
A Linked-DocRED file whose mentions align for fewer than ``MIN_ALIGNMENT`` of the entities is
refused: it was made from other documents (or other tokenisation).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from envbench.core.errors import DataError, shorten
from envbench.formats.docred import Doc, json_type, read_json_file

Links = dict[str, list[str | None]]

# at most 18 digits: a QID is read as a 64-bit integer (Wikidata's are below Q200000000, the corpus KB's
# below Q3000000000000), and a longer one is no item but a planted string
_QID = re.compile(r"^Q[1-9]\d{0,17}$")
# Below this share of aligned entities a Linked-DocRED file is refused, and a document is named in
# a warning. The sample world's file aligns 100%; one document of twenty shifted leaves 95%.
MIN_ALIGNMENT = 0.8


def _check_qid(value: Any, path: str, title: str, index: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _QID.match(value):
        raise DataError(f"{path}: document {title!r}: entity {index}: {shorten(repr(value))} is not a Wikidata item id; "
                        "write a QID such as \"Q42\" or null")
    return value


def align_links(docs: Sequence[Doc], links: dict[str, Any], path: str = "<links>") -> Links:
    """Links of the project format checked against the documents (a missing title = unlinked)."""
    out: Links = {}
    for i, doc in enumerate(docs):
        title = doc["title"]
        n = len(doc["vertexSet"])
        given = links.get(title)
        if given is None:
            out[title] = [None] * n
            continue
        if not isinstance(given, list):
            raise DataError(f"{path}: document {i} {title!r}: links must be a list with a QID or null per "
                            "entity index")
        if len(given) != n:
            raise DataError(
                f"{path}: document {i} {title!r}: the link file lists {len(given)} entities but the document "
                f"has {n}; give a QID or null for each entity index (or regenerate it with `envbench link`)"
            )
        out[title] = [_check_qid(q, path, title, j) for j, q in enumerate(given)]
    return out


@dataclass
class Alignment:
    """How well a Linked-DocRED file's mentions meet the documents' mentions."""

    entities: int = 0  # entities of the documents the file has
    aligned: int = 0  # of them, those with a mention at a (sent_id, pos) of the file
    weak: list[tuple[str, int, int]] = field(default_factory=list)  # (title, aligned, entities) below MIN_ALIGNMENT

    @property
    def rate(self) -> float:
        return self.aligned / self.entities if self.entities else 1.0


def align_linked_docred(docs: Sequence[Doc], linked: Sequence[dict[str, Any]], path: str = "<links>") -> Links:
    """Align Linked-DocRED records (as read by ``read_linked_docred``) to DocRED entities."""
    return _align_linked_docred(docs, linked, path)[0]


def _align_linked_docred(docs: Sequence[Doc], linked: Sequence[dict[str, Any]],
                         path: str) -> tuple[Links, Alignment]:
    by_title = {rec["title"]: rec for rec in linked}
    out: Links = {}
    alignment = Alignment()
    for doc in docs:
        title = doc["title"]
        rec = by_title.get(title)
        qids: list[str | None] = []
        owner: dict[tuple[int, int, int], int] = {}
        if rec is not None:
            for li, ent in enumerate(rec.get("entities", [])):
                for m in ent.get("mentions", []):
                    owner.setdefault((int(m["sent_id"]), int(m["pos"][0]), int(m["pos"][1])), li)
        aligned = 0
        for ei, entity in enumerate(doc["vertexSet"]):
            votes = Counter(
                owner[k] for m in entity if (k := (m["sent_id"], m["pos"][0], m["pos"][1])) in owner
            )
            qid = None
            if votes:
                aligned += 1
                best = max(votes.values())
                li = min(li for li, v in votes.items() if v == best)
                qid = _check_qid(rec["entities"][li].get("qid"), path, title, ei) if rec else None
            qids.append(qid)
        out[title] = qids
        if rec is not None and doc["vertexSet"]:
            n = len(doc["vertexSet"])
            alignment.entities += n
            alignment.aligned += aligned
            if aligned < MIN_ALIGNMENT * n:
                alignment.weak.append((title, aligned, n))
    return out, alignment


@dataclass
class LinkFile:
    """A link file read against documents: the links, and what the file lacks."""

    path: str
    format: str  # "links" ({title: [QID or null]}) or "Linked-DocRED"
    links: Links
    documents: int  # documents linked against
    missing_titles: list[str] = field(default_factory=list)  # documents the file has no entry for
    alignment: Alignment | None = None  # Linked-DocRED only
    entity_warnings: list[str] = field(default_factory=list)  # entities whose links the file garbles

    def warnings(self) -> list[str]:
        """One line per kind of gap, with counts: the entities concerned stay unlinked."""
        out = []
        if self.missing_titles:
            n = len(self.missing_titles)
            out.append(f"{self.path}: {n} of the {self.documents} documents have no entry in this link file "
                       f"(e.g. {self.missing_titles[0]!r}); their entities stay unlinked")
        out.extend(self.entity_warnings)
        if self.alignment and self.alignment.weak:
            title, aligned, n = self.alignment.weak[0]
            k = len(self.alignment.weak)
            out.append(f"{self.path}: in {k} document{'s' if k != 1 else ''} fewer than {MIN_ALIGNMENT:.0%} of the "
                       f"entities align with this file's mentions by (sent_id, pos) (e.g. {title!r}: {aligned} of "
                       f"{n}); the others stay unlinked")
        return out

    def describe(self) -> str:
        """One line: the format, the coverage of the documents, and (Linked-DocRED) the alignment rate."""
        linked, total = coverage(self.links)
        line = (f"links {self.path}: {self.format}, {self.documents - len(self.missing_titles)} of "
                f"{self.documents} documents, {linked} of {total} entities linked")
        if self.alignment is not None:
            line += (f"; {self.alignment.rate:.1%} of {self.alignment.entities} entities aligned by "
                     "mention position")
        return line


def _check_titles(path: str | os.PathLike[str], docs: Sequence[Doc], titles: list[str]) -> None:
    """A link file that names none of the documents is the wrong file, not a file of unlinked ones."""
    if not docs or not set(titles).isdisjoint(d["title"] for d in docs):
        return
    seen = f"e.g. {titles[0]!r}" if titles else "none"
    raise DataError(
        f"{path}: none of the {len(docs)} document titles (e.g. {docs[0]['title']!r}) is in this link file "
        f"({len(titles)} titles, {seen}); pass the link file made for these documents, or make one with "
        "`envbench link DOCS --index DIR --out LINKS.json`"
    )


def read_link_file(path: str | os.PathLike[str], docs: Sequence[Doc]) -> LinkFile:
    """Read a link file of any accepted format, aligned to ``docs`` (see the module docstring).

    Refuses a file that names none of the documents, and a Linked-DocRED file whose mentions align
    for fewer than ``MIN_ALIGNMENT`` of the entities of the documents it shares with ``docs``.
    """
    data = read_json_file(path, "link file")
    if isinstance(data, dict):
        _check_titles(path, docs, list(data))
        links = align_links(docs, data, str(path))
        return LinkFile(str(path), "links", links, len(docs), [d["title"] for d in docs if d["title"] not in data])
    if isinstance(data, list):
        from envbench.formats.linked_docred import read_linked_docred_file

        first = data[0] if data else None
        if not (isinstance(first, dict) and "entities" in first):
            held = ("DocRED documents (vertexSet) without links" if isinstance(first, dict) and "vertexSet" in first
                    else f"a list whose first item is {json_type(first)}" if data else "an empty list")
            raise DataError(
                f"{path}: not a link file: it holds {held}; pass {{title: [QID or null per entity index]}} "
                "as `envbench link DOCS --index DIR --out LINKS.json` writes, or a Linked-DocRED / "
                "Linked-Re-DocRED file"
            )

        linked = read_linked_docred_file(path, skip_flag=None)  # --skip-invalid is about DOCS, not this file
        titles = [r["title"] for r in linked.records]
        _check_titles(path, docs, titles)
        links, alignment = _align_linked_docred(docs, linked.records, str(path))
        known = set(titles)
        if alignment.rate < MIN_ALIGNMENT:
            shared = sum(d["title"] in known for d in docs)
            raise DataError(
                f"{path}: only {alignment.rate:.1%} of the {alignment.entities} entities of the {shared} documents it "
                f"shares with the DocRED file align with its mentions by (sent_id, pos) (at least {MIN_ALIGNMENT:.0%} "
                "needed); its mentions are not these documents' mentions: pass the Linked-DocRED file made from "
                "these documents, or a {title: [QID or null per entity index]} link file"
            )
        return LinkFile(str(path), "Linked-DocRED", links, len(docs),
                        [d["title"] for d in docs if d["title"] not in known], alignment, linked.warnings())
    raise DataError(f"{path}: a link file is a JSON object {{title: [QID or null, ...]}} or a Linked-DocRED "
                    f"list of documents, not {json_type(data)}")


def read_links(path: str | os.PathLike[str], docs: Sequence[Doc]) -> Links:
    """The links of :func:`read_link_file` (its warnings are dropped; callers that print should use it)."""
    return read_link_file(path, docs).links


def coverage(links: Links) -> tuple[int, int]:
    """(linked entities, all entities)."""
    total = sum(len(v) for v in links.values())
    return sum(q is not None for v in links.values() for q in v), total
