"""bench/e2e_baseline.py: exact-match entities, clusters by identical name, the gold-free relation rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from envbench.formats.end_to_end import Entity, Relation
from tests.conftest import bench_script

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def base():
    return bench_script("e2e_baseline")


def m(sid: int, a: int, b: int, typ: str, name: str = "x") -> dict:
    return {"name": name, "sent_id": sid, "pos": [a, b], "type": typ}


TRAIN = [{"title": "T", "sents": [["New", "York", "is", "in", "New", "York", "State", "."], ["York", "won", "."]],
          # "York" is annotated twice as ORG and once as LOC: ORG wins the vote
          "vertexSet": [[m(0, 0, 2, "LOC")], [m(0, 4, 7, "LOC")], [m(1, 0, 1, "ORG")], [m(0, 1, 2, "ORG")],
                        [m(1, 0, 1, "LOC")], [m(1, 0, 1, "ORG")]],
          "labels": [{"h": 0, "t": 1, "r": "P131", "evidence": [0]}]}]


def test_names_take_their_most_annotated_type(base) -> None:
    names = base.training_names(TRAIN)
    assert names == {("New", "York"): "LOC", ("New", "York", "State"): "LOC", ("York",): "ORG"}


def test_longest_match_first_and_clusters_by_identical_name(base) -> None:
    names = base.training_names(TRAIN)
    doc = {"title": "D", "sents": [["New", "York", "State", "and", "New", "York", "."], ["York", "York"]]}
    got = base.find_entities(doc, names, sorted({len(k) for k in names}, reverse=True))
    # "New York State" wins over "New York" at token 0; its "York" is not matched again inside it
    assert got == [Entity(((0, 0, 3),), "LOC"), Entity(((0, 4, 6),), "LOC"), Entity(((1, 0, 1), (1, 1, 2)), "ORG")]


def test_memorized_relations_are_training_facts_by_name(base) -> None:
    doc = {"title": "D", "sents": [["New", "York", "in", "New", "York", "State"]]}
    ents = [Entity(((0, 0, 2),), "LOC"), Entity(((0, 3, 6),), "LOC")]
    facts = base.token_facts(TRAIN)
    assert ("New York", "New York State", "P131") in facts
    assert base.memorized_relations(doc, ents, base.facts_by_pair(facts)) == [Relation(0, 1, "P131")]  # not the reverse direction


def test_type_prior_keeps_rules_precise_enough_on_training(base) -> None:
    # LOC-LOC same-sentence pairs in TRAIN: (0,1), (1,0) -> P131 holds for 1 of 2 (>= 0.2): kept
    rules = base.type_prior(TRAIN)
    assert rules == {("LOC", "LOC"): "P131"}
    ents = [Entity(((0, 0, 1),), "LOC"), Entity(((0, 2, 3),), "LOC"), Entity(((1, 0, 1),), "LOC")]
    # entity 2 shares no sentence with the others
    assert base.prior_relations(ents, rules) == [Relation(0, 1, "P131"), Relation(1, 0, "P131")]
