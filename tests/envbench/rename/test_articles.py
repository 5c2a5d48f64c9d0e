"""Indefinite-article agreement: the rule on examples, and apply_plan changing one token, never the count."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envbench.rename.articles import agree, article_for, bare_compass
from envbench.rename.substitute import NewName, apply_plan
from tests.envbench.index_fixture import mention


@pytest.mark.parametrize(("word", "article"), [
    ("Italian", "an"), ("Danish", "a"), ("American", "an"), ("British", "a"), ("European", "a"),
    ("Ukrainian", "a"), ("Uruguayan", "a"), ("United", "a"), ("Uzbek", "an"), ("Urdu", "an"),
    ("uninhabited", "an"), ("one-off", "a"), ("hour", "an"), ("honorary", "an"), ("house", "a"),
    ("FBI", "an"), ("NBA", "an"), ("UK", "a"), ("X-ray", "an"), ("R&B", "an"), ("NATO", "a"), ("ESPN", "an"),
    ("8-track", "an"), ("11th", "an"), ("18-year-old", "an"), ("1800", "an"), ("7", "a"), ("180", "a"),
    ("110", "a"), ("Yemeni", "a"), ("“Italian", "an"), ("(", None), ("", None),
    # capitals that cannot be said as one syllable are spelled out ("an SABC" was renamed "an Dollar General")
    ("SABC", "an"), ("HSBC", "an"), ("MSRP", "an"), ("NSDAP", "an"), ("LGBT", "an"), ("NYPD", "an"),
    ("RSPCA", "an"), ("NC-17", "an"), ("US-based", "a"),
    # one syllable, or two vowels, is a word; capitals from U say "yoo"
    ("SWAT", "a"), ("STEM", "a"), ("MARC", "a"), ("APEC", "an"), ("FIFA", "a"), ("UNESCO", "a"), ("UEFA", "a"),
    ("Uber", "an"),
])
def test_article_for(word: str, article: str | None) -> None:
    assert article_for(word) == article


def test_article_for_agrees_with_redocred(shared: Any) -> None:
    """The rule against the corpus's own "a"/"an" + word pairs (dev + test): 4,288 of 4,302 on 2026-12-01;
    the rest are the corpus's slips ("a affiliate", "an eunuch"), "an historical" and German "an der"."""
    import json

    agree = total = 0
    for split in ("dev_revised.json", "test_revised.json"):
        for doc in json.loads(shared("re-docred", split).read_text()):
            for sent in doc["sents"]:
                for tok, nxt in zip(sent, sent[1:], strict=False):
                    if tok.casefold() in ("a", "an") and (want := article_for(nxt)) is not None:
                        total += 1
                        agree += want == tok.casefold()
    assert total > 4000
    assert agree / total >= 0.996, f"{agree} of {total}"


def test_agree_changes_only_an_agreeing_article_and_keeps_its_case() -> None:
    assert agree("a", "British", "Italian") == "an"
    assert agree("A", "Danish", "Italian") == "An"
    assert agree("an", "American", "Danish") == "a"
    assert agree("An", "Italian", "Danish") == "A"
    assert agree("AN", "Italian", "Danish") == "A"
    assert agree("the", "British", "Italian") == "the"  # not an indefinite article
    assert agree("an", "British", "Danish") == "an"  # the source disagreed with the rule: left as written
    assert agree("a", "British", "Danish") == "a"


def _doc(article: str, old: list[str]) -> dict[str, Any]:
    n = len(old)
    sent = ["He", "is", article, *old, "soldier", "and", article, "farmer", "."]
    return {"title": "T", "sents": [sent],
            "vertexSet": [[mention(" ".join(old), 0, [3, 3 + n], "LOC")],
                          [mention("farmer", 0, [6 + n, 7 + n], "MISC")]],
            "labels": []}


def test_apply_plan_makes_the_article_agree() -> None:
    doc = _doc("a", ["British"])
    out = apply_plan(doc, {0: {"British": NewName("Italian", ("Italian",))}}, "T-1")
    assert out["sents"][0] == ["He", "is", "an", "Italian", "soldier", "and", "a", "farmer", "."]
    assert out["vertexSet"][0][0]["pos"] == [3, 4]
    # an article that is part of a mention is that mention's name: never changed
    doc["vertexSet"][1] = [mention("a", 0, [2, 3], "MISC")]
    out = apply_plan(doc, {0: {"British": NewName("Italian", ("Italian",))}}, "T-1")
    assert out["sents"][0][2] == "a"


_WORDS = st.sampled_from(["Italian", "Danish", "European", "hour", "FBI", "UK", "8", "7", "Uzbek", "British",
                          "American", "Ohio", "X-ray"])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["a", "an", "A", "An", "AN", "the"]), st.lists(_WORDS, min_size=1, max_size=3),
       st.lists(_WORDS, min_size=1, max_size=3))
def test_apply_plan_changes_at_most_the_article_and_never_the_count(article: str, old: list[str],
                                                                    new: list[str]) -> None:
    doc = _doc(article, old)
    out = apply_plan(doc, {0: {" ".join(old): NewName(" ".join(new), tuple(new))}}, "T-1")
    sent, src = out["sents"][0], doc["sents"][0]
    assert len(sent) == len(src) - len(old) + len(new)
    assert sent[3:3 + len(new)] == new and sent[:2] == src[:2] and sent[3 + len(new):] == src[3 + len(old):]
    got = sent[2]
    if article.casefold() not in ("a", "an") or article_for(old[0]) != article.casefold():
        assert got == article  # not an article, or the source did not agree with the rule: as written
    else:
        assert got.casefold() == article_for(new[0])
        assert got[0].isupper() == article[0].isupper()


def test_which_country_names_take_the() -> None:
    from envbench.rename.articles import bare_country, takes_the

    assert [takes_the(n) for n in ("Netherlands", "Bahamas", "United Kingdom", "Czech Republic", "Gambia",
                                   "Isle of Man", "Philippines")] == [True] * 7
    assert [takes_the(n) for n in ("UK", "U.S.", "USSR", "UAE", "P.R.C.")] == [True] * 5  # "in the USSR"
    assert not takes_the("NSW") and not takes_the("Uk")
    assert [takes_the(n) for n in ("Kuwait", "Cyprus", "Laos", "Honduras", "French Guiana")] == [False] * 5
    assert bare_country("Kuwait") and bare_country("Myanmar") and bare_country("Barbados") and bare_country("Holland")
    assert not bare_country("Netherlands") and not bare_country("United States")
    assert not bare_country("Paris") and not bare_country("Dillon")  # not countries: no judgement


@pytest.mark.parametrize(("old", "new", "coarse", "want"), [
    ("the United Kingdom", "Mongol Empire", "LOC", "the Mongol Empire"),  # "as part of the United Kingdom"
    ("The United States", "United Arab Emirates", "LOC", "The United Arab Emirates"),  # its case kept
    ("the United States", "State of Qatar", "LOC", "the State of Qatar"),
    ("the UK", "Soviet Union", "LOC", "the Soviet Union"),
    ("the United States Naval Academy", "University of Tirana", "ORG", "the University of Tirana"),
    ("the United States", "Kuwait", "LOC", None),  # a country that goes without
    ("the Mississippi", "Limpopo River", "LOC", "the Limpopo River"),
    ("the Atlantic", "Lake Erie", "LOC", None),
    ("the Bronx", "Des Moines", "LOC", None),  # a plural ending, but no country
    ("the Naval Academy", "Trinity College", "ORG", None),
    ("the Capitol", "Republic Records", "ORG", None),  # an organisation that opens like a country
    ("the US", "The Hague", "LOC", None),  # an article of its own already
    ("United States", "Mongol Empire", "LOC", None),  # no "the" to keep
    ("the World War II", "Korean War", "MISC", "the Korean War"),  # an event that takes it keeps it
    ("the Potsdam Agreement", "Treaty of Ghent", "MISC", "the Treaty of Ghent"),
    ("the World War II", "World War I", "MISC", None),
    ("the National Assembly", "Ohio General Assembly", "ORG", "the Ohio General Assembly"),  # a body's last word
])
def test_keep_the_keeps_the_article_a_new_name_needs(old: str, new: str, coarse: str, want: str | None) -> None:
    from envbench.rename.articles import keep_the

    assert keep_the(old, new, coarse) == want


@pytest.mark.parametrize(("prev", "old", "new", "coarse", "want"), [
    ("in", "Italy", "United Arab Emirates", "LOC", "the"),  # "held in the United Arab Emirates"
    (None, "Italy", "State of Israel", "LOC", "The"),  # a sentence's first word
    (",", "Ohio", "Midlands", "LOC", "the"),
    ("at", "Yale", "University of Wyoming", "ORG", "the"),
    ("a", "Italy", "United Arab Emirates", "LOC", None),  # "a United States Representative"
    ("'s", "NASA", "Group of Progressive Artists", "ORG", None),
    ("northern", "Italy", "Principality of Transylvania", "LOC", None),
    ("in", "Italy", "Kuwait", "LOC", None),
    ("in", "Britain", "USSR", "LOC", "the"),  # "made in the USSR", not "made in USSR"
    ("from", "Italy", "U.A.E.", "LOC", "the"),
    ("a", "Britain", "UK", "LOC", None),  # "a UK singles chart": a modifier
    ("in", "Paris", "NSW", "LOC", None),  # no country
    ("in", "Europe", "Antarctic", "LOC", "the"),  # "all over the Antarctic", not "all over Antarctic"
    ("of", "Kentucky River", "Limpopo River", "LOC", "the"),  # "in the vicinity of the Limpopo River"
    (None, "Ohio River", "Ural Mountains", "LOC", "The"),
    ("and", "Atlantic", "South Pacific", "LOC", "the"),
    ("of", "Cove Creek", "Lake Erie", "LOC", None),  # lakes and creeks go without
    ("in", "Cove Creek", "Mill Creek", "LOC", None),
    ("in", "Paris", "Grand Rapids", "LOC", None),
    ("and", "Capitol Records", "Republic Records", "ORG", None),
    ("in", "the Bronx", "Midlands", "LOC", None),  # the old name's own article: keep_the's case
    ("in", "Italy", "United Arab Emirates", "MISC", None),
    # "operations in ... , including Algeria , ..." had read "including State of Israel" (salt third1207s68)
    ("including", "Qatar", "State of Israel", "LOC", "the"),
])
def test_the_before_a_name_that_needs_it_where_a_noun_phrase_starts(prev: str | None, old: str, new: str,
                                                                      coarse: str, want: str | None) -> None:
    from envbench.rename.articles import the_before

    assert the_before(prev, old, new, coarse) == want


@pytest.mark.parametrize(("before", "after", "new", "want"), [
    # "The class served extensively in World War II ," had read "in Russo - Japanese War ,"
    ("in", ",", "Russo - Japanese War", "the"), ("of", "he", "Kurukshetra War", "the"),
    (None, "was", "Korean War", "The"), ("to", ".", "Cuban Missile Crisis", "the"),
    ("for", "soldier", "Korean War", None),  # "named for World War II soldier X": a modifier
    (None, "began", "Korean War", None),  # a verb is not told from a noun it would modify: left as it was
    ("in", ",", "World War I", None), ("in", ",", "Operation Barbarossa", None),
    ("the", ",", "Korean War", None),  # the text's own "the" stands
    # "After World War II the region was placed under Polish administration" had read "After First War of
    # Scottish Independence the region": the head before "of" is the event's, and "after" opens a noun phrase
    ("After", "the", "First War of Scottish Independence", "the"), ("during", ",", "Battle of Hastings", "the"),
    ("by", "under", "Treaty of Ghent", "the"), ("at", ".", "Yalta Conference", "the"),
    ("in", ",", "Pirates of the Caribbean", None), ("After", "the", "Operation Barbarossa", None),
])
def test_an_event_that_takes_the_takes_it_where_a_noun_phrase_starts(before: str | None, after: str, new: str,
                                                                     want: str | None) -> None:
    from envbench.rename.articles import the_before

    assert the_before(before, "World War II", new, "MISC", after) == want
    assert the_before(before, "the World War II", new, "MISC", after) is None  # an article of its own


def test_apply_plan_writes_an_events_article_into_the_renamed_mention() -> None:
    sent = "The class served extensively in World War II , and five of the class were lost in the war .".split()
    doc = {"title": "Sims", "sents": [sent], "vertexSet": [[mention("World War II", 0, [5, 8], "MISC")]],
           "labels": []}
    out = apply_plan(doc, {0: {"World War II": NewName("Russo - Japanese War", ("Russo", "-", "Japanese", "War"))}},
                     "Sims-1")
    assert " ".join(out["sents"][0]).startswith("The class served extensively in the Russo - Japanese War , and")
    assert out["vertexSet"][0][0]["name"] == "the Russo - Japanese War" and out["vertexSet"][0][0]["pos"] == [5, 10]


def test_apply_plan_writes_the_article_into_the_renamed_mention() -> None:
    doc = {"title": "T", "sents": [["It", "was", "held", "in", "Italy", "."], ["Italy", "won", "."]],
           "vertexSet": [[mention("Italy", 0, [4, 5], "LOC"), mention("Italy", 1, [0, 1], "LOC")]], "labels": []}
    new = NewName("United Arab Emirates", ("United", "Arab", "Emirates"))
    out = apply_plan(doc, {0: {"Italy": new}}, "T-1")
    assert out["sents"] == [["It", "was", "held", "in", "the", "United", "Arab", "Emirates", "."],
                            ["The", "United", "Arab", "Emirates", "won", "."]]
    assert [(m["name"], m["pos"]) for m in out["vertexSet"][0]] == [("the United Arab Emirates", [4, 8]),
                                                                   ("The United Arab Emirates", [0, 4])]


@given(st.lists(st.sampled_from(["Kuwait", "Empire", "of", "University", "the", "The", "Union", "X", "Hague"]),
                min_size=1, max_size=4), st.sampled_from(["LOC", "ORG"]))
def test_keep_the_only_ever_prefixes_the_old_article(words: list[str], coarse: str) -> None:
    from envbench.rename.articles import keep_the

    new = " ".join(words)
    for old in ("the United Kingdom", "The UK", "United Kingdom"):
        got = keep_the(old, new, coarse)
        assert got is None or (got == f"{old.split()[0]} {new}" and old.split()[0].casefold() == "the"
                               and words[0].casefold() != "the")


def test_which_names_read_wrong_after_the_as_a_noun_phrase_of_their_own() -> None:
    from envbench.rename.articles import reads_bare

    # "an officer in the SpaceX who", "from the Toyota ."; a country that goes without, whatever its type
    assert reads_bare("Toyota", "ORG") and reads_bare("SpaceX", "ORG") and reads_bare("Kuwait", "LOC")
    assert not reads_bare("BBC", "ORG") and not reads_bare("Beatles", "ORG")  # an acronym, a plural
    assert not reads_bare("Boston Celtics", "ORG") and not reads_bare("Toyota", "MISC")
    assert not reads_bare("Netherlands", "LOC") and not reads_bare("Paris", "LOC")


def test_a_compass_word_alone_is_no_place_name() -> None:
    assert bare_compass("North") and bare_compass("Eastern") and bare_compass("the South") and bare_compass("WEST")
    assert not bare_compass("North Korea") and not bare_compass("Eastern Cape") and not bare_compass("Northumbria")


def test_a_possessive_apostrophe_agrees_with_the_new_name() -> None:
    # "critics praising Nas ' lyricism" had read "critics praising Caputto ' lyricism"
    from envbench.rename.articles import possessive

    assert possessive("'", "Nas", "Caputto") == "'s" and possessive("’", "Nas", "Caputto") == "’s"
    assert possessive("'", "Nas", "Jones") == "'" and possessive("'", "Bloom", "Caputto") == "'"
    assert possessive("'s", "Nas", "Caputto") == "'s"
    doc = {"title": "T", "sents": [["critics", "praised", "Nas", "'", "lyricism", "and", "the", "song", "'", "Hits",
                                    "'", "."]],
           "vertexSet": [[{"name": "Nas", "sent_id": 0, "pos": [2, 3], "type": "PER"}],
                         [{"name": "Hits", "sent_id": 0, "pos": [9, 10], "type": "MISC"}]], "labels": []}
    out = apply_plan(doc, {0: {"Nas": NewName("Caputto", ("Caputto",))}, 1: {"Hits": NewName("Blue", ("Blue",))}}, "T-1")
    assert out["sents"][0] == ["critics", "praised", "Caputto", "'s", "lyricism", "and", "the", "song", "'", "Blue",
                               "'", "."]  # the closing quote after "Hits" stays


def _doc_of(sents: list[str], names: list[str]) -> dict[str, Any]:
    """Sentences written with spaces; each name a one-mention entity at its first place in its sentence."""
    words = [s.split() for s in sents]
    vs = []
    for nm in names:
        toks = nm.split()
        sid, a = next((i, j) for i, w in enumerate(words) for j in range(len(w)) if w[j:j + len(toks)] == toks)
        vs.append([mention(nm, sid, [a, a + len(toks)], "LOC")])
    return {"title": "T", "sents": words, "vertexSet": vs, "labels": []}


def test_written_bare_reads_the_documents_usage() -> None:
    from envbench.rename.articles import written_bare

    docs = [_doc_of(["He was born in Graz .", "Stanford University is near Palo Alto ."],
                    ["Graz", "Stanford University", "Palo Alto"]),
            # written once with "the" outside the mention: never bare, whatever else the corpus writes
            _doc_of(["It flows into the Lavaca .", "in Lavaca , as"], ["Lavaca", "Lavaca"]),
            # a "the" that is part of another mention does not count as the article of this one
            _doc_of(["They played in The Paris Band Park ."], ["The Paris Band Park", "Paris Band Park"]),
            # a modifier after a determiner other than "the" is no noun phrase's start: not counted
            _doc_of(["a Toledo company ."], ["Toledo"]),
            # a name opening with an article is never judged
            _doc_of(["in The Hague ."], ["The Hague"])]
    assert written_bare(docs) == frozenset({"Graz", "Stanford University", "Palo Alto"})


@given(st.lists(st.sampled_from(["in", "the", "of", "a", ",", "Graz", "Ohio", "went"]), min_size=1, max_size=12))
@settings(max_examples=200, deadline=None)
def test_written_bare_never_holds_a_name_written_after_the(words: list[str]) -> None:
    # whatever the sentence, a name that follows an uncovered "the" somewhere is not bare
    from envbench.rename.articles import written_bare

    vs = [[mention(w, 0, [i, i + 1], "LOC")] for i, w in enumerate(words) if w[0].isupper()]
    got = written_bare([{"title": "T", "sents": [words], "vertexSet": vs, "labels": []}])
    after_the = {w for i, w in enumerate(words) if i > 0 and words[i - 1] == "the"}
    assert not got & after_the


@pytest.mark.parametrize(("before", "after", "new", "want"), [
    # "According to the United States Census Bureau" had read "According to Rural Electrification Administration"
    # (salt eighth1207s68, where the "the" was the old name's own)
    ("to", ",", "Rural Electrification Administration", "the"), ("of", "and", "Ohio General Assembly", "the"),
    ("with", ".", "US Navy", "the"), (None, "was", "Hammer Museum", "The"),
    ("in", "politics", "Labour Party", None),  # a modifier of the noun after it
    ("with", ".", "Republic Records", None), ("the", ".", "US Navy", None),  # no body's word; the text's own "the"
])
def test_a_body_named_by_its_kind_takes_the_where_its_phrase_ends(before: str | None, after: str, new: str,
                                                                 want: str | None) -> None:
    from envbench.rename.articles import the_before

    assert the_before(before, "Yale", new, "ORG", after) == want
