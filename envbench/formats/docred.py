"""Reading and validating DocRED-format documents (DocRED, Re-DocRED, Env-* files).

A document is kept as the plain dict the JSON gives (``title``, ``sents``,
``vertexSet``, optional ``labels``), so extra fields such as Re-DocRED's
``global_pos`` and ``index`` survive a round trip untouched.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from envbench.core.errors import DataError
from envbench.core.relations import RELATIONS
from etl.io import InputError, read_json

Doc = dict[str, Any]


@dataclass(frozen=True)
class Problem:
    """One finding of the validator."""

    file: str
    doc_index: int
    title: str
    where: str  # e.g. "entity 3 mention 1" or "label 7"
    message: str
    fix: str
    severity: str = "error"  # "error" stops a run (unless skipped); "warning" is reported only

    def __str__(self) -> str:
        return f"{self.file}: document {self.doc_index} {self.title!r}: {self.where}: {self.message}; {self.fix}"


@dataclass
class DocSet:
    """Documents read from one file, with what validation found."""

    path: str
    docs: list[Doc]
    skipped: list[Problem] = field(default_factory=list)  # first error of each skipped document
    warnings: list[Problem] = field(default_factory=list)


def entity_type(entity: list[dict[str, Any]]) -> str:
    """The coarse DocRED type of an entity: the type of its first mention (as Re-DocRED's stats do)."""
    return str(entity[0].get("type", "MISC"))


def distinct_names(entity: list[dict[str, Any]]) -> list[str]:
    """The entity's distinct mention names, in order of first appearance."""
    seen: dict[str, None] = {}
    for m in entity:
        seen.setdefault(m["name"], None)
    return list(seen)


def validate_document(doc: Any, doc_index: int, file: str = "<memory>") -> list[Problem]:
    """All problems of one document; errors first is not guaranteed, check ``severity``."""
    out: list[Problem] = []

    def err(where: str, message: str, fix: str, severity: str = "error") -> None:
        title = doc.get("title", "?") if isinstance(doc, dict) else "?"
        out.append(Problem(file, doc_index, str(title), where, message, fix, severity))

    if not isinstance(doc, dict):
        err("document", f"is a {type(doc).__name__}, not an object", "each document must be a JSON object")
        return out
    for key in ("title", "sents", "vertexSet"):
        if key not in doc:
            err("document", f"has no '{key}' field", "DocRED documents need title, sents and vertexSet")
    if out:
        return out
    if not isinstance(doc["title"], str):
        err("title", f"is a {type(doc['title']).__name__}, not a string", "give every document a string title")
        return out
    sents = doc["sents"]
    if not isinstance(sents, list) or not all(isinstance(s, list) for s in sents):
        err("sents", "is not a list of token lists", "write sents as [[token, ...], ...]")
        return out
    if not all(isinstance(tok, str) for s in sents for tok in s):
        err("sents", "holds a token that is not a string", "write every token as a JSON string")
        return out
    n_sents = len(sents)
    vertex_set = doc["vertexSet"]
    if not isinstance(vertex_set, list):
        err("vertexSet", "is not a list", "write vertexSet as a list of entities, each a list of mentions")
        return out
    for ei, entity in enumerate(vertex_set):
        if not isinstance(entity, list) or not entity:
            err(f"entity {ei}", "has no mentions", "remove the entity (and re-index labels) or add its mentions")
            continue
        for mi, m in enumerate(entity):
            where = f"entity {ei} mention {mi}"
            if not isinstance(m, dict) or not {"name", "pos", "sent_id"} <= m.keys():
                err(where, "lacks name, pos or sent_id", "each mention needs name, pos, sent_id and type")
                continue
            sid, pos = m["sent_id"], m["pos"]
            if not isinstance(sid, int) or not 0 <= sid < n_sents:
                err(where, f"sent_id {sid} is out of range (document has {n_sents} sentences)", "fix the sent_id")
                continue
            if (
                not isinstance(pos, list)
                or len(pos) != 2
                or not all(isinstance(p, int) for p in pos)
                or not 0 <= pos[0] < pos[1] <= len(sents[sid])
            ):
                err(
                    where,
                    f"pos {pos} is out of range for sentence {sid} ({len(sents[sid])} tokens)",
                    "pos is a [start, end) token span inside the sentence; fix it",
                )
                continue
            span = " ".join(sents[sid][pos[0] : pos[1]])
            if span != m["name"] and span.replace(" ", "") != str(m["name"]).replace(" ", ""):
                err(
                    where,
                    f"name {m['name']!r} differs from its tokens {span!r}",
                    "the tokens at pos are used; correct the name if that is wrong",
                    severity="warning",
                )
    n_ent = len(vertex_set)
    for li, lab in enumerate(doc.get("labels", []) or []):
        where = f"label {li}"
        if not isinstance(lab, dict) or not {"h", "t", "r"} <= lab.keys():
            err(where, "lacks h, t or r", "each label needs h, t, r and evidence")
            continue
        for end in ("h", "t"):
            if not isinstance(lab[end], int) or not 0 <= lab[end] < n_ent:
                err(where, f"{end}={lab[end]} is out of range ({n_ent} entities)", "fix the entity index")
        if lab["r"] not in RELATIONS:
            err(where, f"relation {lab['r']!r} is not one of the 96 DocRED relations", "use a DocRED property id such as P17")
        for ev in lab.get("evidence", []) or []:
            if not isinstance(ev, int) or not 0 <= ev < n_sents:
                err(where, f"evidence sentence {ev} is out of range ({n_sents} sentences)", "fix the evidence list")
    return out


def validate_documents(docs: Iterable[Any], file: str = "<memory>", *, skip_invalid: bool = False) -> DocSet:
    """Validate documents; raise on the first invalid one unless ``skip_invalid``."""
    kept: list[Doc] = []
    result = DocSet(path=file, docs=kept)
    seen_titles: dict[str, int] = {}
    for i, doc in enumerate(docs):
        problems = validate_document(doc, i, file)
        errors = [p for p in problems if p.severity == "error"]
        result.warnings.extend(p for p in problems if p.severity == "warning")
        if not errors and doc["title"] in seen_titles:
            errors = [
                Problem(file, i, doc["title"], "title", f"repeats document {seen_titles[doc['title']]}",
                        "titles must be unique within a file")
            ]
        if errors:
            if not skip_invalid:
                more = f" (and {len(errors) - 1} more problems in this document)" if len(errors) > 1 else ""
                raise DataError(f"{errors[0]}{more}; or pass --skip-invalid to skip invalid documents")
            result.skipped.append(errors[0])
            continue
        seen_titles[doc["title"]] = i
        kept.append(doc)
    return result


def is_linked_docred(doc: Any) -> bool:
    """A Linked-DocRED document has ``entities`` (and ``relations``) instead of ``vertexSet``/``labels``."""
    return isinstance(doc, dict) and "entities" in doc and "vertexSet" not in doc


def from_linked_docred(doc: dict[str, Any]) -> Doc:
    """The DocRED view of a Linked-DocRED document: entity types copied onto the mentions and
    ``relations`` as ``labels`` (links are dropped; read them with envbench.formats.linked_docred).

    Entity indices are Linked-DocRED's own (it merges coreferent DocRED entities).
    """
    vertex_set = []
    for ent in doc.get("entities") or []:
        etype = ent.get("type", "MISC") if isinstance(ent, dict) else "MISC"
        mentions = (ent.get("mentions") if isinstance(ent, dict) else None) or []
        vertex_set.append([{**m, "type": etype} if isinstance(m, dict) else m for m in mentions])
    out: Doc = {"title": doc.get("title"), "sents": doc.get("sents"), "vertexSet": vertex_set}
    if "relations" in doc:
        out["labels"] = doc["relations"]
    return out


def looks_like_predictions(data: Any) -> bool:
    """True for an official prediction list ``[{title, h_idx, t_idx, r}]`` (a common mix-up with documents)."""
    return (isinstance(data, list) and bool(data) and isinstance(data[0], dict)
            and "h_idx" in data[0] and not {"vertexSet", "entities", "sents"} & data[0].keys())


def predictions_given_as_documents(path: str | os.PathLike[str]) -> DataError:
    return DataError(
        f"{path}: holds predictions (a list of {{title, h_idx, t_idx, r}}), not DocRED documents; give a "
        "DocRED-format file (title, sents, vertexSet) here, and predictions to `envbench evaluate --pred`"
    )


def read_docs(path: str | os.PathLike[str], *, skip_invalid: bool = False) -> DocSet:
    """Read and validate a DocRED-format JSON file (a list of documents; .gz/.bz2/.zst allowed).

    Linked-DocRED files are read too, through their DocRED view (:func:`from_linked_docred`).
    """
    try:
        data = read_json(path, what="DocRED JSON file")
    except InputError as exc:
        raise DataError(str(exc)) from None
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON list of documents, got a {type(data).__name__}; "
                        "pass a DocRED-format file such as dev_revised.json")
    if looks_like_predictions(data):
        raise predictions_given_as_documents(path)
    if data and is_linked_docred(data[0]):
        data = [from_linked_docred(d) if is_linked_docred(d) else d for d in data]
    return validate_documents(data, str(path), skip_invalid=skip_invalid)
