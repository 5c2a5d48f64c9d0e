"""Name normalisation shared by the index (folded lookup) and by linking."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_SPACE = re.compile(r"\s+")

# Unicode's format characters (general category Cf, as of Unicode 15.1), as inclusive ranges: invisible
# characters that change how the text around them shows or joins (zero-width space and joiners, the
# left-to-right and right-to-left marks, the bidi embeddings, overrides and isolates, the soft hyphen,
# the byte-order mark, tags). Inside a name they make a new name that looks like another, or like none;
# `validate` warns about a token holding one, and ingest-dump leaves out every name holding one. A fixed
# table, not this Python's unicodedata, so that every machine leaves out the same names (a test checks
# that it covers unicodedata's Cf).
FORMAT_CHARACTERS: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
    (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)
# The bidi embeddings, overrides and isolates among them ("\u202eevil" shows as "live").
BIDI_CONTROLS: tuple[tuple[int, int], ...] = ((0x202A, 0x202E), (0x2066, 0x2069))


def char_class(ranges: Sequence[tuple[int, int]], syntax: str = "python") -> str:
    """The inside of a regex character class for code point ranges: Python's ``re`` (``\\uXXXX``,
    ``\\UXXXXXXXX``) or RE2's, which pyarrow and DuckDB use (``\\x{XXXX}``)."""
    def one(cp: int) -> str:
        if syntax == "re2":
            return f"\\x{{{cp:04x}}}"
        return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"
    return "".join(one(a) if a == b else f"{one(a)}-{one(b)}" for a, b in ranges)


def without(ranges: Sequence[tuple[int, int]], gone: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """``ranges`` less the code points of ``gone``, as ranges."""
    out: list[tuple[int, int]] = []
    for a, b in ranges:
        pieces = [(a, b)]
        for ga, gb in gone:
            pieces = [p for lo, hi in pieces for p in ((lo, min(hi, ga - 1)), (max(lo, gb + 1), hi)) if p[0] <= p[1]]
        out.extend(pieces)
    return tuple(out)


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
