"""Adjectival mentions take adjectival forms only, and catch-all classes never decide a draw (issue 31).

The fixtures are written from renamed sentences of Re-DocRED test that read wrong: "Barbadian recording
artist" had become "Hungarians recording artist", "Vili people recording artist" and "Yemenis recording
artist"; "Vietnamese" had become "Zaramo people"; "Caribbean" "Great Lakes region"; "composers of Nepali
descent" "composers of Terai Region descent"; "uses an English slogan" (linked to the English people)
"uses a Serbs slogan"; "Philippine clothing brand" "Guinea clothing brand"; and "responsibility for
Continental Europe" "responsibility for Pacific Region - 2 - digit Hydrologic Unit Code - 22", an item
whose only class is territorial entity.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from envbench.core.reasons import KeptReason
from envbench.core.types import CATCH_ALL_CLASSES
from envbench.rename.audit import Auditor
from envbench.rename.candidates import ItemNames
from envbench.rename.demonyms import (
    ETHNIC_GROUP,
    LANGUAGE,
    NO_DEMONYM,
    PLURAL,
    adjectival_forms,
    adjectival_kinds,
    adjectival_names,
    looks_plural,
    pair_item_names,
    reads_adjectival,
    written_as_adjective,
)
from envbench.rename.engine import DocInfo, Draws, plan_runs, settle_linked, settle_other, substitution_table
from envbench.rename.fine_types import choose_fine_type
from envbench.rename.stats import StatsTally
from tests.envbench.index_fixture import mention
from wikidata_index.index import Demonym
from wikidata_index.names import fold

PLACES = ["Hungary", "Guinea", "Terai Region", "Great Lakes region", "Yemen", "Caribbean Sea", "Ohio", "Nepal"]
FORMS = ["Hungarian", "Hungarians", "Yemenis", "Danish", "Serbs", "Filipino", "Swiss", "Danes"]

TERRITORIAL_ENTITY = "Q1496967"
COUNTRY = "Q6256"
REGION = "Q82794"
HUMAN_SETTLEMENT = "Q486972"


def dem(text: str, form: str | None = None) -> Demonym:
    return Demonym(text, "normal", form, fold(text))


# candidates as the bad reads drew them, with what a real index has for each
HUNGARY = ("Q28", ItemNames("Hungary", ()), (dem("Hungarian"), dem("Hungarians")), {COUNTRY})
VILI = ("Q7930", ItemNames("Vili people", ()), (), {ETHNIC_GROUP})
YEMEN = ("Q805", ItemNames("Yemen", ()), (dem("Yemenis", form=PLURAL), dem("Yemenis")), {COUNTRY})
ZARAMO = ("Q8070", ItemNames("Zaramo people", ()), (), {ETHNIC_GROUP})
SERBS = ("Q127885", ItemNames("Serbs", ()), (), {ETHNIC_GROUP})
GREAT_LAKES = ("Q1117", ItemNames("Great Lakes region", ()), (), {REGION})
TERAI = ("Q1150", ItemNames("Terai Region", ()), (), {REGION})
GUINEA = ("Q1006", ItemNames("Guinea", ()), (), {COUNTRY})
KURDISH = ("Q36368", ItemNames("Kurdish language", ("Kurdish",)), (), {LANGUAGE})


def _settle(sentence: str, at: tuple[int, int], qid: str, own: tuple[Demonym, ...], candidates: list[Any],
            known: frozenset[str] = frozenset(), coarse: str = "LOC") -> Any:
    """Settle the one entity at ``at`` of a one-sentence document against ``candidates`` (in draw order);
    ``known`` are the folded demonyms of any item the index holds, among mention and candidate names."""
    sent = sentence.split()
    name = " ".join(sent[at[0]:at[1]])
    doc = {"title": "T", "sents": [sent], "vertexSet": [[mention(name, 0, list(at), coarse)]], "labels": []}
    info = DocInfo(0, doc, [qid], {(qid, coarse): "Q1"})
    runs, slots = plan_runs([info], [1], "eval", twins=False)
    auditor = Auditor(con=None, constraints={})
    auditor.types.update({q: frozenset(t) for q, _, _, t in candidates})
    names = {q: n for q, n, _, _ in candidates}
    draws = Draws(slots, lambda slot: len(candidates), auditor, {(0, 0): [q for q, _, _, _ in candidates]}, names)
    draws.demonyms.update({q: d for q, _, d, _ in candidates if d})
    if own:
        draws.demonyms[qid] = own
    draws.known = known
    for q, n, _, _ in candidates:  # what Renamer._fetch finds among the drawn candidates' names
        if hit := frozenset(fold(x) for x in (n.label, *n.aliases) if reads_adjectival(x, known)):
            draws.adjective_named[q] = hit
    assert settle_linked(runs[0], 0, draws) is None
    (row,) = runs[0].rows
    return row


def test_barbadian_recording_artist_takes_an_adjective_never_a_plural_or_a_people_label() -> None:
    own = (dem("Barbadian"),)
    sentence = "a Barbadian recording artist"
    assert _settle(sentence, (1, 2), "Q244", own, [YEMEN, HUNGARY]).new_names == ["Hungarian"]
    assert _settle(sentence, (1, 2), "Q244", own, [VILI]).new_names == ["Vili"]
    row = _settle(sentence, (1, 2), "Q244", own, [YEMEN])  # "Yemenis" is a plural, its only demonym
    assert (row.kind, row.reason) == ("kept", KeptReason.NO_DEMONYM)


def test_vietnamese_linked_to_the_people_is_adjectival_by_any_items_demonym() -> None:
    # the Vietnamese people (an ethnic group) carry no P1549; "Vietnamese" is Vietnam's demonym
    row = _settle("the Vietnamese singer", (1, 2), "Q1050597", (), [ZARAMO], known=frozenset({"vietnamese"}))
    assert row.new_names == ["Zaramo"] and row.adjectival == ("Zaramo",)
    assert row.demonym_names == ("Vietnamese",)
    # without the index's demonyms the name is a noun and takes the label, as before the rule
    assert _settle("fought the Vietnamese .", (2, 3), "Q1050597", (), [ZARAMO]).new_names == ["Zaramo people"]
    # ... unless the sentence writes it as an adjective ("the Vietnamese people")
    assert _settle("the Vietnamese people", (1, 2), "Q1050597", (), [ZARAMO]).new_names == ["Zaramo"]


def test_english_slogan_linked_to_the_english_people_never_takes_serbs() -> None:
    sentence = "The channel uses an English slogan"
    row = _settle(sentence, (4, 5), "Q42406", (), [SERBS, KURDISH], known=frozenset({"english"}), coarse="MISC")
    assert row.new_names == ["Kurdish"]
    row = _settle(sentence, (4, 5), "Q42406", (), [SERBS], known=frozenset({"english"}), coarse="MISC")
    assert row.reason is KeptReason.NO_DEMONYM


def test_caribbean_written_as_an_adjective_never_becomes_a_region_noun() -> None:
    assert written_as_adjective("Caribbean", ["island"])
    assert not written_as_adjective("Caribbean", [","])  # "in the Caribbean ," is a noun
    assert not written_as_adjective("Ohio", ["river"])  # not an adjectival form
    assert not written_as_adjective("ASEAN", ["countries"])  # an acronym
    row = _settle("a Caribbean island nation", (1, 2), "Q664609", (), [GREAT_LAKES])
    assert row.reason is KeptReason.NO_DEMONYM
    row = _settle("a Caribbean island nation", (1, 2), "Q664609", (), [GREAT_LAKES, HUNGARY])
    assert row.new_names == ["Hungarian"]


def test_nepali_descent_and_philippine_brand_take_no_place_noun() -> None:
    row = _settle("composers of Nepali descent", (2, 3), "Q1150", (), [TERAI], known=frozenset({"nepali"}))
    assert row.reason is KeptReason.NO_DEMONYM
    row = _settle("a Philippine clothing brand", (1, 2), "Q928", (dem("Philippine"), dem("Filipino")), [GUINEA])
    assert row.reason is KeptReason.NO_DEMONYM


# a corpus KB's items made of adjectival mentions only ("the Patagonian region", "a 2012 Philippine
# melodrama"): their names are demonyms of other items, and they carry no P1549 of their own
PATAGONIAN = ("Q1749", ItemNames("Patagonian", ()), (), {REGION})
PHILIPPINE = ("Q1776", ItemNames("Philippine", ("Philippine Islands",)), (), {COUNTRY})
CATALAN = ("Q7026", ItemNames("Catalan", ()), (), {LANGUAGE})


def test_a_noun_mention_never_takes_a_name_that_is_any_items_demonym() -> None:
    # "The Royal Arsenal , Woolwich" had read "The Royal Arsenal , Patagonian"
    known = frozenset({"patagonian", "philippine", "catalan"})
    sentence = "The Royal Arsenal , Woolwich carried out armaments manufacture"
    row = _settle(sentence, (4, 5), "Q2", (), [PATAGONIAN], known=known)
    assert (row.kind, row.reason) == ("kept", KeptReason.NO_CANDIDATE)
    assert _settle(sentence, (4, 5), "Q2", (), [PATAGONIAN, GUINEA], known=known).new_names == ["Guinea"]
    # "between the United States of America and the Philippine": a noun alias stands in for the label
    # (and keeps the old name's "the", which it needs: ``articles.keep_the``)
    row = _settle("ended the war between the two and the United Kingdom .", (7, 9), "Q3", (), [PHILIPPINE],
                  known=known)
    assert row.new_names == ["the Philippine Islands"]
    # a language's label is a noun as well: "written in Latin" may read "written in Catalan"
    assert _settle("a poem written in Latin .", (4, 5), "Q4", (), [CATALAN], known=known,
                   coarse="MISC").new_names == ["Catalan"]
    # without the index's demonyms nothing tells the adjective apart: the label is taken, as before
    assert _settle(sentence, (4, 5), "Q2", (), [PATAGONIAN]).new_names == ["Patagonian"]
    # "Russia ... in England" had read "... in Imperial Russian": a phrase ending in a demonym
    imperial = ("Q1777", ItemNames("Imperial Russian", ()), (), {COUNTRY})
    row = _settle("he moved to England in 1900", (3, 4), "Q21", (), [imperial], known=frozenset({"russian"}))
    assert row.reason is KeptReason.NO_CANDIDATE


def test_reads_adjectival_is_a_demonym_or_a_phrase_ending_in_one() -> None:
    known = frozenset({"russian", "south african"})
    assert reads_adjectival("Russian", known) and reads_adjectival("Imperial Russian", known)
    assert reads_adjectival("South African", known) and reads_adjectival("RUSSIAN", known)
    assert not reads_adjectival("Russia", known) and not reads_adjectival("Russian Empire", known)
    assert not reads_adjectival("The Russian", known)  # a title ("The American", a film) is a noun
    assert not reads_adjectival("", known) and not reads_adjectival("Russian", frozenset())


@settings(max_examples=300, deadline=None)
@given(nouns=st.lists(st.sampled_from(["Woolwich", "United Kingdom", "Ohio"]), min_size=1, max_size=2, unique=True),
       label=st.sampled_from([*PLACES, *FORMS]), aliases=st.lists(st.sampled_from([*PLACES, *FORMS]), max_size=3,
                                                                     unique=True),
       known=st.sets(st.sampled_from([fold(f) for f in FORMS]), max_size=len(FORMS)),
       kinds=st.sets(st.sampled_from([LANGUAGE, ETHNIC_GROUP]), max_size=1))
def test_a_noun_name_never_takes_an_adjective_unless_the_candidate_is_a_language_or_people(
        nouns: list[str], label: str, aliases: list[str], known: set[str], kinds: set[str]) -> None:
    """Whatever a candidate's names, a noun name of a place candidate never becomes one of them that is
    a demonym of some item (``adjectives``); a language's or an ethnic group's may."""
    names = [label, *(a for a in aliases if a != label)]
    adjectives = frozenset(f for n in names if (f := fold(n)) in known)
    out = pair_item_names(nouns, (), label, names[1:], (), adjectives=adjectives, kinds=frozenset(kinds))
    if out is None:
        return
    assert isinstance(out, dict) and set(out) == set(nouns)
    for nm in nouns:
        if not kinds:
            assert fold(out[nm].name) not in known


def test_adjectival_forms_follow_the_stated_rule() -> None:
    assert adjectival_forms(HUNGARY[2], "Hungary") == ("Hungarian",)
    assert adjectival_forms((), "Vili people", frozenset({ETHNIC_GROUP})) == ("Vili",)
    assert adjectival_forms((), "Serbs", frozenset({ETHNIC_GROUP})) == ()
    assert adjectival_forms((), "Kurdish language", frozenset({LANGUAGE})) == ("Kurdish",)
    assert adjectival_forms((), "Telugu", frozenset({LANGUAGE})) == ("Telugu",)
    assert adjectival_forms((), "Guinea") == ()
    assert looks_plural("Hungarians") and looks_plural("Yemenis") and not looks_plural("Swiss")
    anc = {"Q1288568": frozenset({"Q1288568", LANGUAGE})}  # modern language, a subclass of language
    assert adjectival_kinds({"Q1288568"}, anc) == frozenset({LANGUAGE})
    assert adjectival_kinds({COUNTRY}, anc) == frozenset()


def test_a_person_named_like_a_demonym_is_not_adjectival() -> None:
    # the engine passes no known demonyms for a PER entity; the rule itself keeps own demonyms only then
    assert adjectival_names(["Roman"], (), frozenset(), frozenset()) == []
    assert adjectival_names(["Roman", "Rome"], (), frozenset({"roman"}), frozenset()) == ["Roman"]


@settings(max_examples=300, deadline=None)
@given(adjectival=st.lists(st.sampled_from(["Barbadian", "Vietnamese", "Caribbean", "English"]), min_size=1,
                           max_size=2, unique=True),
       nouns=st.lists(st.sampled_from(["Barbados", "Vietnam"]), max_size=1),
       label=st.sampled_from(PLACES), aliases=st.lists(st.sampled_from(PLACES), max_size=2, unique=True),
       forms=st.lists(st.tuples(st.sampled_from(FORMS), st.sampled_from([None, PLURAL])), max_size=3),
       kinds=st.sets(st.sampled_from([LANGUAGE, ETHNIC_GROUP]), max_size=1))
def test_an_adjectival_mention_never_takes_the_label_of_a_place(adjectival: list[str], nouns: list[str],
                                                                 label: str, aliases: list[str],
                                                                 forms: list[tuple[str, str | None]],
                                                                 kinds: set[str]) -> None:
    """Whatever a candidate carries, an adjectival name never becomes a place item's label; a place
    candidate (no language, no ethnic group) gives only its singular demonyms, and never a plural."""
    rows = tuple(dem(t, form) for t, form in forms)
    labels = set(PLACES) if not kinds else set(PLACES) - {label}  # a language's label is its adjective
    out = pair_item_names([*adjectival, *nouns], (), label, [a for a in aliases if a != label], rows,
                          adjectival=adjectival, kinds=frozenset(kinds))
    if not isinstance(out, dict):
        assert out is NO_DEMONYM or out is None
        return
    for nm in adjectival:
        new = out[nm].name
        assert new not in labels
        assert not looks_plural(new)
        if not kinds:
            assert new in {t for t, form in forms if form != PLURAL}


def test_catch_all_classes_never_decide_a_type_alone() -> None:
    anc: dict[str, frozenset[str]] = {}
    sizes = {"Q43229": 10_000, "Q7278": 50}  # organization is far larger than political party
    assert choose_fine_type(["Q43229", "Q7278"], anc, sizes) == "Q7278"
    assert choose_fine_type([TERRITORIAL_ENTITY], anc, sizes) == TERRITORIAL_ENTITY  # nothing else: kept later
    assert {"Q35120", "Q1496967", "Q2221906", "Q43229", "Q16334295"} <= set(CATCH_ALL_CLASSES)
    assert "Q5" not in CATCH_ALL_CLASSES and "Q215627" not in CATCH_ALL_CLASSES  # a person reads right
    # the near-root classes a real dump's items carry bare: an occurrence that is also a battle is a battle
    OCCURRENCE, BATTLE = "Q1190554", "Q178561"
    assert {OCCURRENCE, "Q4406616", "Q7184903", "Q27096213", "Q874405"} <= set(CATCH_ALL_CLASSES)
    assert choose_fine_type([OCCURRENCE, BATTLE], anc, {OCCURRENCE: 10, BATTLE: 500}) == BATTLE


def test_an_entity_typed_only_by_a_catch_all_is_kept_as_generic_type() -> None:
    sent = "responsibility for Continental Europe , Africa".split()
    doc = {"title": "T", "sents": [sent], "labels": [],
           "vertexSet": [[mention("Continental Europe", 0, [2, 4], "LOC")], [mention("Africa", 0, [5, 6], "LOC")]]}
    info = DocInfo(0, doc, ["Q46", "Q15"], {("Q46", "LOC"): TERRITORIAL_ENTITY, ("Q15", "LOC"): "Q5107"})
    runs, slots = plan_runs([info], [1], "eval", twins=False)
    assert list(runs[0].slots) == [1]  # no draw for the catch-all entity
    settle_other(runs[0], 0)
    (row,) = runs[0].rows
    assert (row.kind, row.reason, row.catch_all) == ("kept", KeptReason.GENERIC_TYPE, (TERRITORIAL_ENTITY,))
    tally = StatsTally(1)
    tally.add_run(runs[0], doc)
    assert tally.as_dict({})["kept_reasons"] == {"generic_type": 1}
    table = substitution_table(runs).to_pylist()
    assert table[0]["catch_all"] == [TERRITORIAL_ENTITY] and table[0]["reason"] == "generic_type"


def test_every_substitution_says_what_it_was_drawn_by() -> None:
    row = _settle("a Barbadian recording artist", (1, 2), "Q244", (dem("Barbadian"),), [HUNGARY])
    assert row.drawn_by[0] == "Q1" and row.adjectival == ("Hungarian",) and row.catch_all == ()


def _settle_windows(sentence: str, at: tuple[int, int], fine_type: str, windows: list[list[Any]],
                    kinds: dict[str, str], coarse: str = "ORG") -> Any:
    """Settle the one entity at ``at`` (fine type ``fine_type``) over draw windows 0, 1, 2 of candidates."""
    sent = sentence.split()
    name = " ".join(sent[at[0]:at[1]])
    doc = {"title": "T", "sents": [sent], "vertexSet": [[mention(name, 0, list(at), coarse)]], "labels": []}
    info = DocInfo(0, doc, ["Q9"], {("Q9", coarse): fine_type})
    runs, slots = plan_runs([info], [1], "eval", twins=False)
    everyone = [c for w in windows for c in w]
    draws = Draws(slots, lambda slot: 30, Auditor(con=None, constraints={}),
                  {(0, w): [q for q, _ in qs] for w, qs in enumerate(windows)}, {q: n for q, n in everyone},
                  class_kinds=kinds)
    assert settle_linked(runs[0], 0, draws) is None
    assert runs[0].fallback == {}  # a first fit kept aside is dropped once the entity is settled
    (row,) = runs[0].rows
    return row


AGENCY, STATE = "Q327333", "Q3624078"
KINDS = {AGENCY: "agency", STATE: "state", "Q41487": "court", "Q11204": "legislature"}


def test_a_head_noun_the_type_does_not_say_is_kept_where_a_candidate_has_it() -> None:
    # "an Associate Justice of the Supreme Court of Ohio" had read "... of the Societe Internationale de
    # Telecommunications Aeronautiques"; typed a government agency, its head noun says court
    sita = ("Q20", ItemNames("Societe Internationale de Telecommunications Aeronautiques", ()))
    estonia = ("Q21", ItemNames("Supreme Court of Estonia", ()))
    sentence = "an Associate Justice of the Supreme Court of Ohio ."
    row = _settle_windows(sentence, (5, 9), AGENCY, [[sita], [estonia], []], KINDS)
    assert (row.new_names, row.head_noun) == (["Supreme Court of Estonia"], "court")
    # no window has one: the first candidate that fitted, nobody kept
    assert _settle_windows(sentence, (5, 9), AGENCY, [[sita], [], []], KINDS).new_names == [sita[1].label]
    # only the first two windows are searched, so that the seeds keep drawing different names
    assert _settle_windows(sentence, (5, 9), AGENCY, [[sita], [], [estonia]], KINDS).new_names == [sita[1].label]
    # a head no class names is no type signal ("South Africa": africa)
    south = ("Q22", ItemNames("South West Africa", ()))
    row = _settle_windows("trade with South Africa .", (2, 4), STATE, [[("Q23", ItemNames("Kenya", ()))], [south], []],
                          KINDS, coarse="LOC")
    assert row.new_names == ["Kenya"]


def test_a_head_noun_the_type_says_is_part_of_the_name() -> None:
    # "United States" is a sovereign state: preferring "state" would give it "State of Qatar" every time
    qatar = ("Q24", ItemNames("State of Qatar", ()))
    row = _settle_windows("born in the United States .", (3, 5), STATE, [[("Q25", ItemNames("Federal Republic of Germany", ()))], [qatar], []],
                          KINDS, coarse="LOC")
    assert row.new_names == ["Federal Republic of Germany"]
    # nor does a MISC title keep its last word ("Shortland Street", a soap opera)
    street = ("Q26", ItemNames("A Nightmare on Elm Street", ()))
    row = _settle_windows("the soap opera Shortland Street .", (3, 5), "Q5398426",
                          [[("Q27", ItemNames("Coronation Hall", ()))], [street], []], {**KINDS, "Q79007": "street"},
                          coarse="MISC")
    assert row.new_names == ["Coronation Hall"]


def test_a_slot_needs_as_many_names_as_the_entity_has_less_its_adjectival_ones() -> None:
    # "German | Germany" pairs "German" with a demonym: a country of one name ("Kuwait", P1549 "Kuwaiti")
    # serves it, where the lock's entities of two names had drawn the one country of two, every time
    sent = "German troops entered Germany .".split()
    doc = {"title": "T", "sents": [sent], "labels": [],
           "vertexSet": [[mention("German", 0, [0, 1], "LOC"), mention("Germany", 0, [3, 4], "LOC")]]}
    info = DocInfo(0, doc, ["Q183"], {("Q183", "LOC"): COUNTRY})
    assert [s.min_names for s in plan_runs([info], [1], "eval", twins=False)[1]] == [2]
    assert [s.min_names for s in plan_runs([info], [1], "eval", twins=False, adjectival=lambda i, e: ["German"])[1]] == [1]
    # never fewer than one name
    assert [s.min_names for s in plan_runs([info], [1], "eval", twins=False, adjectival=lambda i, e: ["German", "Germany"])[1]] == [1]
