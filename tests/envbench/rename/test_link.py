from __future__ import annotations

from pathlib import Path

from envbench.formats.docred import read_docs
from envbench.formats.links import read_links
from envbench.rename.link import link_documents
from tests.envbench.index_fixture import connect, mention, sample_world, tiny_world
from wikidata_index.index import WikidataIndex


def _index(tmp_path: Path) -> Path:
    b = tiny_world()
    b.item("Q250", "Springfield", p31=("Q515",), popularity=50)
    b.item("Q251", "Springfield", p31=("Q515",), popularity=1)
    b.item("Q150", "Homer", p31=("Q5",), popularity=3)
    b.item("Q152", "Paris", p31=("Q5",), popularity=500)
    b.item("Q252", "Paris", p31=("Q515",), popularity=5)
    for q in ("Q160", "Q161", "Q162"):
        b.item(q, "John Smith", p31=("Q5",), popularity=7)
    b.edge("Q150", "P19", "Q251")
    return b.write(tmp_path)


DOC = {
    "title": "Homer",
    "sents": [["Homer", "was", "born", "in", "Springfield", "near", "Paris", "."],
              ["John", "Smith", "and", "PERSON", "5", "met", "Homer", "."]],
    "vertexSet": [
        [mention("Homer", 0, [0, 1], "PER"), mention("Homer", 1, [6, 7], "PER")],
        [mention("Springfield", 0, [4, 5], "LOC")],
        [mention("Paris", 0, [6, 7], "LOC")],
        [mention("John Smith", 1, [0, 2], "PER")],
        [mention("PERSON 5", 1, [3, 5], "PER")],
        [mention("1963", 0, [0, 1], "TIME")],
    ],
    "labels": [{"h": 0, "t": 1, "r": "P19", "evidence": [0]}],
}


def test_joint_disambiguation_type_filter_folding_and_abstention(tmp_path: Path) -> None:
    con = connect(_index(tmp_path))
    res = link_documents([DOC], con)
    # Springfield: the less popular item, because the index has Homer -P19-> it; Paris: the city
    # (the person is more popular but not a LOC); John Smith: three equal items, abstain;
    # "PERSON 5" matches "Person 5" folded; TIME is never linked.
    assert res.links["Homer"] == ["Q150", "Q251", "Q252", None, "Q105", None]
    assert res.confidence["Homer"][3] is not None and res.confidence["Homer"][3] < 0.5
    cov = res.report["coverage"]
    assert cov["PER"] == {"entities": 3, "linked": 2, "coverage": round(2 / 3, 6)}
    assert cov["LOC"]["linked"] == 2


def test_without_the_gold_triple_popularity_decides(tmp_path: Path) -> None:
    con = connect(_index(tmp_path))
    doc = {**DOC, "labels": []}
    assert link_documents([doc], con).links["Homer"][1] == "Q250"


def test_accuracy_on_the_sample_world() -> None:
    w = sample_world()
    docs = read_docs(w.test).docs
    gold = read_links(w.links, docs)
    with WikidataIndex(w.index) as ix:
        res = link_documents(docs, ix.con, gold=gold)
    acc = res.report["accuracy"]
    assert acc["predicted"] > 100 and acc["accuracy"] >= 0.95 and acc["recall"] >= 0.9
    assert res.report["coverage"]["total"]["coverage"] >= 0.9


def test_tokenised_mentions_meet_written_labels(tmp_path: Path) -> None:
    b = tiny_world()
    b.item("Q170", "Jean-Paul Sartre", p31=("Q5",))
    b.item("Q270", "St. Louis", p31=("Q515",))
    doc = {"title": "J", "sents": [["Jean", "-", "Paul", "Sartre", "visited", "St", ".", "Louis", "."]],
           "vertexSet": [[mention("Jean - Paul Sartre", 0, [0, 4], "PER")], [mention("St . Louis", 0, [5, 8], "LOC")]],
           "labels": []}
    assert link_documents([doc], connect(b.write(tmp_path))).links["J"] == ["Q170", "Q270"]
