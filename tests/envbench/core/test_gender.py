"""The document-gender rule (envbench/core/gender.py) on hand-written sentences."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envbench.core.gender import (
    FEMALE,
    MALE,
    P21_FEMALE,
    P21_MALE,
    GenderEvidence,
    context_genders,
    decide,
    document_genders,
    first_name,
    first_name_genders,
    item_gender,
    name_gender,
    pronoun_class,
)


def doc(*sentences: str, people: dict[str, list[tuple[int, int, int]]],
        others: dict[str, list[tuple[int, int, int]]] | None = None) -> dict[str, Any]:
    """A document of space-separated sentences; ``people`` and ``others`` map a name to its mentions
    (sentence, start, end): PER entities first, in the given order, then LOC ones."""
    sents = [s.split() for s in sentences]
    ents = []
    for kind, group in (("PER", people), ("LOC", others or {})):
        for name, spans in group.items():
            ents.append([{"name": name, "sent_id": si, "pos": [a, b], "type": kind} for si, a, b in spans])
            for si, a, b in spans:
                assert " ".join(sents[si][a:b]) == name, (name, sents[si][a:b])
    return {"title": "t", "sents": sents, "vertexSet": ents, "labels": []}


def genders(d: dict[str, Any]) -> list[str | None]:
    found = document_genders(d)
    return [found[ei].gender for ei in sorted(found)]


def test_pronouns_after_the_only_person_of_a_sentence_and_in_the_sentences_after_it() -> None:
    d = doc("Anna Ricci studied in Rome , where she met nobody .", "Later she moved .", "Her son stayed .",
            people={"Anna Ricci": [(0, 0, 2)]}, others={"Rome": [(0, 4, 5)]})
    assert document_genders(d)[0] == GenderEvidence(male=0, female=3)
    assert genders(d) == [FEMALE]


def test_a_sentence_about_two_people_gives_no_pronoun_to_either() -> None:
    d = doc("Tom Ward met Ann Lee and she smiled .", people={"Tom Ward": [(0, 0, 2)], "Ann Lee": [(0, 3, 5)]})
    assert genders(d) == [None, None]
    # the person-less sentence after it speaks of the person opening it (its subject), if one does
    d = doc("Tom Ward met Ann Lee in Paris .", "He left soon .", people={"Tom Ward": [(0, 0, 2)], "Ann Lee": [(0, 3, 5)]},
            others={"Paris": [(0, 6, 7)]})
    assert genders(d) == [MALE, None]
    d = doc("In Paris , Tom Ward met Ann Lee .", "He left soon .", people={"Tom Ward": [(0, 3, 5)], "Ann Lee": [(0, 6, 8)]},
            others={"Paris": [(0, 1, 2)]})
    assert genders(d) == [None, None]


def test_pronouns_before_a_sentences_first_person_speak_of_the_person_carried() -> None:
    # "Betley was born in Plock . Later he was a student of Tadeusz Pruszkowski ."
    d = doc("Jan Betley was born in Plock .", "Later he was a student of Tadeusz Pruszkowski and she left .",
            people={"Jan Betley": [(0, 0, 2)], "Tadeusz Pruszkowski": [(1, 6, 8)]}, others={"Plock": [(0, 5, 6)]})
    assert document_genders(d)[0] == GenderEvidence(male=1, female=0)  # the "she" after a second person: nobody's
    assert genders(d) == [MALE, None]
    # a pronoun before the sole person's name in a sentence about the carried one: the carried one's
    d = doc("Tom Ward sailed .", "In 1990 he married Ann Lee .", "She was happy .",
            people={"Tom Ward": [(0, 0, 2)], "Ann Lee": [(1, 4, 6)]})
    assert document_genders(d)[0] == GenderEvidence(male=1, female=1)  # the "She" is Tom's still: no decision
    assert genders(d) == [None, None]
    # the next sentence about one of them alone speaks for that one
    d = doc("Tom Ward met Ann Lee .", "Ann Lee said she would stay .",
            people={"Tom Ward": [(0, 0, 2)], "Ann Lee": [(0, 3, 5), (1, 0, 2)]})
    assert genders(d) == [None, FEMALE]
    # a sentence naming the carried person beside another, opened by neither, goes on carrying it
    d = doc("Jade is a character .", "As a swap of Kitana , Jade made a debut .", "She has since returned .",
            people={"Jade": [(0, 0, 1), (1, 6, 7)], "Kitana": [(1, 4, 5)]})
    assert genders(d) == [FEMALE, None]
    # ... but not when the carried person is not among them
    d = doc("Jade is a character .", "As a swap of Kitana , Mia made a debut .", "She has since returned .",
            people={"Jade": [(0, 0, 1)], "Kitana": [(1, 4, 5)], "Mia": [(1, 6, 7)]})
    assert genders(d) == [None, None, None]


def test_a_sentence_gives_a_person_the_gender_of_its_first_pronoun_only() -> None:
    # "she bought him out": the "him" of a sentence that said "she" of Manon is someone else
    d = doc("Manon sent earrings with which she bought him out .", "She married him later .",
            people={"Manon": [(0, 0, 1)]})
    assert document_genders(d)[0] == GenderEvidence(male=0, female=2)
    assert genders(d) == [FEMALE]
    # each sentence starts afresh: "he" first in one, "she" first in another, is a conflict
    d = doc("Sam Cole wrote that he loved her .", "She thanked him .", people={"Sam Cole": [(0, 0, 2)]})
    assert document_genders(d)[0] == GenderEvidence(male=1, female=1)
    assert genders(d) == [None]


def test_a_surname_alone_shares_the_gender_of_the_one_longer_name_it_ends() -> None:
    # Re-DocRED split "Kerstin Thorborg" and "Thorborg": the one decided, the other not
    d = doc("Kerstin Thorborg was a singer .", "She sang in Vienna .", "Thorborg met Lauritz Melchior there .",
            people={"Kerstin Thorborg": [(0, 0, 2)], "Thorborg": [(2, 0, 1)], "Lauritz Melchior": [(2, 2, 4)]},
            others={"Vienna": [(1, 3, 4)]})
    assert document_genders(d)[1] == GenderEvidence(male=0, female=1)
    assert genders(d) == [FEMALE, FEMALE, None]
    # and the other way round: the surname decided, the full name not
    d = doc("Giacomo Casanova met Manon Balletti .", "Casanova left .", "He wrote .",
            people={"Giacomo Casanova": [(0, 0, 2)], "Manon Balletti": [(0, 3, 5)], "Casanova": [(1, 0, 1)]})
    assert genders(d) == [MALE, None, MALE]


def test_a_surname_shares_nothing_when_both_are_decided_or_a_third_has_it() -> None:
    # "Lisa Quenu" and her husband "Quenu" are two people
    d = doc("Lisa Quenu sold meat .", "She was rich .", "Quenu cooked .", "He was kind .",
            people={"Lisa Quenu": [(0, 0, 2)], "Quenu": [(2, 0, 1)]})
    assert genders(d) == [FEMALE, MALE]
    # "Ford" could be Tom's or Ann's
    d = doc("Tom Ford met Ann Ford .", "Ann Ford was an actress .", "Ford left .",
            people={"Tom Ford": [(0, 0, 2)], "Ann Ford": [(0, 3, 5), (1, 0, 2)], "Ford": [(2, 0, 1)]})
    assert genders(d) == [None, FEMALE, None]


def test_a_quoted_she_is_someone_speaking() -> None:
    d = doc('Tom Ward said " she is kind " .', people={"Tom Ward": [(0, 0, 2)]})
    assert genders(d) == [None]
    d = doc('Tom Ward said " she is kind " and he left .', people={"Tom Ward": [(0, 0, 2)]})
    assert document_genders(d)[0] == GenderEvidence(male=1, female=0)


def test_quoted_speech_that_names_one_person_speaks_of_it() -> None:
    # Re-DocRED dev: the spokesman is named first, so the sentence's rule gives Motlanthe nothing
    d = doc('The caucus leader KK Khumalo said : " Motlanthe will be the president , he will be the president . "',
            people={"KK Khumalo": [(0, 3, 5)], "Motlanthe": [(0, 8, 9)]})
    assert genders(d) == [None, MALE]
    # a quote that names two people, or whose pronoun comes before the name, gives nobody anything
    d = doc('Tom Ward said " Ann told Bo he is kind " .', people={"Tom Ward": [(0, 0, 2)], "Ann": [(0, 4, 5)],
                                                               "Bo": [(0, 6, 7)]})
    assert genders(d) == [None, None, None]
    d = doc('Tom Ward said " she met Ann " .', people={"Tom Ward": [(0, 0, 2)], "Ann": [(0, 6, 7)]})
    assert genders(d) == [None, None]


def test_his_before_the_name_is_not_read_and_makes_the_sentence_someone_elses() -> None:
    d = doc("In his youth , Tom Ward sailed .", people={"Tom Ward": [(0, 4, 6)]})
    assert genders(d) == [None]
    # "He also played Mateo": the pronoun before the name is the article's subject, not Mateo
    d = doc("He also played Mateo in 1999 , and his role grew .", "He left .", people={"Mateo": [(0, 3, 4)]})
    assert genders(d) == [None]


def test_a_list_of_names_gives_nobody_a_pronoun() -> None:
    d = doc("It stars Jane Fonda , Bruce Dern and Gig Young .", "She won .",
            people={"Jane Fonda": [(0, 2, 4)], "Bruce Dern": [(0, 5, 7)], "Gig Young": [(0, 8, 10)]})
    assert genders(d) == [None, None, None]


def test_gendered_nouns_beside_a_mention() -> None:
    # "her eldest son Edward VII": the noun right before the name; the "her", before Edward is named,
    # is the first-named Victoria's
    d = doc("Victoria died and the crown passed to her eldest son Edward VII .",
            people={"Victoria": [(0, 0, 1)], "Edward VII": [(0, 10, 12)]})
    assert genders(d) == [FEMALE, MALE]
    # after the second name nothing is the first one's: "Harrison ... with Ray Cooper as his co-producer"
    d = doc("Harrison recorded it with Ray Cooper as his co - producer .",
            people={"Harrison": [(0, 0, 1)], "Ray Cooper": [(0, 4, 6)]})
    assert genders(d) == [None, None]
    d = doc("It was produced by actress Joanna Lumley .", people={"Joanna Lumley": [(0, 5, 7)]})
    assert genders(d) == [FEMALE]
    d = doc("Rajasekhar 's wife , Jeevitha , acted .", people={"Rajasekhar": [(0, 0, 1)], "Jeevitha": [(0, 4, 5)]})
    assert genders(d) == [None, FEMALE]


def test_an_honorific_opening_the_name_and_a_predicate_noun() -> None:
    d = doc("Queen Victoria ruled .", people={"Queen Victoria": [(0, 0, 2)]})
    assert genders(d) == [FEMALE]
    d = doc("Jane Smith ( born 1950 ) is an American actress and singer .", people={"Jane Smith": [(0, 0, 2)]},
            others={"American": [(0, 8, 9)]})
    assert genders(d) == [FEMALE]
    d = doc("Edward , son of Victoria , ruled .", people={"Edward": [(0, 0, 1)], "Victoria": [(0, 4, 5)]})
    assert genders(d) == [MALE, None]
    # the phrase ends before the noun: "survived by his wife" is not what Tom is
    d = doc("Tom Ward was survived by a wife .", people={"Tom Ward": [(0, 0, 2)]})
    assert genders(d) == [None]
    # an affiliation and a place's "'s" before the apposition (Re-DocRED dev)
    d = doc("He was succeeded by Uma Bharti of the BJP , Madhya Pradesh 's only woman chief minister .",
            people={"Uma Bharti": [(0, 4, 6)]}, others={"BJP": [(0, 8, 9)], "Madhya Pradesh": [(0, 10, 12)]})
    assert genders(d) == [FEMALE]
    # "was his daughter": the noun is the person's, the "his" another's (Re-DocRED test gave Yang Yuhuan, a
    # consort, that "his" and made her male; dev: "Achille Longo , his uncle")
    d = doc("Since Yuhuan was still his daughter - in - law ( as she was Li Mao 's wife ) , he left .",
            people={"Yuhuan": [(0, 1, 2)], "Li Mao": [(0, 14, 16)]})
    assert document_genders(d)[0] == GenderEvidence(male=0, female=2)
    d = doc("He studied under Achille Longo , his uncle .", people={"Achille Longo": [(0, 3, 5)]})
    assert genders(d) == [MALE]
    # ... but "his wife , Elisabeth" is Elisabeth's apposition, not Philip's
    d = doc("King Philip , his wife , Elisabeth Farnese , and his minister", people={
        "King Philip": [(0, 0, 2)], "Elisabeth Farnese": [(0, 6, 8)]})
    assert genders(d) == [MALE, FEMALE]
    # ... but not an "of" that is no other entity's name, nor a person's "'s"
    d = doc("Tom Ward of the town , the only woman there .", people={"Tom Ward": [(0, 0, 2)]})
    assert genders(d) == [None]
    d = doc("Tom Ward , Ann Lee 's husband .", people={"Tom Ward": [(0, 0, 2)], "Ann Lee": [(0, 3, 5)]})
    assert genders(d) == [None, None]


def test_tokens_inside_mentions_never_count() -> None:
    d = doc("Tom Ward sang She Loves You .", people={"Tom Ward": [(0, 0, 2)]}, others={"She Loves You": [(0, 3, 6)]})
    assert genders(d) == [None]


def test_decide_needs_a_margin() -> None:
    assert decide(0, 0) is None
    assert decide(1, 0) == MALE and decide(0, 2) == FEMALE
    assert decide(3, 1) == MALE and decide(2, 1) is None and decide(1, 3) == FEMALE


@given(st.lists(st.sampled_from(["Tom", "said", "it", "rained", ".", ",", "the", "city"]), min_size=1, max_size=30))
def test_a_document_without_pronouns_or_gendered_words_shows_no_gender(words: list[str]) -> None:
    sent = ["Tom", *words]
    d = {"title": "t", "sents": [sent], "labels": [],
         "vertexSet": [[{"name": "Tom", "sent_id": 0, "pos": [0, 1], "type": "PER"}]]}
    assert document_genders(d) == {0: GenderEvidence(0, 0)}


def test_the_item_gender_is_the_single_value_of_the_best_rank() -> None:
    assert item_gender([(P21_MALE, "normal")]) == P21_MALE
    assert item_gender([(P21_MALE, "normal"), (P21_FEMALE, "preferred")]) == P21_FEMALE
    assert item_gender([(P21_MALE, "normal"), (P21_FEMALE, "normal")]) is None  # two values: none
    assert item_gender([(P21_MALE, "deprecated")]) is None
    assert item_gender([]) is None
    assert (pronoun_class(P21_MALE), pronoun_class(P21_FEMALE), pronoun_class("Q48270"), pronoun_class(None)) == \
        (MALE, FEMALE, None, None)


def test_a_first_name_is_the_first_word_of_a_longer_name_and_not_an_initial_or_a_title() -> None:
    assert first_name("John Smith") == "john"
    assert first_name("Anne-Marie Duval") == "anne-marie"
    assert [first_name(n) for n in ("Tempah", "A. R. Kardar", "General Grant", "Queen Victoria", "Saint Paul",
                                     "BBC Radio", "3 Doors Down", "de Gaulle")] == [None] * 8


def test_first_names_learned_from_decided_persons_need_votes_and_a_margin() -> None:
    persons = [(["John Smith"], MALE, ["a"]), (["John Ford", "Ford"], MALE, ["b"]), (["John Doe"], None, ["c"]),
               (["Jean Arp"], MALE, ["d"]), (["Jean Seberg"], FEMALE, ["e"]), (["Mary Wu"], FEMALE, ["f"]),
               (["Carol I"], MALE, ["Carol II of Romania"]), (["Carol II"], MALE, ["Carol II of Romania"])]
    learned = first_name_genders(persons)
    assert learned == {"john": MALE}  # Jean is split; one Mary is not two; both Carols are one document
    assert first_name_genders(persons, votes=1) == {"carol": MALE, "john": MALE, "mary": FEMALE}
    assert name_gender(["John Doe", "Doe"], learned) == MALE
    assert name_gender(["Jean Valjean"], learned) is None
    # names of one person that tell two genders tell none
    assert name_gender(["John Doe", "Mary Doe"], {"john": MALE, "mary": FEMALE}) is None
    assert name_gender(["Paul Phélypeaux", "Anne Phélypeaux"], {"paul": MALE}) is None  # "anne" tells nothing
    assert name_gender(["Phélypeaux"], {"paul": MALE}) is None  # no first name at all


def test_the_lexicon_tells_the_gender_of_first_names_most_carriers_of_one_gender_have() -> None:
    """lexicon_genders: at least LEXICON_TELLS (0.95) of the carriers, at least LEXICON_MIN_COUNT counted."""
    from envbench.core.gender import lexicon_genders

    table = lexicon_genders()
    assert (table["mario"], table["benito"], table["mary"], table["igor"], table["francesca"]) == (
        MALE, MALE, FEMALE, MALE, FEMALE)
    assert "andrea" not in table and "jean" not in table  # 0.83 and 0.48 of their carriers are women
    assert "jose" not in table  # 0.065: María José
    assert "lorde" not in table  # 23 carriers counted: too few to read


def test_a_reader_takes_a_first_name_for_the_gender_most_of_its_carriers_have() -> None:
    """first_name_lean: the majority, however slight; None for a name the lexicon does not count."""
    from envbench.core.gender import first_name_lean

    assert [first_name_lean(n) for n in ("tinie", "gul", "kim", "andrea", "Hélène")] == [FEMALE] * 5
    assert [first_name_lean(n) for n in ("jan", "kyle", "jose", "Otis")] == [MALE] * 4
    assert first_name_lean("lorde") is None and first_name_lean("qirra") is None


def test_a_first_names_share_of_carriers_of_one_gender() -> None:
    """first_name_share: the lexicon's share of a name's carriers that have the gender; the two add to 1."""
    from envbench.core.gender import first_name_share

    kim_f, kim_m = first_name_share("Kim", FEMALE), first_name_share("kim", MALE)
    assert kim_f is not None and kim_m is not None and abs(kim_f + kim_m - 1) < 1e-9 and 0.6 < kim_f < 0.7
    assert first_name_share("Hélène", FEMALE) == first_name_share("helene", FEMALE) > 0.95  # accents folded
    assert first_name_share("qirra", MALE) is None


def test_a_person_named_by_one_word_is_read_by_it_when_it_is_a_common_given_name() -> None:
    """one_word_gender: every name one word, each counted ONE_WORD_MIN_COUNT times, all telling one gender."""
    from envbench.core.gender import one_word_gender

    assert one_word_gender(["Helen"]) == FEMALE and one_word_gender(["Manon"]) == FEMALE
    assert one_word_gender(["Alan", "Victor"]) == MALE
    assert one_word_gender(["Jean"]) is None  # 0.48 of the Jeans are women
    assert one_word_gender(["Tempah"]) is None and one_word_gender(["Tinie"]) is None  # unknown; 88 carriers only
    assert one_word_gender(["Helen", "Helen Troy"]) is None  # a longer name: first_name reads that one
    assert one_word_gender(["Helen", "Victor"]) is None  # two genders
    assert one_word_gender(["Clinton"]) == MALE and one_word_gender(["Clinton"], frozenset({"clinton"})) is None


@pytest.mark.skipif(importlib.util.find_spec("nomquamgender") is None,
                    reason="the dev extra (nomquamgender) rebuilds the bundled first-name lexicon")
def test_the_bundled_lexicon_is_the_one_nomquamgender_builds() -> None:
    """envbench/data/first_names.tsv.gz is build_first_names()'s bytes (the dev extra pins nomquamgender)."""
    from importlib import resources

    from envbench.core.gender import build_first_names

    assert build_first_names() == resources.files("envbench").joinpath("data/first_names.tsv.gz").read_bytes()


def test_a_first_name_is_read_without_its_accents_where_the_corpus_does_not_spell_it() -> None:
    """lexicon_key folds accents, as the lexicon writes names in ASCII; the corpus's own spelling wins."""
    from envbench.core.gender import lexicon_key, with_lexicon

    assert (lexicon_key("hélène"), lexicon_key("josé"), lexicon_key("věra"), lexicon_key("Mary")) == (
        "helene", "jose", "vera", "mary")
    table = with_lexicon({})
    assert name_gender(["Hélène Desmarais"], table) == FEMALE and name_gender(["Bořivoj Novák"], table) == MALE
    # a spelling the corpus itself learned is read as learned, before its folded lexicon form
    assert name_gender(["José Martí"], {"josé": FEMALE, "jose": MALE}) == FEMALE


def test_the_context_gender_is_the_one_gender_of_every_pronoun_near_a_person() -> None:
    # the sentence of a mention and the one after it; both people of "Tom met Ann" share its context
    d = doc("Tom met Ann .", "He left .", people={"Tom": [(0, 0, 1)], "Ann": [(0, 2, 3)]})
    assert context_genders(d) == {0: MALE, 1: MALE}
    d = doc("Tom met Ann .", "She smiled at him .", people={"Tom": [(0, 0, 1)], "Ann": [(0, 2, 3)]})
    assert context_genders(d) == {}  # pronouns of both genders: no constraint
    # whose "she" it is the rule cannot tell; a woman's name for Furler contradicts neither reading
    d = doc("Aguilera revealed that Furler is one of her favorite people and that she is very inspiring .",
            people={"Aguilera": [(0, 0, 1)], "Furler": [(0, 3, 4)]})
    assert context_genders(d) == {0: FEMALE, 1: FEMALE} and genders(d) == [None, None]
    # a quoted pronoun is someone speaking; the sentence before a mention and two after it are not read
    d = doc("She sang .", 'Bo said " he is kind " .', "It rained .", "His hat fell .", people={"Bo": [(1, 0, 1)]})
    assert context_genders(d) == {}
    d = doc("Bo ran .", "It rained .", "She sang .", people={"Bo": [(0, 0, 1)]})
    assert context_genders(d) == {}
    # the person's own evidence of the other gender outweighs every pronoun: "man" is Dom's
    # (the document rule, 1 to 1, decides nothing for him)
    d = doc("She fell for much older man , Dom , who went on to murder Geoff .", "Dom met her .",
            people={"Dom": [(0, 7, 8), (1, 0, 1)], "Geoff": [(0, 14, 15)]})
    assert context_genders(d) == {1: FEMALE} and genders(d) == [None, None]


@given(st.lists(st.sampled_from(["he", "she", "his", "her", "it", "ran", ".", '"']), min_size=1, max_size=8),
       st.lists(st.sampled_from(["he", "she", "him", "hers", "sat", ","]), max_size=8))
def test_a_context_gender_never_contradicts_a_pronoun_near_the_person(first: list[str], second: list[str]) -> None:
    """Whatever the words, no unquoted pronoun of the other gender is in the person's sentences."""
    d = {"title": "t", "sents": [["Bo", *first], second or ["."]], "labels": [],
         "vertexSet": [[{"name": "Bo", "sent_id": 0, "pos": [0, 1], "type": "PER"}]]}
    got = context_genders(d).get(0)
    read = []
    for sent in d["sents"]:
        quoted = False  # a quote never runs on into the next sentence
        for tok in sent:
            quoted = quoted != (tok == '"')
            if not quoted and tok in ("he", "his", "him", "she", "her", "hers"):
                read.append(MALE if tok in ("he", "his", "him") else FEMALE)
    assert got == (read[0] if read and len(set(read)) == 1 else None)
