"""The names an EVRT experiment's pools share: twins, the scored documents and training, counted.

EVRT compares two arms trained on the same documents, one of them also on renamed twins, and scores
both on a test file and its Env version. The comparison measures robustness only if the pools of
names are kept apart (the paper trains on twins of a name pool disjoint from the benchmark's):

* **twins / test**: a twin's new name that is a mention name of the test documents teaches the EVRT
  arm a name the vanilla arm has not seen, on the very documents the "cost on the original test"
  scores (1,690 of the twins' 3,373 new names were, when the twins were drawn from a knowledge base of
  dev and test without excluding test; ``generate --twins`` now requires ``--exclude-names-from``);
* **twins / Env test**: a new name of both the twins and the Env copies makes the Env test less novel to
  the EVRT arm (12 such names, mostly demonyms, when the pools were split by item only;
  ``candidates.names_in_pool`` now compares every form);
* **Env test / training**: a new name of the Env copies that is a mention name of the training documents
  is not novel to either arm (``generate --exclude-names-from TRAIN``).

A file's *new names* are the names of its renamed documents that its source document lacks, on
PER/ORG/LOC/MISC entities (NUM and TIME values are renamed by rule and not held apart, as in
``novelty``); names are compared as ``novelty`` compares them: the folded runs of letters and digits of
a mention's span and of its written name, with and without a leading "the". A renamed document's source
is the document of the same title (a twin) or of its title less the "-k" suffix (an Env copy).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import DataError, EnvbenchError
from envbench.core.types import LINKED_TYPES
from envbench.formats.docred import Doc, entity_type, read_docs, require_documents
from envbench.rename.novelty import NameKey, keys_of, mention_keys
from envbench.rename.substitute import with_article_dropped

EXAMPLES = 5  # shared names quoted per row


@dataclass(frozen=True)
class OverlapRow:
    """One pair of pools: the distinct names of ``left`` that ``right`` also has."""

    key: str  # twins_in_test, twins_in_env, env_in_train
    left: str  # what the names are, as the table says it
    right: str
    shared: int  # distinct names in common
    of: int  # distinct names on the left
    mentions: int  # mentions on the left that carry a shared name
    examples: tuple[str, ...]  # the first shared names, as written on the left (sorted)

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "left": self.left, "right": self.right, "shared": self.shared, "of": self.of,
                "mentions": self.mentions, "examples": list(self.examples)}


@dataclass
class NameOverlap:
    """The rows that the given files allow, and the files."""

    rows: list[OverlapRow]
    files: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(r.shared == 0 for r in self.rows)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "rows": [r.as_dict() for r in self.rows], "files": self.files}

    def summary(self) -> str:
        lines = [f"{'names shared':<58} {'names':>6} {'of':>6} {'mentions':>8}   first"]
        for r in self.rows:
            what = f"{r.left} in {r.right}"
            lines.append(f"{what:<58} {r.shared:>6} {r.of:>6} {r.mentions:>8}   {', '.join(r.examples) or '-'}")
        lines.append("the pools share no name" if self.ok else "the pools share names (see above)")
        return "\n".join(lines)

    def problem(self) -> str | None:
        """The one-line error of pools that share names, or None."""
        bad = [r for r in self.rows if r.shared]
        if not bad:
            return None
        what = "; ".join(f"{r.shared} of {r.of} {r.left} are {r.right} (first: {r.examples[0]!r})" for r in bad)
        return (f"the name pools overlap: {what}; generate the twins with --exclude-names-from the test file and "
                "its Env version, and the Env version with --exclude-names-from the training documents")


def _read(path: str | os.PathLike[str]) -> list[Doc]:
    docset = read_docs(Path(path), skip_flag=None)
    require_documents(docset)
    return docset.docs


def _source_of(title: str, sources: Mapping[str, Doc]) -> Doc | None:
    if title in sources:
        return sources[title]
    base, dash, k = title.rpartition("-")
    return sources.get(base) if dash and k.isdigit() else None


def new_names(renamed: Sequence[Doc], sources: Sequence[Doc], *, where: str = "renamed",
              source_path: str = "source") -> dict[NameKey, tuple[str, int]]:
    """``{key: (a written name, mentions)}`` of the new names of ``renamed`` (the module docstring):
    the keys of its PER/ORG/LOC/MISC mentions that its source document has nowhere."""
    by_title = {d["title"]: d for d in sources}
    own: dict[str, frozenset[NameKey]] = {}
    out: dict[NameKey, tuple[str, int]] = {}
    for doc in renamed:
        src = _source_of(doc["title"], by_title)
        if src is None:
            raise DataError(f"{where}: document {doc['title']!r} has no source document in {source_path} (by its "
                            "title, or its title less -k); pass the file it was generated from")
        if src["title"] not in own:
            own[src["title"]] = frozenset(mention_keys([src]))
        had = own[src["title"]]
        for entity in doc["vertexSet"]:
            if entity_type(entity) not in LINKED_TYPES:
                continue
            for m in entity:
                keys = {k for key in keys_of(doc, m) if key for k in with_article_dropped(key)} - had
                for k in keys:
                    name, n = out.get(k, (str(m["name"]), 0))
                    out[k] = (name, n + 1)
    return out


def _row(key: str, left: str, right: str, names: Mapping[NameKey, tuple[str, int]],
         other: Iterable[NameKey]) -> OverlapRow:
    other = other if isinstance(other, (set, frozenset, dict)) else set(other)
    shared = sorted(k for k in names if k in other)
    return OverlapRow(key, left, right, len(shared), len(names), sum(names[k][1] for k in shared),
                      tuple(sorted({names[k][0] for k in shared})[:EXAMPLES]))


def name_overlap(
    *,
    twins: str | os.PathLike[str] | None = None,
    twins_source: str | os.PathLike[str] | None = None,
    env: str | os.PathLike[str] | None = None,
    env_source: str | os.PathLike[str] | None = None,
    train: Sequence[str | os.PathLike[str]] = (),
) -> NameOverlap:
    """Count the names the pools share (the module docstring): the twins' new names in the test documents
    (``env_source``) and among the Env copies' new names, and the Env copies' new names in ``train``.
    Each row needs its files; a renamed file needs its source."""
    for name, path, source in (("--twins", twins, twins_source), ("--env", env, env_source)):
        if path is not None and source is None:
            raise EnvbenchError(f"{name} {path}: pass the file it was generated from as {name}-source, so that "
                                "its new names can be told from the names it kept")
    for path in (twins, twins_source, env, env_source, *train):
        if path is not None and not Path(path).is_file():
            raise EnvbenchError(f"{path}: no such file; check the path")
    test_docs = _read(env_source) if env_source is not None else None
    twin_new = env_new = None
    if twins is not None:
        twin_new = new_names(_read(twins), _read(twins_source), where=str(twins), source_path=str(twins_source))
    if env is not None:
        env_new = new_names(_read(env), test_docs, where=str(env), source_path=str(env_source))
    rows: list[OverlapRow] = []
    if twin_new is not None and test_docs is not None:
        rows.append(_row("twins_in_test", "new names of the twins", "test mention names", twin_new,
                         mention_keys(test_docs)))
    if twin_new is not None and env_new is not None:
        rows.append(_row("twins_in_env", "new names of the twins", "new names of the Env benchmark", twin_new, env_new))
    if env_new is not None and train:
        seen: set[NameKey] = set()
        for path in train:
            seen |= mention_keys(_read(path))
        rows.append(_row("env_in_train", "new names of the Env benchmark", "training mention names", env_new, seen))
    if not rows:
        raise EnvbenchError("nothing to compare: pass --twins and --env (each with its --*-source), or --env with "
                            "--train")
    files = {"twins": [str(twins)] if twins else [], "twins_source": [str(twins_source)] if twins_source else [],
             "env": [str(env)] if env else [], "env_source": [str(env_source)] if env_source else [],
             "train": [str(p) for p in train]}
    return NameOverlap(rows, files)


__all__ = ["NameOverlap", "OverlapRow", "name_overlap", "new_names"]
