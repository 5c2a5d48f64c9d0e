"""Popularity on a hand-made dump: ingest-dump counts it, generate --popularity draws from its quartiles,
report's Table 4 reads it, and a dump without statements has none (null) and says so."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import polars as pl
import pytest

from envbench.core.errors import EnvbenchError
from envbench.rename.candidates import number_candidates
from envbench.rename.generate import generate
from envbench.scoring.report import make_report, quartiles
from envbench.scoring.report.analyses import has_popularity
from envbench.worlds.wikidata_json import DumpWriter, item, item_statement
from tests.envbench.index_fixture import eval_qids, mention
from wikidata_index.index import WikidataIndex
from wikidata_index.ingest import ingest_dump

FIRST = ("Ann", "Bea", "Cid", "Dov", "Eli", "Fay", "Gus", "Hal", "Ida")
PERSONS = eval_qids("Q", 9, start=1000)  # person i (0-based) has popularity i + 1
HUB = "Q77"  # a language the persons speak: the statements that make them popular


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("pop")
    with DumpWriter(root / "dump.json") as w:
        w.write(item("Q5", labels={"en": "human"}))
        w.write(item(HUB, labels={"en": "Esperanto"}))
        for i, q in enumerate(PERSONS):
            claims = {"P31": [item_statement(q, "P31", "Q5")],
                      "P1412": [item_statement(q, "P1412", HUB, key=k) for k in range(i)]}  # i + 1 statements
            w.write(item(q, labels={"en": f"{FIRST[i]} Zorvath"}, claims=claims))
    ingest_dump(root / "dump.json", root / "index", progress=False)
    with DumpWriter(root / "bare.json") as w:  # no statement at all: nothing to count
        for i, q in enumerate(PERSONS):
            w.write(item(q, labels={"en": f"{FIRST[i]} Zorvath"}))
    ingest_dump(root / "bare.json", root / "bare", progress=False)
    doc = {"title": "Profile", "sents": [["Eli", "Zorvath", "wrote", "books", "."]],
           "vertexSet": [[mention("Eli Zorvath", 0, [0, 2], "PER")]], "labels": []}
    (root / "docs.json").write_text(json.dumps([doc]))
    (root / "links.json").write_text(json.dumps({"Profile": [PERSONS[4]]}))
    return {"root": root, "index": root / "index", "bare": root / "bare", "docs": root / "docs.json",
            "links": root / "links.json"}


def test_ingest_counts_relation_instances_as_head_or_tail(world: dict[str, Path]) -> None:
    with WikidataIndex(world["index"]) as ix:
        assert [ix.popularity(q) for q in PERSONS] == list(range(1, 10))
        assert ix.popularity(HUB) == sum(range(9))  # the tail of every P1412 statement
        assert ix.popularity("Q5") == 9
    with WikidataIndex(world["bare"]) as ix:
        assert ix.con.execute("SELECT count(*), count(popularity) FROM entities").fetchall() == [(9, 0)]
    assert has_popularity(world["index"]) and not has_popularity(world["bare"])


def test_quartiles_of_the_class_by_hand(world: dict[str, Path]) -> None:
    # popularity 1..9: the first quartile is 3, the third 7 (linear interpolation, "inclusive")
    assert quartiles(list(range(1, 10))) == [3.0, 5.0, 7.0]
    assert statistics.quantiles(range(1, 10), n=4, method="inclusive") == [3.0, 5.0, 7.0]
    with WikidataIndex(world["index"]) as ix:
        for bin_, want in (("low", PERSONS[:3]), ("high", PERSONS[6:])):
            rows = [r for batch in number_candidates(ix.con, restrict=False, popularity=bin_)
                    for r in batch.to_pylist() if r["fine_type"] == "Q5" and r["min_names"] == 1]
            assert sorted(r["id"] for r in rows) == sorted(want), bin_
            assert sorted(r["rnk"] for r in rows) == [0, 1, 2]  # numbered within the bin


@pytest.mark.parametrize(("bin_", "allowed"), [("low", PERSONS[:3]), ("high", PERSONS[6:]), (None, PERSONS)])
def test_generate_draws_from_the_popularity_quartile(world: dict[str, Path], tmp_path: Path, bin_: str | None,
                                                     allowed: list[str]) -> None:
    generate(world["docs"], world["index"], tmp_path, links=world["links"], seeds=5, popularity=bin_, progress=False, allow_training_names=True)
    rows = pl.read_parquet(tmp_path / "substitutions.parquet").to_dicts()
    assert all(r["kind"] == "linked" for r in rows)
    drawn = {r["new_qid"] for r in rows}
    assert drawn <= set(allowed) - {PERSONS[4]}
    if bin_ is None:  # the default draws across the class
        assert drawn - set(PERSONS[:3]) - set(PERSONS[6:])
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats.get("attack") == (None if bin_ is None else
                                   {"name": "rename", "rate": 1.0, "popularity": bin_, "negative_control": False})


def test_table4_gives_the_quartiles_of_original_and_renamed(world: dict[str, Path], tmp_path: Path) -> None:
    env = tmp_path / "env"
    generate(world["docs"], world["index"], env, links=world["links"], seeds=5, popularity="high", progress=False, allow_training_names=True)
    (tmp_path / "pred.json").write_text("[]")
    rep = make_report(world["docs"], tmp_path / "pred.json", env / "docs_env.json", tmp_path / "pred.json",
                      index=world["index"], out=tmp_path / "rep").report
    t4 = rep["table4_popularity"]["per_type"]["PER"]
    pops = sorted(PERSONS.index(r["new_qid"]) + 1 for r in pl.read_parquet(env / "substitutions.parquet").to_dicts())
    assert t4["original_quartiles"] == [5.0, 5.0, 5.0] and t4["renamed"] == 5
    assert t4["new_quartiles"] == statistics.quantiles(pops, n=4, method="inclusive")
    assert min(pops) >= 7
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| PER | 5 | 0 | 5 / 5 / 5 |" in md


def test_a_dump_without_statements_has_no_popularity_and_says_so(world: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(EnvbenchError) as exc:
        generate(world["docs"], world["bare"], tmp_path / "o", links=world["links"], seeds=1, popularity="low",
                 progress=False, allow_training_names=True)
    assert str(exc.value) == (f"--popularity: the index {world['bare']} has no popularity (its dump holds no "
                              "item-valued statements to count); leave --popularity out, or ingest a dump with "
                              "statements")
    env = tmp_path / "env"
    generate(world["docs"], world["index"], env, links=world["links"], seeds=1, progress=False, allow_training_names=True)
    (tmp_path / "pred.json").write_text("[]")
    r = make_report(world["docs"], tmp_path / "pred.json", env / "docs_env.json", tmp_path / "pred.json",
                    index=world["bare"], out=tmp_path / "rep")
    assert r.report["table4_popularity"] is None
    assert (f"Table 4 (popularity) skipped: the index {world['bare']} has no popularity (its dump holds no "
            "item-valued statements to count); ingest a dump with statements") in r.notes
