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
import sys
import threading
import unicodedata
from typing import Any

_LOADING = threading.Lock()


def warm_up() -> threading.Thread:
    """Load spaCy's tokenizer in a background thread (started and returned), so that its import
    (about a second) overlaps work that does not hold the GIL, such as `generate`'s DuckDB queries.

    While it loads, torch is hidden (see ``_load_tokenizer``), so a thread that imports torch for the
    first time in that second would fail: call it only where nothing imports torch (`generate`)."""
    thread = threading.Thread(target=_tokenizer, name="envbench-tokenizer-warm-up", daemon=True)
    thread.start()
    return thread


def _tokenizer() -> Any:
    with _LOADING:  # one load, however many threads ask first
        return _load_tokenizer()


@functools.cache
def _load_tokenizer() -> Any:
    # Loaded on first use: importing spaCy takes a second, and `envbench --help` never needs it.
    # spaCy's model library (thinc) imports torch when it is installed (the [train] extra), which
    # doubles the import for a tokenizer that never touches it; so torch is hidden from that import
    # unless it is loaded already, and a later `import torch` works as usual (thinc then keeps no
    # torch shims, which no part of envbench uses).
    hide = "torch" not in sys.modules
    if hide:
        sys.modules["torch"] = None  # type: ignore[assignment]  # `import torch` raises ImportError
    try:
        import spacy

        return spacy.blank("en").tokenizer
    finally:
        if hide and sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]


@functools.cache
def _special_words() -> frozenset[str]:
    """The spaCy special cases made of letters only ("cannot" -> "can", "not"; "Dont" -> "Do", "nt")."""
    return frozenset(w for w in _tokenizer().rules if w.isalpha())


def _plain_words(text: str) -> list[str] | None:
    """The words of ``text`` when spaCy would split it at its single spaces only, else None.

    That holds for ASCII words of letters alone: spaCy's prefix, suffix and infix rules all need
    a character that is not a letter, so only its special cases split such a word, and those are
    checked. Most index names ("Mary Smith", "Lake Tahoe") take this path, which skips building
    a spaCy Doc: `generate` tokenises every candidate name it draws.
    """
    words = text.split(" ")
    special = _special_words()
    for w in words:
        if not (w.isascii() and w.isalpha()) or w in special:
            return None
    return words


@functools.lru_cache(maxsize=1 << 18)
def latin_script(name: str) -> bool:
    """Whether every letter of ``name`` is a Latin letter ("Jirō Shiizaki" yes, "椎崎二郎" and "Москва" no)."""
    if name.isascii():
        return True
    return all(not ch.isalpha() or "LATIN" in unicodedata.name(ch, "") for ch in name)


def tokenize(text: str) -> list[str]:
    """Split text into DocRED's tokens.

    >>> tokenize('Willi "Bill" O\'Brien, Jr. (born 1963)')
    ['Willi', '"', 'Bill', '"', "O'Brien", ',', 'Jr.', '(', 'born', '1963', ')']
    """
    plain = _plain_words(text)
    if plain is not None:
        return plain
    return [t.text for t in _tokenizer()(text) if not t.is_space]
