"""Reading and validating DocRED-format documents (DocRED, Re-DocRED, Env-* files).

A document is kept as the plain dict the JSON gives (``title``, ``sents``,
``vertexSet``, optional ``labels``), so extra fields such as Re-DocRED's
``global_pos`` and ``index`` survive a round trip untouched.

:func:`read_docred` is the one reader of document files (DocRED, or Linked-DocRED through its
DocRED view); its options say what the file must hold and which option skips invalid documents.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

import orjson

from envbench.core.errors import DataError, EnvbenchError, shorten
from envbench.core.relations import RELATIONS
from envbench.core.types import COARSE_TYPES
from envbench.formats.hf import is_dataset_path
from etl.io import InputError, read_json
from wikidata_index.names import BIDI_CONTROLS, FORMAT_CHARACTERS, char_class, without

Doc = dict[str, Any]
# What a reader accepts: DocRED-format documents (Linked-DocRED ones through their DocRED view),
# a Linked-DocRED file only, or either, for `validate`.
Expect = Literal["docred", "linked-docred", "any"]
SKIP_FLAG = "--skip-invalid"
# A message quotes a title or mention name whole up to this length (Re-DocRED's longest name has 118
# characters), and cut beyond it: a 200,000-character title had made a 200 KB error line.
SHOWN_TEXT = 120
# A token is one word or sign: Re-DocRED's and DocRED-HWE's longest have 28 characters. One of 100,000 is
# no token, and would fill a model's whole input window (its entities past it silently dropped).
MAX_TOKEN_CHARS = 1000
# Control characters (C0, DEL, C1: a line break, a tab, NUL): a token is text on one line, and the
# sentences joined by spaces are the text that prompts, exports and tokenizers read.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Bidirectional embeddings, overrides and isolates: they make the text after them display in another
# order than it reads (Wikipedia text has some, so they are a warning).
_BIDI = re.compile(f"[{char_class(BIDI_CONTROLS)}]")
# The other format characters (Unicode Cf): invisible (a zero-width space or joiner, a right-to-left mark,
# a byte-order mark, a soft hyphen), they make a name look like another; a warning, as the bidi ones.
_FORMAT = re.compile(f"[{char_class(without(FORMAT_CHARACTERS, BIDI_CONTROLS))}]")


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
        return f"{self.file}: {self.in_file()}"

    def in_file(self) -> str:
        """The problem without the file name (for lines that name the file already)."""
        return f"document {self.doc_index} {show_text(self.title)}: {self.where}: {self.message}; {self.fix}"


@dataclass
class DocSet:
    """Documents read from one file, with what validation found."""

    path: str
    docs: list[Doc]
    skipped: list[Problem] = field(default_factory=list)  # first error of each skipped document
    warnings: list[Problem] = field(default_factory=list)
    format: str = "DocRED"  # what the file holds: "DocRED" or "Linked-DocRED"
    total: int = 0  # documents in the file, valid or not
    # the kept documents as the file writes them, parallel to ``docs`` (a Linked-DocRED record
    # where ``docs`` holds its DocRED view; the same object for DocRED files)
    source: list[Any] = field(default_factory=list)

    def skip_note(self) -> str | None:
        """One line for the console when --skip-invalid dropped documents: how many, and the first reason."""
        if not self.skipped:
            return None
        n = len(self.skipped)
        return (f"skipped {n} invalid document{'s' if n != 1 else ''} of {self.path}; "
                f"the first: {self.skipped[0].in_file()}")


def entity_type(entity: list[dict[str, Any]]) -> str:
    """The coarse DocRED type of an entity: the type of its first mention (as Re-DocRED's stats do)."""
    return str(entity[0].get("type", "MISC"))


def distinct_names(entity: list[dict[str, Any]]) -> list[str]:
    """The entity's distinct mention names, in order of first appearance."""
    seen: dict[str, None] = {}
    for m in entity:
        seen.setdefault(m["name"], None)
    return list(seen)


def keyword_problem(sents: Sequence[Sequence[str]], ki: int, kw: Any) -> str | None:
    """What is wrong with keyword ``ki`` of a label (DocRED-HWE's human evidence words: a
    ``{name, sent_id, pos}`` span, positions as a mention's), or None when it is a span of the document."""
    if not isinstance(kw, dict) or "sent_id" not in kw or "pos" not in kw:
        return f"keyword {ki} lacks sent_id or pos"
    sid, pos = kw["sent_id"], kw["pos"]
    if not isinstance(sid, int) or not 0 <= sid < len(sents):
        return f"keyword {ki} has sent_id {shorten(str(sid))} out of range ({len(sents)} sentences)"
    if (not isinstance(pos, list) or len(pos) != 2 or not all(isinstance(p, int) for p in pos)
            or not 0 <= pos[0] < pos[1] <= len(sents[sid])):
        return f"keyword {ki} has pos {shorten(str(pos))} out of range for sentence {sid} ({len(sents[sid])} tokens)"
    return None


def _is_index(v: Any) -> bool:
    """An int that is not a bool (JSON ``true`` reads as 1 in Python)."""
    return type(v) is int


def show_value(v: Any) -> str:
    """A value in JSON's spelling, cut short (a message names what the file holds).

    orjson reads an integer beyond 64 bits as a float: ``10**30`` written out is shown as its digits
    (then cut), not as ``1e+30``."""
    if isinstance(v, float) and v.is_integer() and abs(v) >= 2**63:
        return shorten(format(Decimal(repr(v)), "f"))
    try:
        text = orjson.dumps(v).decode()
    except TypeError:  # not a JSON value (a large int, a tuple key): Python's spelling
        text = repr(v)
    return shorten(text)


def show_text(text: Any) -> str:
    """A title or name quoted (Python's repr, which escapes control and bidi characters), cut at ``SHOWN_TEXT``."""
    return shorten(repr(text), SHOWN_TEXT)


def json_type(v: Any) -> str:
    """The JSON type of a parsed value with its article: "null", "a boolean", "an integer", "a number",
    "a string", "an array", "an object" (a message names what the file holds, not Python's class)."""
    if v is None:
        return "null"
    for kind, name in ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
                       ((list, tuple), "an array"), (dict, "an object")):
        if isinstance(v, kind):
            return name
    return f"a {type(v).__name__}"  # not from JSON (a library caller's value)


def token_problems(sents: Sequence[Sequence[str]]) -> list[tuple[str, str, str, str]]:
    """(where, message, fix, severity) for the first token of each kind that is no text of one line: one
    over ``MAX_TOKEN_CHARS`` (an error), and an empty one, one holding a control character and one holding
    a bidi control (warnings: a corpus file of the field's may have such a token, and every step reads it
    as it is). ``sents`` is a list of lists of strings; each check runs over all
    tokens at once, and only a hit is looked for token by token."""
    flat = [tok for s in sents for tok in s]
    if not flat:
        return []
    joined = " ".join(flat)
    out: list[tuple[str, str, str, str]] = []

    def first(pred: Any) -> tuple[str, str]:
        for si, s in enumerate(sents):
            for ti, tok in enumerate(s):
                if pred(tok):
                    return f"sentence {si} token {ti}", tok
        raise AssertionError("no such token")  # pragma: no cover - called only when one exists

    if "" in flat:
        where, _ = first(lambda t: t == "")
        out.append((where, "is empty", "a token is a word or sign of the text; it is read as it is: remove it "
                    "(and shift the positions after it) if that is wrong", "warning"))
    if max(map(len, flat)) > MAX_TOKEN_CHARS:
        where, tok = first(lambda t: len(t) > MAX_TOKEN_CHARS)
        out.append((where, f"has {len(tok):,} characters, more than {MAX_TOKEN_CHARS:,}",
                    "a token is one word or sign: split the text into its tokens, or remove the document", "error"))
    for pattern, kind, fix in (
            (_CONTROL, "control character", "a token is text on one line; it is read as it is: remove the line "
             "break, tab, NUL or other control character if that is wrong"),
            (_BIDI, "bidirectional control character", "it makes the text after it display in another order than "
             "it reads; remove it unless the text needs it"),
            (_FORMAT, "invisible format character", "it makes a name look like another (and would come out inside "
             "new names); remove it unless the text needs it")):
        if pattern.search(joined):
            where, tok = first(lambda t, p=pattern: p.search(t) is not None)
            char = pattern.search(tok).group()  # type: ignore[union-attr]
            out.append((where, f"holds the {kind} U+{ord(char):04X}", fix, "warning"))
    return out


def validate_document(doc: Any, doc_index: int, file: str = "<memory>") -> list[Problem]:
    """All problems of one document; errors first is not guaranteed, check ``severity``.

    The rule for the two severities. An **error** is what a reader cannot take as DocRED defines it, or
    what a later step would fail on or silently misread: a field of the wrong JSON type, a missing field,
    an index out of range, an entity without mentions, an unknown relation or type, a document without
    a title (titles name documents in predictions, links and Env copies) or without sentences, and a
    token longer than ``MAX_TOKEN_CHARS`` (no word is). A document with an error is refused, or skipped with
    --skip-invalid. A **warning** is a document that is valid but odd, which every step reads in one
    stated way: a mention name that differs from its tokens (Re-DocRED has some; the tokens are used),
    a mention without a type (MISC), an entity whose mentions have several types (the first's), a label
    from an entity to itself, a label that repeats another's h, t and r (scorers count the fact once), a
    ``null`` labels or evidence (read as none, though the official scorer and ATLOP's reader fail on
    it), an empty token, a token holding a control character (a line break, NUL) or a bidirectional
    one (DocRED's own distant and training files may have such a token: it is read as it is, and refusing
    the file would refuse the corpus), and a document with fewer than two
    entities (no pair: relation models and scorers find nothing in it; DocRED's format allows it).
    Whitespace tokens such as a no-break space are text (Re-DocRED has them).
    """
    out: list[Problem] = []

    def err(where: str, message: str, fix: str, severity: str = "error") -> None:
        title = doc.get("title", "?") if isinstance(doc, dict) else "?"
        out.append(Problem(file, doc_index, title if isinstance(title, str) else "?", where, message, fix, severity))

    if not isinstance(doc, dict):
        err("document", f"is {json_type(doc)}, not an object", "each document must be a JSON object")
        return out
    for key in ("title", "sents", "vertexSet"):
        if key not in doc:
            err("document", f"has no '{key}' field", "DocRED documents need title, sents and vertexSet")
    if out:
        return out
    if not isinstance(doc["title"], str):
        err("title", f"is {json_type(doc['title'])}, not a string", "give every document a string title")
        return out
    if not doc["title"].strip():
        err("title", "is empty" if not doc["title"] else "is only whitespace",
            "give every document a title: it names the document in predictions, links and the Env copies")
        return out
    sents = doc["sents"]
    if not isinstance(sents, list) or not all(isinstance(s, list) for s in sents):
        err("sents", "is not a list of token lists", "write sents as [[token, ...], ...]")
        return out
    if not all(isinstance(tok, str) for s in sents for tok in s):
        err("sents", "holds a token that is not a string", "write every token as a JSON string")
        return out
    if not sents:
        err("sents", "holds no sentences", "a document is its text: give its sentences, or remove the document")
        return out
    for where, message, fix, severity in token_problems(sents):
        err(where, message, fix, severity)
    n_sents = len(sents)
    vertex_set = doc["vertexSet"]
    if not isinstance(vertex_set, list):
        err("vertexSet", "is not a list", "write vertexSet as a list of entities, each a list of mentions")
        return out
    if len(vertex_set) < 2:
        err("vertexSet", f"has {len(vertex_set)} entit{'y' if len(vertex_set) == 1 else 'ies'}, so no entity pair",
            "relation models and scorers classify pairs of entities and find nothing in this document; add its "
            "entities, or remove it", severity="warning")
    for ei, entity in enumerate(vertex_set):
        if not isinstance(entity, list) or not entity:
            err(f"entity {ei}", "has no mentions", "remove the entity (and re-index labels) or add its mentions")
            continue
        for mi, m in enumerate(entity):
            where = f"entity {ei} mention {mi}"
            if not isinstance(m, dict) or not {"name", "pos", "sent_id"} <= m.keys():
                err(where, "lacks name, pos or sent_id", "each mention needs name, pos, sent_id and type")
                continue
            if "type" not in m:
                err(where, "has no type", f"give each mention one of {', '.join(COARSE_TYPES)}; MISC is used "
                    "for an entity whose first mention has none", severity="warning")
            elif m["type"] not in COARSE_TYPES:
                err(where, f"type {show_text(m['type'])} is not a DocRED type",
                    f"give each mention one of {', '.join(COARSE_TYPES)} (MISC when none fits)")
            if not isinstance(m["name"], str):  # every later step reads it as text
                shown = "" if m["name"] is None else f" {show_value(m['name'])}"  # not "name null is null"
                err(where, f"name{shown} is {json_type(m['name'])}, not a string",
                    "write the mention's name as a JSON string (the text of its tokens)")
                continue
            sid, pos = m["sent_id"], m["pos"]
            if not _is_index(sid):
                err(where, f"sent_id {show_value(sid)} is not a sentence index", "write sent_id as a 0-based integer")
                continue
            if not 0 <= sid < n_sents:
                err(where, f"sent_id {sid} is out of range (document has {n_sents} sentences)", "fix the sent_id")
                continue
            if not isinstance(pos, list) or len(pos) != 2 or not all(_is_index(p) for p in pos):
                err(where, f"pos {show_value(pos)} is not two token indices",
                    "write pos as [start, end), two 0-based integers")
                continue
            if pos[0] >= pos[1]:
                err(where, f"pos {pos} is {'an empty span' if pos[0] == pos[1] else 'reversed (start after end)'}",
                    "pos is a [start, end) token span with start < end; fix it")
                continue
            if not 0 <= pos[0] < pos[1] <= len(sents[sid]):
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
                    f"name {show_text(m['name'])} differs from its tokens {show_text(span)}",
                    "the tokens at pos are used; correct the name if that is wrong",
                    severity="warning",
                )
        types = list(dict.fromkeys(m["type"] for m in entity if isinstance(m, dict) and m.get("type") in COARSE_TYPES))
        if len(types) > 1:  # Re-DocRED dev and test have 9 such entities each
            err(f"entity {ei}", f"has mentions of types {', '.join(types)}",
                f"the first mention's type, {types[0]}, is the entity's; give its mentions one type if that is wrong",
                severity="warning")
    n_ent = len(vertex_set)
    labels = doc.get("labels")
    if labels is None and "labels" in doc:
        err("labels", "is null, read as no labels", "the official scorer and ATLOP's reader loop over it and fail; "
            "write [] or leave the field out (a file without gold)", severity="warning")
    labels = [] if labels is None else labels  # absent or null: a test file without gold
    if not isinstance(labels, list):
        err("labels", f"is {json_type(labels)}, not a list",
            "write labels as a list of {h, t, r, evidence} objects (or leave it out)")
        return out
    facts: dict[tuple[int, int, str], int] = {}  # (h, t, r) -> the first label that states it
    for li, lab in enumerate(labels):
        where = f"label {li}"
        if not isinstance(lab, dict) or not {"h", "t", "r"} <= lab.keys():
            err(where, "lacks h, t or r", "each label needs h, t, r and evidence")
            continue
        ends_ok = True
        for end in ("h", "t"):
            if not _is_index(lab[end]):  # true/false are JSON booleans, not entity indices
                err(where, f"{end}={show_value(lab[end])} is not an entity index", "write h and t as 0-based integers")
                ends_ok = False
            elif not 0 <= lab[end] < n_ent:
                err(where, f"{end}={lab[end]} is out of range ({n_ent} entities)", "fix the entity index")
                ends_ok = False
        if ends_ok and lab["h"] == lab["t"]:
            # a warning, not an error: such a label is odd gold but scores alike on both sides of a
            # comparison (icl parse drops such triples from answers, so a model cannot match it there)
            err(where, f"h and t are the same entity ({lab['h']})",
                "a relation holds between two different entities; fix h or t, or drop the label",
                severity="warning")
        if not isinstance(lab["r"], str) or lab["r"] not in RELATIONS:
            err(where, f"relation {show_text(lab['r'])} is not one of the 96 DocRED relations",
                "use a DocRED property id such as P17")
        elif ends_ok:
            fact = (lab["h"], lab["t"], lab["r"])
            if fact in facts:
                err(where, f"repeats label {facts[fact]} (the same h, t and r)",
                    "scorers count the fact once, but the evidence of both (as the official scorer does); drop "
                    "the repeat", severity="warning")
            facts.setdefault(fact, li)
        evidence = lab.get("evidence", [])
        if evidence is None:
            err(where, "evidence is null, read as no evidence sentences",
                "the official scorer makes a set of it and fails; write [] (or leave the field out)",
                severity="warning")
            evidence = []
        if not isinstance(evidence, list):
            err(where, f"evidence {show_value(evidence)} is not a list",
                "write evidence as a list of sentence ids, e.g. [0, 2]")
            evidence = []
        for ev in evidence:
            if not _is_index(ev) or not 0 <= ev < n_sents:
                err(where, f"evidence sentence {show_value(ev)} is out of range ({n_sents} sentences)",
                    "fix the evidence list")
        # keywords are optional (DocRED-HWE has them); renaming moves their spans, so they must be spans
        keywords = lab.get("keywords")
        if keywords is not None and not isinstance(keywords, list):
            err(where, "keywords is not a list", "write keywords as a list of {name, sent_id, pos} spans")
        for ki, kw in enumerate(keywords if isinstance(keywords, list) else []):
            if (problem := keyword_problem(sents, ki, kw)) is not None:
                err(where, problem, "a keyword is a [start, end) token span of sentence sent_id; fix it or drop it")
                break
    return out


def validate_documents(
    docs: Iterable[Any],
    file: str = "<memory>",
    *,
    skip_invalid: bool = False,
    skip_flag: str | None = SKIP_FLAG,
    source: Iterable[Any] | None = None,
) -> DocSet:
    """Validate documents; raise on the first invalid one unless ``skip_invalid``.

    ``skip_flag`` is the option the error names as the way to skip invalid documents (None: the
    command has none). ``source``, parallel to ``docs``, is what the file holds for each document
    (see ``DocSet.source``); by default the documents themselves.
    """
    docs = list(docs)
    originals = docs if source is None else list(source)
    kept: list[Doc] = []
    result = DocSet(path=file, docs=kept, total=len(docs))
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
                hint = f"; or pass {skip_flag} to skip invalid documents" if skip_flag else ""
                raise DataError(f"{errors[0]}{more}{hint}")
            result.skipped.append(errors[0])
            continue
        seen_titles[doc["title"]] = i
        kept.append(doc)
        result.source.append(originals[i])
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


def read_json_file(path: str | os.PathLike[str], what: str) -> Any:
    """``etl.io.read_json`` raising DataError, so callers catch one error type."""
    try:
        return read_json(path, what=what)
    except InputError as exc:
        raise DataError(str(exc)) from None


def read_docred(
    path: str | os.PathLike[str],
    *,
    skip_invalid: bool = False,
    skip_flag: str | None = SKIP_FLAG,
    expect: Expect = "docred",
) -> DocSet:
    """Read and validate a file of documents (a JSON list; .gz/.bz2/.zst allowed): the one reader.

    A folder or ``.parquet`` file is a Hugging Face dataset that ``envbench export`` wrote (or one with
    the same DocRED features), read by :func:`envbench.formats.hf.read_dataset_docs`.

    ``expect`` says what the file must hold: ``"docred"``, DocRED-format documents (a Linked-DocRED
    file is read through its DocRED view, :func:`from_linked_docred`); ``"linked-docred"``, a
    Linked-DocRED file only; ``"any"``, either (``envbench validate``). ``DocSet.format`` says which
    it was and ``DocSet.source`` keeps the records as written. A prediction file given as documents
    is named as such. Invalid documents stop the read, naming ``skip_flag`` as the way to skip
    them (None: the command has none), unless ``skip_invalid``.
    """
    linked_only = expect == "linked-docred"
    if is_dataset_path(path):  # a folder or Parquet file of `envbench export` (envbench.formats.hf)
        if linked_only:
            raise DataError(f"{path}: a Parquet dataset holds DocRED documents, not Linked-DocRED ones; pass a "
                            "Linked-DocRED or Linked-Re-DocRED JSON file")
        from envbench.formats.hf import read_dataset_docs  # pyarrow loads only for such a path

        return validate_documents(read_dataset_docs(path), str(path), skip_invalid=skip_invalid, skip_flag=skip_flag)
    data = read_json_file(path, "Linked-DocRED JSON file" if linked_only else "DocRED JSON file")
    if linked_only:
        if looks_like_predictions(data):
            raise DataError(f"{path}: holds predictions (a list of {{title, h_idx, t_idx, r}}), not a Linked-DocRED "
                            "file; pass a Linked-DocRED or Linked-Re-DocRED file (documents with 'entities')")
        if not isinstance(data, list) or (data and not is_linked_docred(data[0])):
            raise DataError(f"{path}: not a Linked-DocRED file (expected a list of documents with 'entities', "
                            "each with 'entity_linking'); pass a Linked-DocRED or Linked-Re-DocRED file")
        views = [from_linked_docred(d) for d in data]
    else:
        if not isinstance(data, list):
            fix = ("pass a DocRED, Re-DocRED or Linked-DocRED file" if expect == "any"
                   else "pass a DocRED-format file such as dev_revised.json")
            raise DataError(f"{path}: expected a JSON list of documents, got {json_type(data)}; {fix}")
        if looks_like_predictions(data):
            raise predictions_given_as_documents(path)
        linked = bool(data) and is_linked_docred(data[0])  # the first document decides, as it always has
        views = [from_linked_docred(d) if is_linked_docred(d) else d for d in data] if linked else data
    docset = validate_documents(views, str(path), skip_invalid=skip_invalid, skip_flag=skip_flag, source=data)
    docset.format = "Linked-DocRED" if data and is_linked_docred(data[0]) else "DocRED"
    return docset


# The short name every caller uses.
read_docs = read_docred


def require_documents(docset: DocSet, skip_flag: str = SKIP_FLAG) -> None:
    """An empty input is a mistake (a wrong file, or every document invalid), not an empty result."""
    if docset.docs:
        return
    if docset.skipped:
        raise EnvbenchError(f"{docset.path}: all {len(docset.skipped)} documents are invalid and were skipped; "
                            f"run without {skip_flag} to see the first problem")
    raise EnvbenchError(f"{docset.path}: holds no documents; give a DocRED-format file with at least one document")
