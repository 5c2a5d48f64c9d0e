"""Entity links (QID or None per entity index) from the three accepted link-file formats.

* the project's format, also written by ``envbench link``: ``{title: [QID or null, ...]}``,
  one entry per entity index of the document;
* Linked-DocRED / Linked-Re-DocRED files (a JSON list of documents whose ``entities`` carry
  ``entity_linking.wikidata_resource``). Linked-DocRED merges and re-indexes entities, so each
  DocRED entity is aligned by its mentions' ``(sent_id, pos)``: it takes the QID of the linked
  entity that shares most of its mentions (ties: the linked entity listed first).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from envbench.core.errors import DataError
from envbench.formats.docred import Doc
from etl.io import InputError, read_json

Links = dict[str, list[str | None]]

_QID = re.compile(r"^Q[1-9]\d*$")


def _check_qid(value: Any, path: str, title: str, index: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _QID.match(value):
        raise DataError(f"{path}: document {title!r}: entity {index}: {value!r} is not a Wikidata item id; "
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


def align_linked_docred(docs: Sequence[Doc], linked: Sequence[dict[str, Any]], path: str = "<links>") -> Links:
    """Align Linked-DocRED records (as read by ``read_linked_docred``) to DocRED entities."""
    by_title = {rec["title"]: rec for rec in linked}
    out: Links = {}
    for doc in docs:
        title = doc["title"]
        rec = by_title.get(title)
        qids: list[str | None] = []
        owner: dict[tuple[int, int, int], int] = {}
        if rec is not None:
            for li, ent in enumerate(rec.get("entities", [])):
                for m in ent.get("mentions", []):
                    owner.setdefault((int(m["sent_id"]), int(m["pos"][0]), int(m["pos"][1])), li)
        for ei, entity in enumerate(doc["vertexSet"]):
            votes = Counter(
                owner[k] for m in entity if (k := (m["sent_id"], m["pos"][0], m["pos"][1])) in owner
            )
            qid = None
            if votes:
                best = max(votes.values())
                li = min(li for li, v in votes.items() if v == best)
                qid = _check_qid(rec["entities"][li].get("qid"), path, title, ei) if rec else None
            qids.append(qid)
        out[title] = qids
    return out


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


def read_links(path: str | os.PathLike[str], docs: Sequence[Doc]) -> Links:
    """Read a link file of any accepted format, aligned to ``docs`` (see the module docstring)."""
    try:
        data = read_json(path, what="link file")
    except InputError as exc:
        raise DataError(str(exc)) from None
    if isinstance(data, dict):
        _check_titles(path, docs, list(data))
        return align_links(docs, data, str(path))
    if isinstance(data, list):
        from envbench.formats.linked_docred import read_linked_docred

        first = data[0] if data else None
        if not (isinstance(first, dict) and "entities" in first):
            held = ("DocRED documents (vertexSet) without links" if isinstance(first, dict) and "vertexSet" in first
                    else f"a list of {type(first).__name__}" if data else "an empty list")
            raise DataError(
                f"{path}: not a link file: it holds {held}; pass {{title: [QID or null per entity index]}} "
                "as `envbench link DOCS --index DIR --out LINKS.json` writes, or a Linked-DocRED / "
                "Linked-Re-DocRED file"
            )

        records = read_linked_docred(path)
        _check_titles(path, docs, [r["title"] for r in records])
        return align_linked_docred(docs, records, str(path))
    raise DataError(f"{path}: a link file is a JSON object {{title: [QID or null, ...]}} or a Linked-DocRED "
                    f"list of documents, not a {type(data).__name__}")


def coverage(links: Links) -> tuple[int, int]:
    """(linked entities, all entities)."""
    total = sum(len(v) for v in links.values())
    return sum(q is not None for v in links.values() for q in v), total
