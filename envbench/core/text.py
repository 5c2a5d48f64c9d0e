"""DocRED's tokenisation: spaCy's English tokenizer, as the corpus itself was tokenised.

DocRED's tokens come from spaCy. ``spacy.blank("en")`` (rules only, no model download) gives back
the corpus's own tokens for 99.75% of the distinct PER/ORG/LOC/MISC mention names of Re-DocRED dev +
test, against 96.3% for the regular expression used before (``tests/envbench/core/test_text.py``
keeps the measure). It keeps abbreviations and initials whole ("Mr.", "L.", "U.S."), splits hyphens
("Jean", "-", "Baptiste") and keeps alphanumeric words whole ("3DS", "ADO.NET", "1990s", "21st").
Whitespace tokens (DocRED keeps a no-break space as a token of its own) are dropped: a new name
never brings one.

Loading spaCy takes about 3 s, much of a small `generate` run. So an index can carry the tokens of its
names (the ``name_tokens`` table, filled at ingest by :func:`name_tokenizer`): `generate` takes the
index's record of spaCy's special cases (:func:`use_stored_tokens`) and its rows (:func:`remember_tokens`),
and :func:`tokenize` then answers every index name without loading spaCy.
"""

from __future__ import annotations

import functools
import sys
import threading
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from importlib.metadata import version as _version
from typing import Any

from wikidata_index.names import NameTokenizer

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


def _special_words() -> frozenset[str]:
    """The spaCy special cases made of letters only ("cannot" -> "can", "not"; "Dont" -> "Do", "nt"):
    as an index recorded them (use_stored_tokens), else from spaCy."""
    return _GIVEN_SPECIAL if _GIVEN_SPECIAL is not None else _spacy_special_words()


@functools.cache
def _spacy_special_words() -> frozenset[str]:
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
    stored = _STORED.get(text)
    if stored is not None:
        return list(stored)
    return [t.text for t in _tokenizer()(text) if not t.is_space]


# What an index stored (use_stored_tokens, remember_tokens): the same answers as spaCy's, without it.
_GIVEN_SPECIAL: frozenset[str] | None = None
_STORED: dict[str, tuple[str, ...]] = {}


def tokenizer_version() -> str:
    """The tokenizer :func:`tokenize` uses, with its version, as an index records it (read from the
    installed package's metadata: spaCy is not imported)."""
    return f"spacy {_version('spacy')} blank en"


def _tokens_to_store(names: Sequence[str]) -> list[list[str] | None]:
    # plain names are tokenised by their spaces (tokenize's own shortcut): nothing to store
    todo = [i for i, n in enumerate(names) if _plain_words(n) is None]
    out: list[list[str] | None] = [None] * len(names)
    for i, doc in zip(todo, _tokenizer().pipe(names[i] for i in todo)):
        out[i] = [t.text for t in doc if not t.is_space]
    return out


def name_tokenizer() -> NameTokenizer:
    """What an ingest needs to fill ``name_tokens`` with :func:`tokenize`'s tokens of the names that
    are not plain, and to record spaCy's special cases that tell the two apart (``envbench
    ingest-dump`` passes it). Nothing is loaded until the ingest asks: spaCy loads in a thread while
    the final tables are written, after the parsing processes are done."""
    return NameTokenizer(tokenizer_version(), _tokens_to_store, facts=lambda: {"special_words": sorted(_special_words())},
                         warm_up=warm_up)


def use_stored_tokens(facts: Mapping[str, Any]) -> bool:
    """Take an index's record of its ``name_tokens`` tokenizer (``WikidataIndex.name_tokenizer_facts``)
    when it is this one (:func:`tokenizer_version`), so that telling a plain name needs no spaCy; then
    :func:`remember_tokens` with the index's rows answers the other names. Whether it was taken."""
    global _GIVEN_SPECIAL
    words = facts.get("special_words")
    if (facts.get("tokenizer") != tokenizer_version() or not isinstance(words, list)
            or not all(isinstance(w, str) for w in words)):
        return False  # another tokenizer, or a record that is not one: tokenise with spaCy as without it
    _GIVEN_SPECIAL = frozenset(words)
    return True


def remember_tokens(pairs: Iterable[tuple[str, Sequence[str]]]) -> None:
    """Let :func:`tokenize` answer these texts from the tokens an index stored for them (its
    ``name_tokens`` rows, after :func:`use_stored_tokens`), without loading spaCy: the answers are the
    same. Texts are keyed with whitespace collapsed, as tokenize is given names."""
    for text, tokens in pairs:
        _STORED[" ".join(text.split())] = tuple(tokens)
