"""Renamed people keep their gender: the rule (envbench/rename/gender.py), the engine, and the main path
over a small dump whose humans carry P21."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from envbench.core.gender import P21_FEMALE, P21_MALE
from envbench.core.reasons import KeptReason
from envbench.rename.audit import Auditor
from envbench.rename.candidates import ItemNames
from envbench.rename.engine import DocInfo, Draws, plan_runs, settle_linked
from envbench.rename.gender import (
    DOCUMENT_OVER_P21,
    FROM_CONTEXT,
    FROM_DOCUMENT,
    FROM_NAME,
    FROM_P21,
    UNKNOWN,
    PersonGender,
    fetch_genders,
    fits,
    knows_genders,
    name_gender,
    person_gender,
    reads_against,
)
from envbench.rename.stats import StatsTally
from tests.envbench.index_fixture import mention

NONBINARY = "Q48270"


def test_the_document_wins_and_p21_speaks_where_it_is_silent() -> None:
    assert person_gender("male", P21_MALE) == PersonGender("male", FROM_P21, P21_MALE)
    assert person_gender("male", None) == PersonGender("male", FROM_DOCUMENT, P21_MALE)
    assert person_gender("male", P21_FEMALE) == PersonGender("male", DOCUMENT_OVER_P21, P21_MALE)
    assert person_gender(None, P21_FEMALE) == PersonGender("female", FROM_P21, P21_FEMALE)
    # the pronouns near a person speak only where its document and P21 are silent
    assert person_gender(None, None, "female") == PersonGender("female", FROM_CONTEXT, P21_FEMALE)
    assert person_gender(None, P21_MALE, "female") == PersonGender("male", FROM_P21, P21_MALE)
    assert person_gender("male", None, "female") == PersonGender("male", FROM_DOCUMENT, P21_MALE)
    assert person_gender(None, NONBINARY) == PersonGender(None, FROM_P21, NONBINARY)  # same value only
    assert person_gender(None, None) == UNKNOWN


def test_a_known_gender_takes_only_candidates_of_that_p21_value() -> None:
    man = person_gender("male", None)
    assert fits(man, P21_MALE, True) and not fits(man, P21_FEMALE, True)
    assert not fits(man, None, True)  # a name of unknown gender may be a woman's
    assert fits(man, P21_FEMALE, False)  # an index without P21 knows no candidate's gender
    assert fits(UNKNOWN, P21_FEMALE, True) and fits(UNKNOWN, None, True)


def test_genders_from_the_table() -> None:
    con = duckdb.connect()
    assert fetch_genders(con, ["Q1"]) == {} and knows_genders(con) is False  # no table at all
    con.execute("CREATE TABLE genders (id VARCHAR, gender VARCHAR, rank VARCHAR)")
    assert knows_genders(con) is False
    con.execute(f"INSERT INTO genders VALUES ('Q1', '{P21_MALE}', 'normal'), ('Q2', '{P21_MALE}', 'normal'), "
                f"('Q2', '{P21_FEMALE}', 'preferred'), ('Q3', '{P21_MALE}', 'deprecated')")
    assert knows_genders(con) is True
    assert fetch_genders(con, ["Q1", "Q2", "Q3", "Q4"]) == {"Q1": P21_MALE, "Q2": P21_FEMALE}


def _doc() -> dict[str, Any]:
    # "her eldest son Edward VII": Edward is male by the noun before his name
    sents = [["Victoria", "died", "and", "the", "crown", "passed", "to", "her", "eldest", "son", "Edward", "VII", "."]]
    return {"title": "Crown", "sents": sents, "labels": [],
            "vertexSet": [[mention("Victoria", 0, [0, 1], "PER")], [mention("Edward VII", 0, [10, 12], "PER")]]}


def _settle(names: dict[str, ItemNames], genders: dict[str, str], knows: bool = True,
            doc: dict[str, Any] | None = None) -> Any:
    info = DocInfo(0, doc or _doc(), [None, "Q20"], {("Q20", "PER"): "Q5"})
    runs, slots = plan_runs([info], [1], "eval", twins=False)
    draws = Draws(slots, lambda slot: len(names), Auditor(con=None, constraints={}), {(0, 0): sorted(names)}, names,
                  knows_genders=knows)
    draws.genders.update(genders)
    assert settle_linked(runs[0], 1, draws) is None
    return runs[0]


NAMES = {"Q31": ItemNames("Barbara Stanwyck", ()), "Q32": ItemNames("Otis Briggs", ()),
         "Q33": ItemNames("Kim Lee", ())}


def test_the_engine_never_gives_a_man_a_womans_name() -> None:
    run = _settle(NAMES, {"Q31": P21_FEMALE, "Q32": P21_MALE})
    (row,) = run.rows
    assert (row.new_qid, row.new_names) == ("Q32", ["Otis Briggs"])
    assert (row.gender, row.gender_from, row.new_gender) == ("male", FROM_DOCUMENT, "male")
    # the document says son, P21 says female: the document wins, and the row says so
    run = _settle(NAMES, {"Q20": P21_FEMALE, "Q31": P21_FEMALE, "Q32": P21_MALE})
    assert (run.rows[0].new_qid, run.rows[0].gender_from) == ("Q32", DOCUMENT_OVER_P21)


def test_no_candidate_of_the_gender_keeps_the_person_as_no_gender() -> None:
    run = _settle({k: NAMES[k] for k in ("Q31", "Q33")}, {"Q31": P21_FEMALE})  # a woman and an unknown
    (row,) = run.rows
    assert (row.kind, row.reason, row.gender) == ("kept", KeptReason.NO_GENDER, "male")
    tally = StatsTally(1)
    tally.add_run(run, run.info.doc)
    got = tally.as_dict({})
    assert got["kept_reasons"] == {"no_gender": 1}
    assert got["gender"] == {"persons": 1, "from_p21": 0, "from_document": 1, "document_over_p21": 0,
                             "from_context": 0, "from_name": 0, "unknown": 0, "renamed": 0, "matched": 0, "kept_no_gender": 1}
    # without any drawn candidate it is no_candidate, not no_gender
    assert _settle({}, {}).rows[0].reason is KeptReason.NO_CANDIDATE


def test_an_index_without_genders_renames_as_before() -> None:
    run = _settle(NAMES, {}, knows=False)
    assert run.rows[0].kind == "linked"
    # no candidate's P21 is known, but the names still read: the son never takes "Barbara Stanwyck"
    assert run.rows[0].new_qid == "Q32"


def test_a_name_that_reads_as_the_other_gender_is_no_candidate() -> None:
    woman, man = person_gender("female", None), person_gender(None, P21_MALE)
    assert reads_against(woman, ["Kyle Richards"]) and reads_against(woman, ["Ann Lee", "Kyle Lee"])
    assert not reads_against(woman, ["Mary Pickford", "Tempah", "A. R. Kardar", "Queen Kyle"])
    # a first name a quarter or more of whose carriers have the other gender reads as either: skipped for both
    assert reads_against(woman, ["Kim Lee"]) and reads_against(man, ["Kim Lee"])
    assert reads_against(woman, ["Jean Seberg"]) and reads_against(man, ["Jean Gabin"])  # 0.48 of Jeans are women
    assert not reads_against(woman, ["Andrea Lilio"]) and reads_against(man, ["Andrea Lilio"])  # 0.83 are women
    assert reads_against(man, ["Evelyn Ward"]) and not reads_against(man, ["Otis Briggs", "Kyle"])
    # most Tinies, Guls and Kims are women: the rapper Tinie Tempah's name reads as a woman's
    assert reads_against(man, ["Tinie Tempah"]) and reads_against(man, ["Gul Hamid"]) and reads_against(man, ["Kim Lee"])
    assert reads_against(woman, ["Lee Hyo-ri"])  # the family name first: most Lees are men
    # accents are folded before the lexicon is read: Re-DocRED's merged "Hélène Desmarais" reads female
    assert reads_against(man, ["Hélène Desmarais"]) and not reads_against(woman, ["Hélène Desmarais"])
    assert not reads_against(UNKNOWN, ["Kyle Richards", "Mary Pickford"])  # an unknown person takes any name


def test_the_engine_skips_a_man_of_p21_male_whose_name_reads_female() -> None:
    # Evelyn Ward's item says male (like Evelyn Waugh), but "her eldest son Evelyn Ward" reads as a woman
    names = {"Q30": ItemNames("Evelyn Ward", ()), **NAMES}
    run = _settle(names, {"Q30": P21_MALE, "Q31": P21_FEMALE, "Q32": P21_MALE})
    assert (run.rows[0].new_qid, run.rows[0].new_names) == ("Q32", ["Otis Briggs"])
    # when the only candidates of his gender read as the other, he is kept for want of a gender
    run = _settle({"Q30": names["Q30"], "Q31": NAMES["Q31"]}, {"Q30": P21_MALE, "Q31": P21_FEMALE})
    assert (run.rows[0].kind, run.rows[0].reason) == ("kept", KeptReason.NO_GENDER)
    run = _settle({"Q30": names["Q30"]}, {"Q30": P21_MALE})
    assert (run.rows[0].kind, run.rows[0].reason) == ("kept", KeptReason.NO_GENDER)


@pytest.mark.slow
def test_main_path_over_a_dump_whose_humans_carry_p21(tmp_path: Path) -> None:
    """make-sample (humans with P21, pronouns that agree) -> ingest-dump -> generate: every renamed person
    takes a name of its own gender, and stats.json says where the genders came from."""
    import pyarrow.parquet as pq

    from envbench.rename.generate import generate
    from envbench.worlds.sample import make_sample
    from wikidata_index.index import WikidataIndex
    from wikidata_index.ingest import ingest_dump

    sample = make_sample(tmp_path / "sample")
    ingest_dump(sample.dump, tmp_path / "index", progress=False, workers=1)
    with WikidataIndex(tmp_path / "index") as ix:
        assert ix.has("genders")
        assert {g for (g,) in ix.con.execute("SELECT DISTINCT gender FROM genders").fetchall()} == {P21_MALE, P21_FEMALE}
    res = generate(tmp_path / "sample" / "docs" / "test.json", tmp_path / "index", tmp_path / "env",
                   links=sample.links, seeds=2, progress=False,
                   exclude_names_from=[tmp_path / "sample" / "docs" / "train.json"])
    rows = [r for r in pq.read_table(tmp_path / "env" / "substitutions.parquet").to_pylist()
            if r["coarse_type"] == "PER" and r["kind"] == "linked"]
    assert rows and all(r["gender"] in ("male", "female") and r["new_gender"] == r["gender"] for r in rows)
    assert {r["gender"] for r in rows} == {"male", "female"}
    stats = json.loads((tmp_path / "env" / "stats.json").read_bytes())["gender"]
    assert stats["renamed"] == stats["matched"] == len(rows) and stats["from_p21"] == stats["persons"]
    assert res.notes == []


def _actor_doc(tmp_path: Path) -> tuple[Path, Path]:
    doc = {"title": "Person 3", "labels": [],
           "sents": [["Person", "3", "is", "an", "actor", "."], ["He", "lives", "in", "City", "1", "."]],
           "vertexSet": [[mention("Person 3", 0, [0, 2], "PER")], [mention("City 1", 1, [3, 5], "LOC")]]}
    docs, links = tmp_path / "docs.json", tmp_path / "links.json"
    docs.write_text(json.dumps([doc]))
    links.write_text(json.dumps({"Person 3": ["Q103", "Q201"]}))
    return docs, links


def test_generate_keeps_gender_over_an_index_with_genders_and_warns_once_without(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from envbench.rename.generate import ALLOWED_NOTE, generate
    from tests.envbench.index_fixture import tiny_world

    docs, links = _actor_doc(tmp_path)
    world = tiny_world()
    # humans Q100..Q139: the even ones men, the odd ones women; Q103 itself has no P21 (the document says he)
    world.rows["genders"] = [{"id": f"Q{100 + k}", "gender": P21_MALE if k % 2 == 0 else P21_FEMALE, "rank": "normal"}
                             for k in range(40) if k != 3]
    res = generate(docs, world.write(tmp_path / "index"), tmp_path / "out", links=links, seeds=8, progress=False, allow_training_names=True)
    rows = [r for r in pq.read_table(tmp_path / "out" / "substitutions.parquet").to_pylist() if r["entity"] == 0]
    assert len(rows) == 8 and all(r["kind"] == "linked" for r in rows)
    assert all(int(r["new_qid"][1:]) % 2 == 0 and r["gender_from"] == FROM_DOCUMENT and r["new_gender"] == "male"
               for r in rows)
    assert res.notes == [ALLOWED_NOTE]
    # the same index without the genders table: renamed as before, and said once
    res = generate(docs, tiny_world().write(tmp_path / "old", skip=("genders",)), tmp_path / "out2", links=links,
                   seeds=8, progress=False, allow_training_names=True)
    notes = [n for n in res.notes if "genders table" in n]
    assert notes == [f"{tmp_path / 'old'}: the index has no genders table (P21), so no candidate's gender is known "
                     f"and persons may change gender; rerun `envbench ingest-dump DUMP --out {tmp_path / 'old'} "
                     "--force` to read P21"]
    rows = [r for r in pq.read_table(tmp_path / "out2" / "substitutions.parquet").to_pylist() if r["entity"] == 0]
    assert all(r["kind"] == "linked" for r in rows)
    assert any(int(r["new_qid"][1:]) % 2 == 1 for r in rows)  # without P21 a woman's name can be drawn


def test_a_person_the_document_leaves_unknown_keeps_to_the_gender_of_the_pronouns_near_it() -> None:
    # "Aguilera revealed that Furler is one of her favorite people ... she is very inspiring": whose
    # "she" it is no rule can tell, so Furler takes a woman's name, never "Otis Briggs"
    words = "Aguilera revealed that Furler is one of her favorite people and that she is very inspiring ."
    doc = {"title": "Blank Page", "sents": [words.split()], "labels": [],
           "vertexSet": [[mention("Aguilera", 0, [0, 1], "PER")], [mention("Furler", 0, [3, 4], "PER")]]}
    run = _settle(NAMES, {"Q31": P21_FEMALE, "Q32": P21_MALE}, doc=doc)
    (row,) = run.rows
    assert (row.new_names, row.gender, row.gender_from, row.new_gender) == (
        ["Barbara Stanwyck"], "female", FROM_CONTEXT, "female")
    tally = StatsTally(1)
    tally.add_run(run, run.info.doc)
    assert tally.as_dict({})["gender"]["from_context"] == 1
    # with no pronoun near it, the person is unknown and the first candidate drawn fits
    doc["sents"] = ["Aguilera revealed that Furler is one of the favorite people of the label .".split()]
    run = _settle(NAMES, {"Q31": P21_FEMALE, "Q32": P21_MALE}, doc=doc)
    assert (run.rows[0].gender_from, run.rows[0].new_names) == (None, ["Barbara Stanwyck"])
    run = _settle({"Q32": NAMES["Q32"]}, {"Q32": P21_MALE}, doc=doc)
    assert run.rows[0].new_names == ["Otis Briggs"]


def test_one_seeds_draws_never_decide_another_seeds_kept_reason() -> None:
    # seed 1 meets "Evelyn Ward" (P21 male, a name read as a woman's); seed 2 only "Victoria", whose name
    # the document has already: seed 2 is no_candidate, with or without seed 1 beside it
    from envbench.rename.engine import advance

    names = {"Q30": ItemNames("Evelyn Ward", ()), "Q50": ItemNames("Victoria", ())}

    def kept(seeds: list[int]) -> dict[int, Any]:
        info = DocInfo(0, _doc(), [None, "Q20"], {("Q20", "PER"): "Q5"})
        runs, slots = plan_runs([info], seeds, "eval", twins=False)
        windows = {(r.slots[1], 0): ["Q30"] if r.seed == 1 else ["Q50"] for r in runs}
        draws = Draws(slots, lambda slot: 1, Auditor(con=None, constraints={}), windows, names, knows_genders=True)
        draws.genders.update({"Q30": P21_MALE, "Q50": P21_MALE})
        for r in runs:
            assert advance(r, draws) is None
        return {r.seed: next(row.reason for row in r.rows if row.entity == 1) for r in runs}

    assert kept([2]) == {2: KeptReason.NO_CANDIDATE}
    assert kept([1, 2]) == {1: KeptReason.NO_GENDER, 2: KeptReason.NO_CANDIDATE}


def test_a_one_word_name_is_read_as_a_given_name_too() -> None:
    # main path: "His wife , Napoleon , … she": the new name was one word, which the first-name check skipped
    woman, man = person_gender("female", None), person_gender("male", None)
    assert reads_against(woman, ["Napoleon"]) and not reads_against(man, ["Napoleon"])
    assert reads_against(man, ["Josephine"]) and not reads_against(woman, ["Josephine"])
    assert not reads_against(woman, ["Tempah"])  # no given name the lexicon counts: either


def test_a_person_nothing_else_genders_is_read_by_its_own_given_names() -> None:
    assert person_gender(None, None, None, ["Josephine"]) == PersonGender("female", FROM_NAME, P21_FEMALE)
    assert person_gender(None, None, None, ["Charles Kothe", "Kothe"]) == PersonGender("male", FROM_NAME, P21_MALE)
    assert person_gender(None, None, None, ["Jean Seberg"]) == UNKNOWN  # a name of either
    assert person_gender(None, None, None, ["Tempah"]) == UNKNOWN
    assert person_gender(None, P21_MALE, None, ["Josephine"]).source == FROM_P21  # read last
    assert name_gender(["Napoleon"]) is None  # fewer carriers than a person's one word needs to tell


def test_his_wife_never_becomes_napoleon() -> None:
    from tests.envbench.rename.test_built_on import _doc, _names, _settle

    doc = _doc(["His wife , Josephine , was born in Martinique ."], [[("Josephine", 0, "PER")]])
    run = _settle(doc, ["Q1"], {0: [("Q7", ItemNames("Napoleon", ())), ("Q8", ItemNames("Hortense", ()))]})
    assert _names(run, 0) == ["Hortense"]
