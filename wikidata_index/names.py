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
    decomposed = unicodedata.normalize("NFKD", name)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SPACE.sub(" ", stripped.casefold()).strip()
