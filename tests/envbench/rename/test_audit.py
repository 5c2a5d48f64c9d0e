from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from envbench.rename.audit import Auditor
from envbench.rename.candidates import pool_of
from envbench.rename.generate import generate
from tests.envbench.index_fixture import Builder, connect, mention, tiny_world

CAPITALS = [f"Q{200 + k}" for k in (0, 10, 11, 12, 13, 14, 15, 16, 17, 18)]


def _world() -> Builder:
    b = tiny_world()
    for q in CAPITALS:  # a few cities are also instances of "capital" (Q5119)
        b.rows["types"].append({"id": q, "class": "Q5119", "rank": "normal"})
    b.constraint("P19", "value", "Q5119")  # place of birth must be a capital (a made-up constraint)
    b.constraint("P19", "subject", "Q215627")  # ... of a person (human is a subclass)
    return b


DOC = {
    "title": "Person 0",
    "sents": [["Person", "0", "was", "born", "in", "City", "0", "."]],
    "vertexSet": [[mention("Person 0", 0, [0, 2], "PER")], [mention("City 0", 0, [5, 7], "LOC")]],
    "labels": [{"h": 0, "t": 1, "r": "P19", "evidence": [0]}],
}


def test_checks_follow_constraints_and_closure(tmp_path: Path) -> None:
    con = connect(_world().write(tmp_path))
    aud = Auditor.for_docs(con, [DOC])
    aud.prepare(["Q100", "Q200", "Q201", "Q300"])
    assert aud.holds("Q200", "P19", "value") is True
    assert aud.holds("Q201", "P19", "value") is False
    assert aud.holds("Q100", "P19", "subject") is True  # human -> person through P279
    assert aud.holds("Q300", "P19", "subject") is False
    assert aud.holds("Q100", "P17", "subject") is None  # no constraint loaded
    assert aud.entity_checks(DOC, 1) == [("P19", "value")]
    assert aud.required("Q201", [("P19", "value")]) == []  # did not hold before: nothing to keep


def test_generate_rejects_candidates_that_break_a_constraint(tmp_path: Path) -> None:
    index = _world().write(tmp_path / "index")
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps([DOC]))
    links = tmp_path / "links.json"
    links.write_text(json.dumps({"Person 0": ["Q100", "Q200"]}))
    res = generate(docs, index, tmp_path / "out", links=links, seeds=5, progress=False, allow_training_names=True)
    subs = pl.read_parquet(tmp_path / "out" / "substitutions.parquet")
    cities = subs.filter(pl.col("entity") == 1)["new_qid"].to_list()
    assert all(q in CAPITALS and pool_of(q) == "eval" for q in cities), cities
    audit = res.stats["audit"]
    assert audit["preserved"] and audit["per_relation"]["P19"]["rejected"] > 0
    assert audit["per_relation"]["P19"]["held_after"] == audit["per_relation"]["P19"]["held_before"] == 10
    # an index without a manifest is fingerprinted from its table files, not from the cache in derived/
    assert (index / "derived" / "candidates.parquet").is_file()
    again = generate(docs, index, tmp_path / "out", links=links, seeds=5, progress=False, allow_training_names=True)
    assert again.up_to_date


def test_an_item_that_is_a_class_is_checked_through_its_own_superclasses(tmp_path: Path) -> None:
    # "instance or subclass of" lets an item pass as a subclass: its own P279 closure counts. Items
    # without a P279 statement are left out of the closure lookup, as their own only ancestor.
    from wikidata_index.schema import (
        RELATION_INSTANCE_OR_SUBCLASS,
        RELATION_SUBCLASS_OF,
        VALUE_TYPE_CONSTRAINT,
    )

    b = _world()
    b.item("Q900", "Genre A", p31=("Q1",)).subclass("Q900", "Q901").subclass("Q901", "Q902")
    b.item("Q903", "Genre B", p31=("Q1",))
    for how, pid in ((RELATION_SUBCLASS_OF, "P136"), (RELATION_INSTANCE_OR_SUBCLASS, "P137")):
        b.rows["property_constraints"].append({"property": pid, "constraint_type": VALUE_TYPE_CONSTRAINT,
                                               "class": "Q902",
                                               "relation": how})
    con = connect(b.write(tmp_path))
    doc = {**DOC, "labels": [{"h": 0, "t": 1, "r": "P136", "evidence": [0]},
                             {"h": 0, "t": 1, "r": "P137", "evidence": [0]}]}
    aud = Auditor.for_docs(con, [doc])
    aud.prepare(["Q900", "Q903"])
    assert aud.holds("Q900", "P136", "value") is True and aud.holds("Q900", "P137", "value") is True
    assert aud.holds("Q903", "P136", "value") is False and aud.holds("Q903", "P137", "value") is False
    assert "Q900" in aud.anc and "Q903" not in aud.anc  # only the item with a P279 statement was looked up
