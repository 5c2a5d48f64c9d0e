"""DocRED's tokenisation: spaCy's English tokenizer, as the corpus itself was tokenised.

DocRED's tokens come from spaCy. ``spacy.blank("en")`` (rules only, no model download) gives back
the corpus's own tokens for 99.75% of the distinct PER/ORG/LOC/MISC mention names of Re-DocRED dev +
test, against 96.3% for the regular expression used before (``tests/envbench/core/test_text.py``
keeps the measure). It keeps abbreviations and initials whole ("Mr.", "L.", "U.S."), splits hyphens
("Jean", "-", "Baptiste") and keeps alphanumeric words whole ("3DS", "ADO.NET", "1990s", "21st").
Whitespace tokens (DocRED keeps a no-break space as a token of its own) are dropped: a new name
never brings one.
"""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def _tokenizer() -> Any:
    # Loaded on first use: importing spaCy takes a second, and `envbench --help` never needs it.
    import spacy

    return spacy.blank("en").tokenizer


def tokenize(text: str) -> list[str]:
    """Split text into DocRED's tokens.

    >>> tokenize('Willi "Bill" O\'Brien, Jr. (born 1963)')
    ['Willi', '"', 'Bill', '"', "O'Brien", ',', 'Jr.', '(', 'born', '1963', ')']
    """
    return [t.text for t in _tokenizer()(text) if not t.is_space]
