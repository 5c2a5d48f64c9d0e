"""New names that read as common words (``rename.common_words``), from sentences of the Re-DocRED test lock."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from envbench.rename.candidates import ItemNames
from envbench.rename.common_words import (
    ends_common,
    new_name_reads_common,
    opens_article,
    reads_common,
    written_common,
)


def _doc(sents: list[str], mentions: list[tuple[str, int, int]]) -> dict:
    tokens = [s.split() for s in sents]
    ents = [[{"name": name, "sent_id": si, "pos": [a, a + len(name.split())], "type": "ORG"}]
            for name, si, a in mentions]
    return {"title": "T", "sents": tokens, "vertexSet": ents, "labels": []}


def test_written_common_counts_lower_case_words_outside_mentions() -> None:
    doc = _doc(["Rare is a games company ; rare games sell .", "the Prize went to prize winners ."],
               [("Rare", 0, 0), ("Prize", 1, 1)])
    common = written_common([doc])
    assert {"rare", "prize", "games", "sell", "winners"} <= common
    # capitalised words, punctuation and the words inside a mention are not counted as common
    lower_mention = _doc(["the civil rights movement began ."], [("civil rights movement", 0, 1)])
    assert "civil" not in written_common([lower_mention])
    assert "began" in written_common([lower_mention])


def test_a_one_word_name_that_is_a_common_word_reads_common() -> None:
    # "based on the Marvel comic book" had read "based on the Rare comic book"; "for which he was awarded
    # the VC" read "awarded the Prize" (salt fresh1208a)
    common = frozenset({"rare", "prize", "wall", "university", "un"})
    assert reads_common("Rare", common) and reads_common("Prize", common)
    assert not reads_common("Marvel", common)  # not written in lower case
    assert not reads_common("UN", common)  # a run of capitals is read as letters
    assert not reads_common("Rare Ltd", common)  # more than one word
    assert not reads_common("rare", common)  # a common noun is ``written_lower``'s to judge
    assert new_name_reads_common("Marvel", "Rare", common, "ORG")
    assert not new_name_reads_common("Orange", "Rare", common | {"orange"}, "ORG")  # the old name was one too
    assert new_name_reads_common("Kahn", "Wall", common, "PER")


def test_a_name_ending_in_another_lower_case_word_reads_common() -> None:
    # "It shares borders with Shinkafi in Zamfara State" had read "Shinkafi in Delta Amacuro states"
    assert ends_common("Zamfara State", "Delta Amacuro states")
    assert ends_common("Umbria", "PAL region")
    assert not ends_common("Big Black River", "Dadhumati river")  # the same word, in another case
    assert not ends_common("Bach festivals", "Newman festivals")  # the old name ends in one too
    assert not ends_common("Zamfara State", "Delta Amacuro State")
    assert new_name_reads_common("Zamfara State", "Delta Amacuro states", frozenset(), "LOC")
    # a work's title may end in a lower-case word ("Portugal in my heart"): not judged for MISC
    assert not new_name_reads_common("Billboard Hot 100", "Paraguay in my heart", frozenset(), "MISC")


def test_a_person_takes_no_name_opening_with_an_article() -> None:
    # "Drossinis , along with Costis Palamas and Nikos Kampas co - founded the New Athenian School" had read
    # "Barattolo , along with The Corporal and Henry S. Taylor co - founded ..." (salt fresh1208a)
    assert opens_article("The Corporal") and not opens_article("Theodore Roosevelt") and not opens_article("The")
    assert new_name_reads_common("Costis Palamas", "The Corporal", frozenset(), "PER")
    assert not new_name_reads_common("The Edge", "The Corporal", frozenset(), "PER")
    assert not new_name_reads_common("Costis Palamas", "The Corporal", frozenset(), "ORG")


@given(st.text(alphabet="abcdefgXYZ ", min_size=1, max_size=20))
def test_a_name_never_reads_common_against_itself(name: str) -> None:
    common = frozenset({"abc", "fed"})
    for coarse in ("PER", "LOC", "ORG", "MISC"):
        assert not new_name_reads_common(name, name, common, coarse)


def test_generate_refuses_a_common_word_for_a_name_and_takes_the_next_candidate() -> None:
    # the engine: "the Marvel comic book" takes the next candidate, not "Rare"; with no usage, "Rare" stands
    from tests.envbench.rename.test_built_on import _doc as built_doc
    from tests.envbench.rename.test_built_on import _names, _settle

    doc = built_doc(["It is based on the Marvel comic book of the same name ."], [[("Marvel", 0, "ORG")]])
    items = {0: [("Q7", ItemNames("Rare", ())), ("Q8", ItemNames("Capcom", ()))]}
    assert _names(_settle(doc, ["Q1"], items, common_words=frozenset({"rare"})), 0) == ["Capcom"]
    assert _names(_settle(doc, ["Q1"], items), 0) == ["Rare"]
    doc = built_doc(["It shares borders with Shinkafi in Zamfara State ."], [[("Zamfara State", 0, "LOC")]])
    items = {0: [("Q7", ItemNames("Delta Amacuro states", ())), ("Q8", ItemNames("Kano State", ()))]}
    assert _names(_settle(doc, ["Q1"], items, common_words=frozenset({"rare"})), 0) == ["Kano State"]
