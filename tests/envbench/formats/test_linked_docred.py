"""The Linked-DocRED writer and reader."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envbench.core.errors import DataError
from envbench.formats.linked_docred import (
    links_from_linked_docred,
    read_linked_docred,
    to_linked_docred,
    validate_file,
    write_linked_docred,
)
from envbench.worlds.sample import make_sample


def _doc() -> dict:
    # "Vordia" is annotated as two DocRED entities (country and demonym), linked to the same item.
    sents = [["Ana", "Lind", "is", "a", "Vordian", "singer", "born", "in", "1970", "."],
             ["She", "lives", "in", "Vordia", "with", "12", "cats", "near", "the", "Blue", "Fair", "."]]
    return {
        "title": "Ana Lind",
        "sents": sents,
        "vertexSet": [
            [{"name": "Ana Lind", "pos": [0, 2], "sent_id": 0, "type": "PER"}],
            [{"name": "Vordian", "pos": [4, 5], "sent_id": 0, "type": "LOC"}],
            [{"name": "1970", "pos": [8, 9], "sent_id": 0, "type": "TIME"}],
            [{"name": "Vordia", "pos": [3, 4], "sent_id": 1, "type": "LOC"}],
            [{"name": "12", "pos": [5, 6], "sent_id": 1, "type": "NUM"}],
            [{"name": "Blue Fair", "pos": [9, 11], "sent_id": 1, "type": "MISC"}],
        ],
        "labels": [
            {"r": "P27", "h": 0, "t": 1, "evidence": [0]},
            {"r": "P569", "h": 0, "t": 2, "evidence": [0]},
            {"r": "P27", "h": 0, "t": 3, "evidence": [0, 1]},
            {"r": "P17", "h": 3, "t": 1, "evidence": [1]},
            {"r": "P276", "h": 5, "t": 3, "evidence": [1]},
        ],
    }


LINKS = {"Ana Lind": ["Q900000001", "Q900000002", None, "Q900000002", None, None]}


def test_conversion_merges_coreferent_entities_and_reindexes() -> None:
    (ld,) = to_linked_docred([_doc()], LINKS, {"Q900000001": "Ana Lind"})
    ents = ld["entities"]
    assert [e["id"] for e in ents] == [0, 1, 2, 3, 4]
    assert [e["type"] for e in ents] == ["PER", "LOC", "TIME", "NUM", "MISC"]
    assert [m["name"] for m in ents[1]["mentions"]] == ["Vordian", "Vordia"]  # merged, first entity keeps its place
    assert all("type" not in m for e in ents for m in e["mentions"])
    link = [e["entity_linking"] for e in ents]
    assert link[0]["wikipedia_resource"] == "Ana_Lind" and link[0]["wikidata_resource"] == "Q900000001"
    assert link[1]["wikipedia_resource"] == "Q900000002"  # no page: the QID stands in, as Linked-DocRED writes it
    assert link[2]["wikipedia_resource"] == "#ignored#" and link[2]["method"] == "num/time"
    assert link[4]["wikipedia_resource"] == "#DocRED-1#" and link[4]["wikidata_resource"] is None
    # The self-relation P17(Vordia, Vordian) disappears; duplicates are kept as Linked-DocRED does.
    assert ld["relations"] == [
        {"r": "P27", "h": 0, "t": 1, "evidence": [0]},
        {"r": "P569", "h": 0, "t": 2, "evidence": [0]},
        {"r": "P27", "h": 0, "t": 1, "evidence": [0, 1]},
        {"r": "P276", "h": 4, "t": 1, "evidence": [1]},
    ]
    assert "labels" not in ld and "vertexSet" not in ld and ld["text"].startswith("Ana Lind is")


def test_reader_gives_qids_and_projects_back_to_docred(tmp_path: Path) -> None:
    path = tmp_path / "ld.json"
    write_linked_docred(path, [_doc()], LINKS)
    (doc,) = read_linked_docred(path)
    assert [e["qid"] for e in doc["entities"]] == ["Q900000001", "Q900000002", None, None, None]
    assert doc["entities"][0]["mentions"] == [{"sent_id": 0, "pos": [0, 2], "name": "Ana Lind"}]
    assert links_from_linked_docred([doc], [_doc()]) == LINKS


def test_reader_accepts_url_links_and_missing_fields(tmp_path: Path) -> None:
    (ld,) = to_linked_docred([_doc()], LINKS)
    ld["entities"][0]["entity_linking"]["wikidata_resource"] = "https://www.wikidata.org/wiki/Q42"
    del ld["entities"][1]["entity_linking"]["wikidata_resource"]
    path = tmp_path / "ld.json"
    path.write_bytes(orjson.dumps([ld]))
    (doc,) = read_linked_docred(path)
    assert [e["qid"] for e in doc["entities"]][:2] == ["Q42", None]


def test_reader_rejects_docred_files_and_validates(tmp_path: Path) -> None:
    p = tmp_path / "docred.json"
    p.write_text(json.dumps([_doc()]))
    with pytest.raises(DataError, match="not a Linked-DocRED file"):
        read_linked_docred(p)
    (ld,) = to_linked_docred([_doc()], LINKS)
    ld["entities"][0]["mentions"][0]["pos"] = [0, 40]
    p.write_bytes(orjson.dumps([ld]))
    with pytest.raises(DataError, match=r"entity 0 mention 0: pos \[0, 40\] is out of range"):
        read_linked_docred(p)
    assert read_linked_docred(p, skip_invalid=True) == []
    report = validate_file(p, skip_invalid=True)
    assert report.format == "Linked-DocRED" and len(report.docset.skipped) == 1


def test_sample_world_linked_docred_agrees_with_links(tmp_path: Path) -> None:
    res = make_sample(tmp_path)
    linked = read_linked_docred(res.linked_docred)
    docs = json.loads((tmp_path / "docs" / "test.json").read_text())
    links = json.loads(res.links.read_text())
    assert [d["title"] for d in linked] == [d["title"] for d in docs]
    projected = links_from_linked_docred(linked, docs)
    assert all(projected[d["title"]] == links[d["title"]] for d in docs)
    assert any(len(ld["entities"]) < len(d["vertexSet"]) for ld, d in zip(linked, docs))  # a merge happened


@st.composite
def linked_cases(draw: st.DrawFn) -> tuple[dict, list[str | None]]:
    sents: list[list[str]] = []
    vertex_set = []
    qids: list[str | None] = []
    for _ in range(draw(st.integers(1, 6))):
        etype = draw(st.sampled_from(("PER", "LOC", "MISC", "TIME", "NUM")))
        mentions = []
        for _ in range(draw(st.integers(1, 3))):
            sents.append(["Word", str(len(sents))])
            mentions.append({"name": "Word", "pos": [0, 1], "sent_id": len(sents) - 1, "type": etype})
        vertex_set.append(mentions)
        q = draw(st.sampled_from((None, "Q1", "Q2", "Q3")))
        qids.append(None if etype in ("TIME", "NUM") else q)
    n = len(vertex_set)
    labels = [{"r": "P17", "h": h, "t": t, "evidence": [0]}
              for h, t in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=6))]
    return {"title": "T", "sents": sents, "vertexSet": vertex_set, "labels": labels}, qids


@settings(max_examples=150, deadline=None)
@given(linked_cases())
def test_linking_survives_the_linked_docred_round_trip(case: tuple[dict, list[str | None]]) -> None:
    doc, qids = case
    (ld,) = to_linked_docred([doc], {"T": qids})
    ents = ld["entities"]
    # One Linked-DocRED entity per distinct resource; every mention kept exactly once.
    assert sorted((m["sent_id"], m["pos"][0]) for e in ents for m in e["mentions"]) == sorted(
        (m["sent_id"], m["pos"][0]) for e in doc["vertexSet"] for m in e)
    linked = [e["entity_linking"]["wikidata_resource"] for e in ents if e["entity_linking"]["wikidata_resource"]]
    assert len(linked) == len(set(linked)) and set(linked) == {q for q in qids if q}
    assert all(0 <= r["h"] < len(ents) and 0 <= r["t"] < len(ents) and r["h"] != r["t"] for r in ld["relations"])
    # Relations point at the same items as before; only those that became self-relations are gone.
    def ident(i: int, table: list) -> object:
        return table[i] if table[i] is not None else ("entity", i)
    before = sorted(str((ident(r["h"], qids), ident(r["t"], qids))) for r in doc["labels"]
                    if ident(r["h"], qids) != ident(r["t"], qids))
    new_q = [e["entity_linking"]["wikidata_resource"] for e in ents]
    first = {}  # new index of an unlinked entity -> its old index
    for new_i, e in enumerate(ents):
        m = e["mentions"][0]
        first[new_i] = next(i for i, ent in enumerate(doc["vertexSet"]) if ent[0] == {**m, "type": ent[0]["type"]})
    after = sorted(str((new_q[r["h"]] or ("entity", first[r["h"]]), new_q[r["t"]] or ("entity", first[r["t"]])))
                   for r in ld["relations"])
    assert after == before
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "ld.json"
        p.write_bytes(orjson.dumps([ld]))
        assert links_from_linked_docred(read_linked_docred(p), [doc]) == {"T": qids}


def test_reader_names_a_prediction_file(tmp_path: Path) -> None:
    p = tmp_path / "pred.json"
    p.write_text(json.dumps([{"title": "T", "h_idx": 0, "t_idx": 1, "r": "P17"}]))
    with pytest.raises(DataError) as exc:
        read_linked_docred(p)
    assert str(exc.value) == (f"{p}: holds predictions (a list of {{title, h_idx, t_idx, r}}), not a Linked-DocRED "
                              "file; pass a Linked-DocRED or Linked-Re-DocRED file (documents with 'entities')")
