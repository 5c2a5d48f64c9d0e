"""Demonym-aware pairing: the pure rule, and the engine keeping an entity for want of a demonym."""

from __future__ import annotations

from typing import Any

import duckdb

from envbench.core.reasons import KeptReason
from envbench.rename.audit import Auditor
from envbench.rename.candidates import ItemNames
from envbench.rename.demonyms import (
    ETHNIC_GROUP,
    LANGUAGE,
    NO_DEMONYM,
    PLURAL,
    demonym_names,
    fetch_demonyms,
    knows_demonyms,
    names_persons,
    pair_item_names,
    plural_forms,
    plural_people,
    usable_demonyms,
    used_as_plural,
    written_as_modifier,
)
from envbench.rename.engine import DocInfo, Draws, plan_runs, settle_linked
from envbench.rename.stats import StatsTally
from tests.envbench.index_fixture import mention
from wikidata_index.index import Demonym
from wikidata_index.names import fold


def dem(text: str, rank: str = "normal", form: str | None = None) -> Demonym:
    return Demonym(text, rank, form, fold(text))


US = (dem("American"), dem("Americans", form=PLURAL))
DK = (dem("Danes", rank="preferred", form=PLURAL), dem("Danish"), dem("DANISH"))


def _names(mapping: Any) -> dict[str, str]:
    assert isinstance(mapping, dict)
    return {k: v.name for k, v in mapping.items()}


def test_usable_demonyms_leave_out_plurals_and_put_preferred_first() -> None:
    assert usable_demonyms(DK) == ("Danish",)  # plural dropped, "DANISH" folds like "Danish"
    assert usable_demonyms((dem("Italian"), dem("Italic", rank="preferred"))) == ("Italic", "Italian")
    assert usable_demonyms(()) == ()
    # a noun for persons comes after the adjectives ("the 1998 Luxembourger census" read wrong)
    assert usable_demonyms((dem("Luxembourger"), dem("Luxembourgish"))) == ("Luxembourgish", "Luxembourger")
    assert usable_demonyms((dem("New Zealander"),)) == ("New Zealander",)  # the only form stays usable
    assert [names_persons(t) for t in ("New Yorker", "Icelander", "Danish", "Luxembourgish")] == \
        [True, True, False, False]


def test_a_country_short_form_is_a_modifier_before_a_word_in_every_mention() -> None:
    assert written_as_modifier("U.S.", ["Representative"]) and written_as_modifier("US", ["court", "railway"])
    assert not written_as_modifier("U.S.", ["Representative", "."])  # one mention is a noun
    assert not written_as_modifier("US", ["and"]) and not written_as_modifier("UK", ["invaded"])
    assert not written_as_modifier("Kuwait", ["government"])  # a country's name, no short form
    assert not written_as_modifier("US", [])


def test_demonym_names_are_folded_matches_of_the_own_items_demonyms() -> None:
    assert demonym_names(["United States", "american", "Americans"], US) == ["american", "Americans"]
    assert demonym_names(["American"], ()) == []  # no P1549 known: no demonym name


def test_a_demonym_mention_gets_a_demonym_and_a_noun_a_noun() -> None:
    got = pair_item_names(["United States", "American"], US, "Denmark", ("Danish", "Danmark"), DK)
    assert _names(got) == {"United States": "Denmark", "American": "Danish"}
    assert _names(pair_item_names(["American"], US, "Denmark", (), DK)) == {"American": "Danish"}


def test_a_candidate_without_a_demonym_cannot_take_a_demonym_mention() -> None:
    assert pair_item_names(["American"], US, "Lyon", (), ()) is NO_DEMONYM
    assert pair_item_names(["American"], US, "Denmark", (), (dem("Danes", form=PLURAL),)) is NO_DEMONYM
    # two distinct demonym names need two distinct demonyms
    two = (dem("American"), dem("Yankee"))
    assert pair_item_names(["American", "Yankee"], two, "Denmark", (), DK) is NO_DEMONYM


def test_noun_names_never_take_the_candidates_demonyms() -> None:
    # the entity has no demonym mention: its two names pair with label and aliases, less "Danish"
    assert sorted(_names(pair_item_names(["Italy", "Italia"], (), "Denmark", ("Danish", "Danmark"), DK))
                  .values()) == ["Danmark", "Denmark"]
    assert pair_item_names(["Italy", "Italia"], (), "Denmark", ("Danish",), DK) is None  # too few nouns left
    # a candidate whose label is its own demonym has no noun name to give, unless an alias is one
    assert pair_item_names(["Italy"], (), "Danish", (), DK) is None
    assert _names(pair_item_names(["Japan", "Japanese"], (dem("Japanese"),), "Danish", ("Denmark",), DK)) == \
        {"Japan": "Denmark", "Japanese": "Danish"}
    # without any P1549 data the pairing is the old one (the alias may be anything)
    assert _names(pair_item_names(["Italy", "Italia"], (), "Denmark", ("Danish",), ())) == \
        {"Italia": "Denmark", "Italy": "Danish"}


def test_fetch_demonyms_on_a_bare_connection_knows_none() -> None:
    assert fetch_demonyms(duckdb.connect(), ["Q30"]) == {}
    assert knows_demonyms(duckdb.connect()) is False


def test_knows_demonyms_asks_for_english_rows_only() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE demonyms (id VARCHAR, lang VARCHAR, text VARCHAR, rank VARCHAR, form VARCHAR, "
                "folded VARCHAR)")
    assert knows_demonyms(con) is False  # an index ingested without P1549 rows: generate asks nothing
    con.execute("INSERT INTO demonyms VALUES ('Q142', 'fr', 'Français', 'normal', NULL, 'francais')")
    assert knows_demonyms(con) is False
    con.execute("INSERT INTO demonyms VALUES ('Q142', 'en', 'French', 'normal', NULL, 'french')")
    assert knows_demonyms(con) is True
    assert fetch_demonyms(con, ["Q142"]) == {"Q142": (dem("French"),)}


def _doc() -> dict[str, Any]:
    return {"title": "Band", "sents": [["An", "American", "band", "from", "Ohio", "."]],
            "vertexSet": [[mention("American", 0, [1, 2], "LOC")], [mention("Ohio", 0, [4, 5], "LOC")]],
            "labels": []}


def _settle(names: dict[str, ItemNames], demonyms: dict[str, tuple[Demonym, ...]]) -> Any:
    info = DocInfo(0, _doc(), ["Q30", None], {("Q30", "LOC"): "Q6256"})
    runs, slots = plan_runs([info], [1], "eval", twins=False)
    draws = Draws(slots, lambda slot: 3, Auditor(con=None, constraints={}), {(0, 0): sorted(names)}, names)
    draws.demonyms.update(demonyms)
    assert settle_linked(runs[0], 0, draws) is None
    return runs[0]


def test_the_engine_pairs_a_demonym_or_keeps_the_entity_with_no_demonym() -> None:
    names = {"Q35": ItemNames("Denmark", ("Danish",)), "Q40": ItemNames("Lyon", ())}
    run = _settle(names, {"Q30": US, "Q35": DK})
    (row,) = run.rows
    assert (row.new_qid, row.new_names, row.demonym_names) == ("Q35", ["Danish"], ("American",))
    tally = StatsTally(1)
    tally.add_run(run, run.info.doc)
    assert tally.as_dict({})["demonyms"] == {"entities_paired": 1, "names_paired": 1, "mentions_paired": 1,
                                             "entities_kept": 0}

    run = _settle({"Q40": ItemNames("Lyon", ())}, {"Q30": US})  # the only candidate has no demonym
    (row,) = run.rows
    assert (row.kind, row.reason) == ("kept", KeptReason.NO_DEMONYM)
    tally = StatsTally(1)
    tally.add_run(run, run.info.doc)
    assert tally.as_dict({})["demonyms"]["entities_kept"] == 1

    # a candidate with a demonym that clashes with the document: no_candidate, not no_demonym
    run = _settle({"Q41": ItemNames("Ohioland", ())}, {"Q30": US, "Q41": (dem("Ohio"),)})
    assert run.rows[0].reason is KeptReason.NO_CANDIDATE


def test_an_entity_without_any_drawn_candidate_is_no_candidate_not_no_demonym() -> None:
    run = _settle({}, {"Q30": US})
    assert run.rows[0].reason is KeptReason.NO_CANDIDATE


def test_a_plural_demonym_mention_takes_a_plural_form() -> None:
    # Env dev had read "fighting against the Germans" as "... against the Dane"
    germans = (dem("German"), dem("Germans", form=PLURAL))
    assert _names(pair_item_names(["Germans"], germans, "Denmark", (), DK)) == {"Germans": "Danes"}
    assert _names(pair_item_names(["German", "Germans"], germans, "Denmark", (), DK)) == {
        "German": "Danish", "Germans": "Danes"}
    # a candidate without a plural demonym cannot serve it
    assert pair_item_names(["Germans"], germans, "Denmark", (), (dem("Danish"),)) is NO_DEMONYM
    assert plural_forms(DK) == ("Danes",) and plural_forms((dem("Danish"),)) == ()


def test_a_plural_takes_the_plural_of_a_demonym_where_the_item_has_no_plural_form() -> None:
    # Wikidata's P1549 mostly holds the adjective alone: the plural is made from it, or is the label of a people
    assert plural_forms((dem("Ghanaian"),)) == ("Ghanaians",)
    assert plural_forms((dem("Chinese"),)) == ("Chinese",) and plural_forms((dem("Danish"),)) == ()
    assert plural_forms((), "Yoruba people", frozenset({ETHNIC_GROUP})) == ("Yoruba people",)
    assert plural_forms((), "Serbs", frozenset({ETHNIC_GROUP})) == ("Serbs",)
    assert plural_forms((), "Shingini language", frozenset({LANGUAGE})) == ()
    # a plural people's name: the regular plural of a demonym of its own item, or of any item's (``known``)
    assert plural_people("Americans", {"american"}) and plural_people("Israelis", set(), frozenset({"israeli"}))
    assert not plural_people("Celtics", set()) and not plural_people("Swiss", {"swiss"})


def test_many_americans_take_a_plural_demonym_or_the_entity_is_kept() -> None:
    from tests.envbench.rename.test_built_on import _doc, _settle

    # main path: "Many Americans have stayed here" had read "Many Australian Guinea have stayed here"
    doc = _doc(["Many Americans have stayed here ."], [[("Americans", 0, "LOC")]])
    cands = [("Q7", ItemNames("Australian Guinea", ())), ("Q8", ItemNames("Denmark", ())), ("Q9", ItemNames("Ghana", ()))]
    demonyms = {"Q30": (dem("American"),), "Q8": (dem("Danish"),), "Q9": (dem("Ghanaian"),)}
    run = _settle(doc, ["Q30"], {0: cands}, demonyms=demonyms)
    from envbench.rename.substitute import apply_plan

    assert " ".join(apply_plan(doc, run.plan, "T-1")["sents"][0]) == "Many Ghanaians have stayed here ."
    run = _settle(doc, ["Q30"], {0: cands[:2]}, demonyms=demonyms)
    assert [(r.kind, r.reason) for r in run.rows] == [("kept", KeptReason.NO_CANDIDATE)]  # none had a plural


def test_germans_linked_to_a_people_never_become_a_language() -> None:
    from tests.envbench.rename.test_built_on import _doc, _settle

    # "Germans" had become "Shingini language": the people's item has no P1549; "German" is a demonym of some item
    doc = _doc(["Most Germans fled or were expelled ."], [[("Germans", 0, "LOC")]])
    auditor = Auditor(con=None, constraints={}, types={"Q7": {"Q34770"}, "Q8": {"Q41710"}},
                      anc={"Q34770": frozenset({"Q34770"}), "Q41710": frozenset({"Q41710"})})
    cands = [("Q7", ItemNames("Shingini language", ())), ("Q8", ItemNames("Yoruba people", ()))]
    run = _settle(doc, ["Q42884"], {0: cands}, auditor=auditor, known=frozenset({"german"}))
    assert run.plan[0]["Germans"].name == "Yoruba people"


def test_a_demonym_that_is_its_own_plural_names_a_people_after_many_or_before_have() -> None:
    from tests.envbench.rename.test_built_on import _doc, _settle

    assert used_as_plural("Japanese", [("Many", "have")]) and used_as_plural("Swiss", [("the", "were")])
    assert not used_as_plural("Japanese", [("a", "singer")]) and not used_as_plural("Germans", [("Many", "have")])
    # "Many Japanese have stayed here" never "Many Ghanaian have stayed here"; "a Japanese singer" an adjective
    ghana = {"Q1": (dem("Japanese"),), "Q9": (dem("Ghanaian"),)}
    doc = _doc(["Many Japanese have stayed here ."], [[("Japanese", 0, "LOC")]])
    run = _settle(doc, ["Q1"], {0: [("Q9", ItemNames("Ghana", ()))]}, demonyms=ghana)
    assert run.plan[0]["Japanese"].name == "Ghanaians"
    doc = _doc(["He is a Japanese singer ."], [[("Japanese", 0, "LOC")]])
    run = _settle(doc, ["Q1"], {0: [("Q9", ItemNames("Ghana", ()))]}, demonyms=ghana)
    assert run.plan[0]["Japanese"].name == "Ghanaian"


def test_a_language_written_the_x_takes_no_one_word_name_there() -> None:
    from tests.envbench.rename.test_built_on import _doc, _settle

    # '" boundary " in the Muscogian Creek Language .' had read "in the Catalan ." (salt third1207s68)
    auditor = Auditor(con=None, constraints={}, types={"Q7": {"Q34770"}, "Q8": {"Q34770"}},
                      anc={"Q34770": frozenset({"Q34770"})})
    cands = [("Q7", ItemNames("Catalan", ())), ("Q8", ItemNames("Tupi language", ()))]
    doc = _doc(['" Uptoi " means " boundary " in the Muscogian Creek Language .'],
               [[("Muscogian Creek Language", 0, "MISC")]])
    run = _settle(doc, ["Q1"], {0: cands}, auditor=auditor)
    assert run.plan[0]["Muscogian Creek Language"].name == "Tupi language"
    # where it is no noun phrase of its own, or has no "the", the one word reads well
    for sentence in ("It is written in Muscogian Creek Language .", "the Muscogian Creek Language dictionary"):
        doc = _doc([sentence], [[("Muscogian Creek Language", 0, "MISC")]])
        run = _settle(doc, ["Q1"], {0: cands}, auditor=auditor)
        assert run.plan[0]["Muscogian Creek Language"].name == "Catalan"
