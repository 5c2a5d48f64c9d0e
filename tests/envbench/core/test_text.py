from __future__ import annotations

import json
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from envbench.core.seeding import derive_seed, stable_hash_hex, stable_shuffle
from envbench.core.text import _tokenizer, tokenize
from tests.conftest import shared_path
from wikidata_index.names import fold


def test_tokenize_splits_punctuation_like_docred() -> None:
    assert tokenize('Wilfried "Willi" Schneider (born 13 March 1963 in Mediaș, Transylvania)') == [
        "Wilfried", '"', "Willi", '"', "Schneider", "(", "born", "13", "March", "1963", "in", "Mediaș",
        ",", "Transylvania", ")",
    ]
    assert tokenize("the U.S. Army's 1,250.5 men") == ["the", "U.S.", "Army", "'s", "1,250.5", "men"]
    assert tokenize("Jay-Z") == ["Jay", "-", "Z"]  # DocRED splits hyphens
    # the cases the regular expression got wrong (issue 13): abbreviations, initials, alphanumerics
    assert tokenize("Mr. James L. Brooks") == ["Mr.", "James", "L.", "Brooks"]
    assert tokenize("Nintendo 3DS and ADO.NET") == ["Nintendo", "3DS", "and", "ADO.NET"]
    assert tokenize("Jean-Baptiste") == ["Jean", "-", "Baptiste"]
    assert tokenize("Bob\xa0Carr") == ["Bob", "Carr"]  # a new name never brings a whitespace token
    # a suffix written onto a number stays on it, as in DocRED; units do not
    assert tokenize("the 21st century, 1990s, 3rd, 7%, 10km") == [
        "the", "21st", "century", ",", "1990s", ",", "3rd", ",", "7", "%", ",", "10", "km"]


@settings(deadline=None)  # the first call loads spaCy
@given(st.text(max_size=60))
def test_tokenize_loses_no_visible_character(text: str) -> None:
    assert "".join(tokenize(text)) == "".join(text.split())


def _spacy_tokens(text: str) -> list[str]:
    return [t.text for t in _tokenizer()(text) if not t.is_space]


def test_plain_word_shortcut_keeps_spacys_special_cases() -> None:
    # words of letters only skip spaCy, except its special cases, in any case and context
    assert tokenize("cannot") == ["can", "not"] and tokenize("Dont") == ["Do", "nt"]
    cases = [f"{pre}{v}{post}" for w in _tokenizer().rules for v in {w, w.lower(), w.upper(), w.title()}
             for pre, post in (("", ""), ("New ", ""), ("", " York"), ("the ", " of"))]
    assert [c for c in cases if tokenize(c) != _spacy_tokens(c)] == []


@settings(deadline=None)
@given(st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\u00e9 -.'", min_size=1,
                        max_size=10), min_size=1, max_size=5))
def test_tokenize_equals_spacy_on_word_like_text(words: list[str]) -> None:
    text = " ".join(words)
    assert tokenize(text) == _spacy_tokens(text)


def test_the_tokenizer_loads_without_torch_and_torch_still_imports_after() -> None:
    code = ("import sys; from envbench.core.text import tokenize; assert tokenize('Mr. X') == ['Mr.', 'X']; "
            "print('torch' in sys.modules); import importlib.util; print(importlib.util.find_spec('torch') is not None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "False"  # spaCy's import did not pull torch in
    if out[1] == "True":  # torch installed: it imports normally afterwards
        after = "from envbench.core.text import tokenize; tokenize('Mr. X'); import torch; print(torch.zeros(2).sum().item())"
        assert subprocess.run([sys.executable, "-c", after], capture_output=True, text=True,
                              check=True).stdout.strip() == "0.0"


def test_fold_strips_case_and_diacritics() -> None:
    assert fold("  Mediaș ") == fold("MEDIAS") == "medias"
    assert fold("AC/DC") != fold("ACDC")


def test_seeds_are_stable_across_processes() -> None:
    # Fixed values: a change here means every generated benchmark changes.
    assert derive_seed(1, "Title", 3) == derive_seed(1, "Title", 3)
    assert derive_seed(1, "ab", "c") != derive_seed(1, "a", "bc")
    assert stable_hash_hex("x") == "9dd4e461268c8034f5c8564e155c67a6"
    assert stable_shuffle([1, 2, 3, 4], "k") == stable_shuffle([1, 2, 3, 4], "k")
    assert sorted(stable_shuffle(list(range(10)), "k")) == list(range(10))


def test_tokenize_reproduces_the_corpus_tokens_of_re_docred_names() -> None:
    """Issue 13's measure: distinct PER/ORG/LOC/MISC mention token sequences of Re-DocRED dev + test,
    tokenised from their mention names; at least 99.5% must come out exactly as the corpus has them."""
    seqs: dict[tuple[str, ...], str] = {}
    for split in ("dev", "test"):
        for doc in json.loads(shared_path("re-docred", f"{split}_revised.json").read_text()):
            for ent in doc["vertexSet"]:
                for m in ent:
                    if m["type"] in ("PER", "ORG", "LOC", "MISC"):
                        toks = tuple(doc["sents"][m["sent_id"]][m["pos"][0]:m["pos"][1]])
                        seqs.setdefault(toks, m["name"])
    same = sum(tuple(tokenize(name)) == toks for toks, name in seqs.items())
    assert len(seqs) == 12630
    assert same / len(seqs) >= 0.995, f"{same} of {len(seqs)}"


def _re_docred_names() -> list[str]:
    names = {m["name"] for split in ("dev", "test")
             for doc in json.loads(shared_path("re-docred", f"{split}_revised.json").read_text())
             for ent in doc["vertexSet"] for m in ent}
    return sorted(" ".join(n.split()) for n in names)


_REMEMBER_CHILD = """
import json, sys
from envbench.core.text import remember_tokens, tokenize, use_stored_tokens
given = json.load(sys.stdin)
assert use_stored_tokens(given["facts"])
remember_tokens(given["stored"])
print(json.dumps({"tokens": [tokenize(n) for n in given["names"]], "spacy": "spacy" in sys.modules}))
"""


def test_stored_tokens_are_tokenize_s_and_answer_without_spacy() -> None:
    """What an ingest stores (name_tokenizer) over the real names of Re-DocRED and spaCy's special
    cases: every name that is not plain, with tokenize's tokens; a name not stored splits at its
    spaces. Given the recorded facts and the stored rows, every name tokenises the same in a fresh
    process that never loads spaCy; with another tokenizer version the facts are refused."""
    from envbench.core.text import _plain_words, name_tokenizer, tokenizer_version, use_stored_tokens

    specials = [f"{w} Smith" for w in sorted(_tokenizer().rules) if w.isalpha()]
    names = _re_docred_names() + specials
    tok = name_tokenizer()
    assert tok.version == tokenizer_version() and tok.version.startswith("spacy 3.")
    stored = tok.tokenize(names)
    assert all(s is None or s == tokenize(n) for n, s in zip(names, stored))
    assert all(tokenize(n) == n.split(" ") for n, s in zip(names, stored) if s is None)
    assert all(s is not None for s in stored[-len(specials):])  # special cases are never taken as plain
    n_stored = sum(s is not None for s in stored)
    assert n_stored > 3000 and len(names) - n_stored > 3000  # both kinds, many times (29% stored on 2026-12-01)
    assert [_plain_words(n) is None for n in names] == [s is not None for s in stored]
    facts = tok.record()
    assert not use_stored_tokens({**facts, "tokenizer": "spacy 0.0 blank en"}) and not use_stored_tokens({})
    assert not use_stored_tokens({**facts, "special_words": "cannot"})
    assert not use_stored_tokens({**facts, "special_words": [1, 2]})
    given = {"facts": facts, "names": names, "stored": [(n, s) for n, s in zip(names, stored) if s is not None]}
    got = json.loads(subprocess.run([sys.executable, "-c", _REMEMBER_CHILD], input=json.dumps(given),
                                    capture_output=True, text=True, check=True).stdout)
    assert got["spacy"] is False
    assert got["tokens"] == [tokenize(n) for n in names]


def test_stored_tokens_are_spacy_s_of_the_whole_name() -> None:
    """name_tokenizer tokenises each distinct word once and joins a name's words' tokens: that equals
    spaCy on the whole name for Re-DocRED's names and five-token phrases of its sentences, for every
    special case next to others and among plain words, and with the word cache emptied midway."""
    import envbench.core.text as text

    rules = sorted(_tokenizer().rules)
    phrases = {" ".join(" ".join(s[i:i + 5]).split()) for split in ("dev", "test")
               for doc in json.loads(shared_path("re-docred", f"{split}_revised.json").read_text())
               for s in doc["sents"] for i in range(0, max(1, len(s) - 4), 7)}
    names = sorted(set(_re_docred_names()) | phrases | {" ".join(f"A {k} {k} B".split()) for k in rules}) + [""]
    stored = text.name_tokenizer().tokenize(names)
    assert sum(s is not None for s in stored) > 10000
    assert all(s is None or s == _spacy_tokens(n) for n, s in zip(names, stored))
    text._WORD_TOKENS.clear()
    old = text.WORD_CACHE
    text.WORD_CACHE = 50  # smaller than one batch's words: emptied, then filled again
    try:
        assert text.name_tokenizer().tokenize(names[:3000]) == stored[:3000]
    finally:
        text.WORD_CACHE = old


def test_the_tokenizer_process_answers_as_spacy_here() -> None:
    """After warm_up, spaCy runs in a child process (this one loads nothing new): the same tokens and
    special words as in this process; close ends the child, and later calls tokenise here again."""
    import envbench.core.text as text

    names = ["St. Kitts", "Plain Name", "Mary J. Blige", "Jean-Baptiste (born 1963)", "cannot Smith", ""]
    here = text.name_tokenizer().tokenize(names)
    tok = text.name_tokenizer()
    text._WORD_TOKENS.clear()
    assert tok.warm_up is not None and tok.close is not None
    tok.warm_up()
    try:
        proc = text._PROCESS
        assert proc is not None and proc.proc.poll() is None
        assert tok.tokenize(names) == here and here[1] is None and here[4] == ["can", "not", "Smith"]
        assert tok.record() == {"tokenizer": text.tokenizer_version(), "special_words": sorted(text._special_words())}
    finally:
        tok.close()
    assert text._PROCESS is None and proc.proc.wait(timeout=30) == 0


def test_same_case_follows_the_token_it_replaces() -> None:
    from envbench.core.text import same_case

    assert same_case("six", "Ten") == "Six" and same_case("six", "TEN") == "SIX" and same_case("six", "ten") == "six"
    assert same_case("an", "A") == "An"  # one capital letter is a capital, not all capitals
    assert same_case("Renaissance", "medieval") == "Renaissance"  # a proper name keeps its capital
    assert same_case("ancient", "") == "ancient"
