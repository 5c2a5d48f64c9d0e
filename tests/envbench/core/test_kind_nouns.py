"""The kind nouns beside a mention (``envbench.core.kind_nouns``), on the sentences issue 58 quotes."""

from __future__ import annotations

from typing import Any

import pytest

from envbench.core.kind_nouns import STRONG, document_kind_nouns, kind_nouns, word


def _doc(sentence: str, *mentions: str) -> dict[str, Any]:
    """A one-sentence document whose entities are the given mentions (each its first occurrence)."""
    toks = sentence.split()
    ents = []
    for m in mentions:
        ms = m.split()
        i = next(i for i in range(len(toks)) if toks[i:i + len(ms)] == ms)
        ents.append([{"name": m, "sent_id": 0, "pos": [i, i + len(ms)], "type": "MISC"}])
    return {"title": "T", "sents": [toks], "vertexSet": ents, "labels": []}


def _found(sentence: str, mention: str, *others: str) -> list[tuple[str, tuple[str, ...], bool]]:
    return [(k.pattern, k.words, k.negated) for k in kind_nouns(_doc(sentence, mention, *others), 0)]


# the sentences issue 58 quotes, each with the words a reader takes the mention's kind from
@pytest.mark.parametrize(("sentence", "mention", "others", "found"), [
    ("The second stage of the Earth launch vehicle was planned to have two versions , the Interplanetary "
     "spaceship for passengers and cargo and the ITS tanker to deliver propellants to Earth orbit .",
     "ITS", ("Earth",), [("after", ("tanker",), False)]),
    ("Sync Services includes an embedded SQL Server Compact database to store metadata about the "
     "synchronization relationships as well as about each sync attempt .",
     "SQL Server Compact", ("Sync Services",), [("after", ("database",), False)]),  # "embedded" is no noun
    ("He later on appeared in the 1984 horror movie A Nightmare on Elm Street as a cop and the 1987 science "
     "fiction movie The Hidden .", "The Hidden", ("A Nightmare on Elm Street",), [("before", ("fiction", "movie"), False)]),
    ("Starin 's Glen Island was a summer resort in the community of New Rochelle in Westchester County , "
     "New York , developed by shipping magnate and U.S.", "New York",
     ("Westchester County", "New Rochelle", "Starin 's Glen Island"), [("container", ("state",), False)]),
    ("The Reichskommissariat of Belgium and Northern France was a German civil administration ( "
     "Zivilverwaltung ) which governed German - occupied Belgium during World War II .",
     "Reichskommissariat of Belgium and Northern France", ("German", "Zivilverwaltung", "Belgium"),
     [("definition", ("civil", "administration"), False)]),  # the name "German" inside the phrase is skipped
    ("This led to the trial in which U.S. District Judge John E. Jones III found that intelligent design was "
     "not science , that it can not uncouple itself", "intelligent design", ("John E. Jones III",),
     [("predicate", ("science",), True)]),  # negated, and not the sentence's subject
])
def test_the_kind_nouns_of_the_issues_sentences(sentence: str, mention: str, others: tuple[str, ...],
                                                found: list[tuple[str, tuple[str, ...], bool]]) -> None:
    assert _found(sentence, mention, *others) == found


def test_a_bracket_after_the_subject_is_skipped_and_a_hyphened_modifier_is_no_head() -> None:
    assert _found("Intelligent design ( ID ) is a pseudoscientific argument for the existence of God .",
                  "Intelligent design") == [("definition", ("pseudoscientific", "argument"), False)]
    assert _found("Paradise Cracked is a cyberpunk single - player role - playing video game .",
                  "Paradise Cracked") == [("definition", ("cyberpunk", "player", "video", "game"), False)]


def test_of_names_the_kind_only_after_the_and_only_for_a_place_word() -> None:
    assert _found("It was part of the province of L'Aquila .", "L'Aquila") == [("of", ("province",), False)]
    assert _found("Reseda is a suburb of Los Angeles .", "Los Angeles", "Reseda") == []  # a part of it
    assert _found("Paris is the capital of France .", "France", "Paris") == []  # another thing


def test_after_a_name_the_noun_is_strong_only_where_an_article_opens_the_phrase() -> None:
    assert _found("It ran on Nokia 's Lumia devices built by Scalado .", "Lumia", "Nokia") == [
        ("after", ("device",), False)]
    assert _found("It ran on Lumia devices built by Scalado .", "Lumia") == [("modifier", ("device",), False)]
    assert "modifier" not in STRONG and "after" in STRONG
    # a noun that goes on ("New York state legislature") is no phrase's end
    assert _found("He sat in the New York state legislature .", "New York") == []


def test_a_comma_apposition_defines_the_subject_and_not_a_name_after_a_comma() -> None:
    assert _found("Cinema Verity , a British production company , made films .", "Cinema Verity") == [
        ("definition", ("production", "company"), False)]  # "British" is a name's word
    # "Venice , California , a neighborhood of Los Angeles" defines Venice, not California
    assert _found("Venice , California , a neighborhood of Los Angeles .", "California", "Venice") == []


def test_words_that_name_no_kind() -> None:
    assert [word(w) for w in ("movie", "Movie", "1987", "of", "including", "certified", "near", "part",
                              "northern", "building", "king", "ferries")] == [
        "movie", None, None, None, None, None, None, None, None, "building", "king", "ferry"]


def test_every_entity_of_a_document_at_once() -> None:
    doc = _doc("the 1987 science fiction movie The Hidden and the album Thriller .", "The Hidden", "Thriller")
    assert [[(k.pattern, k.words[-1]) for k in found] for found in document_kind_nouns(doc)] == [
        [("before", "movie")], [("before", "album")]]
