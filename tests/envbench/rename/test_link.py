from __future__ import annotations

import json
from pathlib import Path

import pytest

from envbench.core.errors import DataError
from envbench.formats.docred import read_docs
from envbench.formats.links import read_links
from envbench.rename.link import check_links_against_index, link_documents, link_file
from etl.io import InputError
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


def test_qids_absent_from_the_index_count_as_unlinked(tmp_path: Path) -> None:
    # regression (issue 17, item 10): they used to pass as links (and end as "no_type")
    con = connect(tiny_world().write(tmp_path))
    links = {"A": ["Q100", "Q999999", None, "Q200"], "B": ["Q999999", "Q101", "Q102"]}
    checked = check_links_against_index(links, con, path="l.json", index="idx")
    assert checked.links == {"A": ["Q100", None, None, "Q200"], "B": [None, "Q101", "Q102"]}
    assert (checked.linked, checked.missing) == (6, 2)
    assert checked.note() == ("l.json: 2 of its 6 linked entities name items that are not in the index (e.g. "
                              "Q999999); they count as unlinked")
    assert check_links_against_index({"A": ["Q100", None]}, con, path="l.json", index="idx").note() is None


def test_links_made_for_another_index_are_refused(tmp_path: Path) -> None:
    con = connect(tiny_world().write(tmp_path))
    links = {"A": ["Q900000001", "Q900000002", "Q100"], "B": [None]}
    with pytest.raises(DataError) as exc:
        check_links_against_index(links, con, path="W/links.json", index="kbidx")
    assert str(exc.value) == (
        "W/links.json: 2 of its 3 linked entities (67%) name items that are not in the index at kbidx (e.g. "
        "Q900000001); the link file was most likely made for another index (its QIDs run Q100..Q900000002, the "
        "index's items Q100..Q405): pass the link file made for this index (make-sample and kb-from-corpus write "
        "one beside each dump), or make one with `envbench link DOCS --index kbidx --out LINKS.json`"
    )


def test_link_file_is_a_step_with_a_manifest_beside_its_output(tmp_path: Path) -> None:
    w = sample_world()
    out = tmp_path / "l.json"
    first = link_file(w.test, w.index, out, gold=w.links)
    assert not first.up_to_date and first.result is not None and first.notes == []
    manifest = json.loads((tmp_path / "l.json.manifest.json").read_text())
    assert manifest["step"] == "link" and [o["name"] for o in manifest["outputs"]] == ["l.json"]
    assert [i["name"] for i in manifest["inputs"]] == ["test.json", "links.json"]
    assert json.loads(out.read_text()) == first.result.links
    again = link_file(w.test, w.index, out, gold=w.links)
    assert again.up_to_date and again.summary() == (f"{out} is up to date (same documents, index and parameters); "
                                                    "nothing to do. Pass --force to link again.")
    assert not link_file(w.test, w.index, out, gold=w.links, threshold=0.9).up_to_date
    assert not link_file(w.test, w.index, out, gold=w.links, threshold=0.9, force=True).up_to_date
    with pytest.raises(InputError, match="would be overwritten by this step's output"):
        link_file(w.test, w.index, w.test)
