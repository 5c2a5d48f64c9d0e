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
import os
import subprocess
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
def same_case(word: str, like: str) -> str:
    """``word`` in the case of ``like``, the token it replaces: all capitals stay all capitals ("AN", not
    for one letter), a capital stays a capital ("Ten" -> "Six", "Medieval" -> "Ancient"), and otherwise
    ``word`` as given (so a proper name keeps its capital after a lower-case word: "pre - Renaissance")."""
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


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


# Tokens of the words that are not plain, as _tokens_to_store met them (bounded: emptied when full).
_WORD_TOKENS: dict[str, tuple[str, ...]] = {}
WORD_CACHE = 1 << 20


def _tokens_to_store(names: Sequence[str]) -> list[list[str] | None]:
    """tokenize's tokens of the names that are not plain (None for a plain name: tokenize splits it
    at its spaces without spaCy, so there is nothing to store).

    spaCy splits a text at its single spaces first and tokenises each part on its own (its one
    special case holding a space is " " itself), so a name's tokens are its words' tokens in order:
    spaCy sees each distinct word once, not each name ("St." in every "St. X"), and a plain word
    needs no lookup (tests/envbench/core/test_text.py checks the equality on Re-DocRED's names and
    phrases, and every special case in context)."""
    special = _store_special()
    out: list[list[str] | None] = [None] * len(names)
    split: list[tuple[int, list[str]]] = []
    todo: dict[str, None] = {}
    for i, name in enumerate(names):
        words = name.split(" ")
        if all(w.isascii() and w.isalpha() and w not in special for w in words):
            continue  # plain (_plain_words)
        split.append((i, words))
        for w in words:
            if not (w.isascii() and w.isalpha() and w not in special) and w not in _WORD_TOKENS:
                todo[w] = None
    if len(_WORD_TOKENS) + len(todo) > WORD_CACHE:
        _WORD_TOKENS.clear()  # memory stays bounded on the full dump; words of this batch come back
        todo = {w: None for _, words in split for w in words
                if not (w.isascii() and w.isalpha() and w not in special)}
    for w, tokens in zip(todo, _spacy_words(list(todo))):
        _WORD_TOKENS[w] = tuple(tokens)
    for i, words in split:
        tokens: list[str] = []
        for w in words:
            got = _WORD_TOKENS.get(w)
            if got is None:
                tokens.append(w)  # a plain word
            else:
                tokens.extend(got)
        out[i] = tokens
    return out


# spaCy in a process of its own, for an ingest (name_tokenizer's warm_up starts it, close ends it).
_SERVE = """
import signal, sys, types, orjson
# Ctrl-C reaches the whole process group: the parent reports it; this child ends when its input does
signal.signal(signal.SIGINT, signal.SIG_IGN)
# spaCy's package imports its command line (requests, httpx, weasel: a third of its import time),
# which a tokenizer never uses: a stand-in for it, in this child only, skips that
cli, info = types.ModuleType("spacy.cli"), types.ModuleType("spacy.cli.info")
info.info = cli.info = info
sys.modules.update({"spacy.cli": cli, "spacy.cli.info": info})
from envbench.core.text import _spacy_special_words, _tokenizer
tok = _tokenizer()
for line in sys.stdin.buffer:
    req = orjson.loads(line)
    if req is None:
        out = sorted(_spacy_special_words())
    else:
        out = [[t.text for t in doc if not t.is_space] for doc in tok.pipe(req)]
    sys.stdout.buffer.write(orjson.dumps(out) + b"\\n")
    sys.stdout.buffer.flush()
import os
os._exit(0)  # at the end of the input: no interpreter teardown (spaCy's modules take a while)
"""


class _TokenizerProcess:
    """spaCy's tokenizer in a child process: importing spaCy (a second or more, all Python) then takes
    neither this process's time nor its GIL, so it overlaps the parse instead of slowing it. One request
    at a time: a JSON line (a list of words, or null for the special words), answered by a JSON line."""

    def __init__(self) -> None:
        import orjson

        self._orjson = orjson
        self.proc = subprocess.Popen([sys.executable, "-c", _SERVE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                                         [_ROOT, *filter(None, [os.environ.get("PYTHONPATH")])])))
        self.special: frozenset[str] | None = None

    def ask(self, request: Any) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(self._orjson.dumps(request) + b"\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the spaCy tokenizer process ended (exit code {self.proc.wait()}); "
                               "check that `python -c 'import spacy'` works")
        return self._orjson.loads(line)

    def close(self) -> None:
        """End the child: it exits at once at the end of its input."""
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - a forked process still holds its input open
            self.proc.kill()
            self.proc.wait()


_PROCESS: _TokenizerProcess | None = None
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # envbench's parent


def _start_process() -> None:
    global _PROCESS
    if _PROCESS is None:
        _PROCESS = _TokenizerProcess()


def _stop_process() -> None:
    global _PROCESS
    if _PROCESS is not None:
        _PROCESS.close()
        _PROCESS = None


def _store_special() -> frozenset[str]:
    """spaCy's letter-only special cases, from the tokenizer process when it runs."""
    if _PROCESS is None:
        return _special_words()
    if _PROCESS.special is None:
        _PROCESS.special = frozenset(_PROCESS.ask(None))
    return _PROCESS.special


def _spacy_words(words: list[str]) -> list[list[str]]:
    """spaCy's tokens of each word (whitespace tokens dropped), from the tokenizer process when it runs."""
    if not words:
        return []
    if _PROCESS is not None:
        return _PROCESS.ask(words)  # type: ignore[no-any-return]
    return [[t.text for t in doc if not t.is_space] for doc in _tokenizer().pipe(words)]


def name_tokenizer() -> NameTokenizer:
    """What an ingest needs to fill ``name_tokens`` with :func:`tokenize`'s tokens of the names that
    are not plain, and to record spaCy's special cases that tell the two apart (``envbench
    ingest-dump`` passes it). Nothing is loaded until the ingest asks: its warm_up starts spaCy in a
    process of its own as the ingest starts, which answers until close (without warm_up, spaCy loads
    here)."""
    return NameTokenizer(tokenizer_version(), _tokens_to_store,
                         facts=lambda: {"special_words": sorted(_store_special())},
                         warm_up=_start_process, close=_stop_process)


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
