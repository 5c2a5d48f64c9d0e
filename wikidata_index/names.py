"""Name normalisation shared by the index (folded lookup) and by linking."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_SPACE = re.compile(r"\s+")


def fold(name: str) -> str:
    """Case- and diacritic-folded form of a name with whitespace collapsed.

    "Mediaș" and "MEDIAS" fold to the same key; punctuation is kept because it
    separates names such as "AC/DC" from "ACDC".
    """
    if name.isascii():
        # most names: for ASCII, NFKD is the identity, nothing is combining, casefold is lower, and
        # str.split() splits on exactly the characters that \s matches
        return " ".join(name.lower().split())
    return _fold_unicode(name)


def _fold_unicode(name: str) -> str:
    """:func:`fold` by its definition, for any text (the ASCII shortcut is tested against it)."""
    decomposed = unicodedata.normalize("NFKD", name)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SPACE.sub(" ", stripped.casefold()).strip()


@dataclass(frozen=True)
class NameTokenizer:
    """How an ingest fills the optional ``name_tokens`` table (schema.py), injected by the caller so that
    the index never depends on a tokenizer: envbench passes DocRED's (``envbench.core.text``).

    ``tokenize`` maps a batch of names (whitespace already collapsed) to their tokens, or to None for a
    name that need not be stored (one its reader tokenises without the tokenizer). ``version`` names the
    tokenizer and its version; the manifest records it, and a reader trusts the table only when it
    equals its own, so an index made under another tokenizer is read as if it had no table.
    """

    version: str
    tokenize: Callable[[Sequence[str]], Sequence[Sequence[str] | None]]
    # JSON-able facts a reader needs beside the rows (envbench: spaCy's special cases made of letters,
    # which tell a plain name from one to look up), asked for after the names are tokenised and
    # recorded in the manifest beside the version
    facts: Callable[[], Mapping[str, Any]] = dict
    # called as the ingest starts, so that loading the tokenizer overlaps the parse (envbench's starts
    # spaCy in a process of its own); close, when the ingest is done with the tokenizer, or fails
    warm_up: Callable[[], object] | None = None
    close: Callable[[], object] | None = None

    def record(self) -> dict[str, Any]:
        """What an index's manifest keeps as ``name_tokens``: the version and the facts."""
        return {"tokenizer": self.version, **self.facts()}
