"""Name normalisation shared by the index (folded lookup) and by linking."""

from __future__ import annotations

import re
import unicodedata

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
