"""DocRED-style tokenisation: words kept whole, punctuation split off."""

from __future__ import annotations

import re

# Order matters: abbreviations ("U.S."), the possessive clitic, numbers with separators (and a
# suffix written onto them: "21st", "1990s", which DocRED never splits),
# words with inner hyphens or apostrophes, then any single other character.
_TOKEN = re.compile(
    r"(?:[^\W\d_]\.){2,}"
    r"|'s\b|’s\b"
    r"|\d+(?:[.,:/]\d+)*(?:(?:st|nd|rd|th|s)(?![^\W_]))?"
    r"|[^\W_]+(?:(?:-|['’](?![sS]\b))[^\W_]+)*"
    r"|\S",
    re.UNICODE,
)


def tokenize(text: str) -> list[str]:
    """Split text into DocRED-like tokens.

    >>> tokenize('Willi "Bill" O\\'Brien, Jr. (born 1963)')
    ['Willi', '"', 'Bill', '"', "O'Brien", ',', 'Jr', '.', '(', 'born', '1963', ')']
    """
    return _TOKEN.findall(text)
