"""Names a model has seen: the mention names of a set of documents, folded for comparison.

``generate --exclude-names-from TRAIN.json`` keeps every new name of a linked entity (PER, ORG,
LOC, MISC) off the mention names of TRAIN.json, so that a benchmark's names are novel to a model
trained on it (the paper's Table 5: 6.9% of Env-Re-DocRED mentions carry a name seen in training,
against 27.3% on Re-DocRED). A name is compared the way the source-document check compares it
(``engine.DocInfo.occurs``): as its folded runs of letters and digits (``substitute.text_key``), so
"Paris", "PARIS" and "Pâris" are one name and "Paris Hilton" is another. A mention's name has two
keys, both held: the key of the document's tokens at its span (as the source-document check reads
the document) and the key of its written name, since the two differ where the tokeniser split a
word ("Can't" written, "Ca" "n't" tokenised: ("can", "t") and ("ca", "n", "t")).

NUM and TIME entities are renamed by rule (a shifted year, another count), not drawn from the
index; their new values are not held to this set, since years and small numbers occur in any
training corpus and hold no identity to memorise.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from envbench.formats.docred import Doc, read_docs, require_documents
from envbench.rename.substitute import name_key, text_key, with_article_dropped

NameKey = tuple[str, ...]


def keys_of(doc: Doc, mention: dict[str, Any]) -> tuple[NameKey, NameKey]:
    """A mention's two keys: of its span's tokens, and of its written name (the module docstring)."""
    start, end = mention["pos"][0], mention["pos"][1]
    return name_key(doc["sents"][mention["sent_id"]][start:end]), text_key(str(mention["name"]))


def mention_keys(docs: Iterable[Doc]) -> set[NameKey]:
    """Both keys of every mention of every entity of ``docs`` (empty keys left out)."""
    keys: set[NameKey] = set()
    for doc in docs:
        for entity in doc["vertexSet"]:
            for m in entity:
                for k in keys_of(doc, m):
                    if k:  # "The Beatles" in training also makes "Beatles" a seen name
                        keys.update(with_article_dropped(k))
    return keys


def seen(keys: tuple[NameKey, NameKey], names: frozenset[NameKey]) -> bool:
    """Whether either key of a mention (``keys_of``) is one of ``names``."""
    return keys[0] in names or keys[1] in names


def excluded_names(paths: Sequence[str | os.PathLike[str]]) -> frozenset[NameKey]:
    """The mention names of the documents of ``paths`` (``--exclude-names-from``), as one set.

    Each file is read and validated as the input is; an invalid or empty file is an error naming
    it, since a benchmark built against the wrong training file would look novel and not be.
    """
    keys: set[NameKey] = set()
    for path in paths:
        docset = read_docs(Path(path), skip_flag=None)
        require_documents(docset)
        keys |= mention_keys(docset.docs)
    return frozenset(keys)


__all__ = ["NameKey", "excluded_names", "keys_of", "mention_keys", "seen"]
