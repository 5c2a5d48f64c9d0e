from __future__ import annotations

import json
from pathlib import Path

import pytest

from envbench.core.errors import DataError
from envbench.formats.docred import read_docs
from envbench.formats.links import align_linked_docred, read_link_file, read_links
from tests.envbench.index_fixture import mention, sample_world

DOCS = [
    {"title": "A", "sents": [["Anna", "met", "Bob", "in", "Rome", ".", "Bob", "left", "."]],
     "vertexSet": [[mention("Anna", 0, [0, 1], "PER")],
                   [mention("Bob", 0, [2, 3], "PER"), mention("Bob", 0, [6, 7], "PER")],
                   [mention("Rome", 0, [4, 5], "LOC")]],
     "labels": []},
    {"title": "B", "sents": [["Zed", "."]], "vertexSet": [[mention("Zed", 0, [0, 1], "PER")]], "labels": []},
]


def _write(tmp_path: Path, obj: object, name: str = "links.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(obj), encoding="utf-8")
    return p


def test_project_format(tmp_path: Path) -> None:
    p = _write(tmp_path, {"A": ["Q1", None, "Q3"], "extra": ["Q9"]})
    assert read_links(p, DOCS) == {"A": ["Q1", None, "Q3"], "B": [None]}


def test_count_mismatch_names_the_document(tmp_path: Path) -> None:
    p = _write(tmp_path, {"A": ["Q1", None]})
    with pytest.raises(DataError) as exc:
        read_links(p, DOCS)
    assert str(exc.value) == (
        f"{p}: document 0 'A': the link file lists 2 entities but the document has 3; give a QID or null "
        "for each entity index (or regenerate it with `envbench link`)"
    )


def test_bad_qid(tmp_path: Path) -> None:
    p = _write(tmp_path, {"A": ["Q1", "P17", None]})
    with pytest.raises(DataError, match=r"document 'A': entity 1: 'P17' is not a Wikidata item id"):
        read_links(p, DOCS)
    with pytest.raises(DataError, match="is a JSON object"):
        read_links(_write(tmp_path, "Q1", "s.json"), DOCS)
    # 400 digits is no item (a QID is read as a 64-bit integer), and the message does not print them all
    p = _write(tmp_path, {"A": ["Q1", "Q" + "9" * 400, None]}, "long.json")
    with pytest.raises(DataError) as e:
        read_links(p, DOCS)
    assert str(e.value) == (f"{p}: document 'A': entity 1: 'Q{'9' * 35}... is not a Wikidata item id; write a "
                            "QID such as \"Q42\" or null")
    assert read_links(_write(tmp_path, {"A": ["Q1", "Q" + "9" * 18, None]}, "ok.json"), DOCS)


def test_linked_docred_alignment_by_mention_positions() -> None:
    # Linked-DocRED merged Bob's mentions into entity 0 and re-indexed; Anna is #ignored#.
    linked = [{"title": "A", "entities": [
        {"qid": "Q2", "mentions": [{"sent_id": 0, "pos": [6, 7], "name": "Bob"},
                                   {"sent_id": 0, "pos": [2, 3], "name": "Bob"}]},
        {"qid": "Q3", "mentions": [{"sent_id": 0, "pos": [4, 5], "name": "Rome"}]},
        {"qid": None, "mentions": [{"sent_id": 0, "pos": [0, 1], "name": "Anna"}]},
    ]}]
    assert align_linked_docred(DOCS, linked) == {"A": [None, "Q2", "Q3"], "B": [None]}


def test_linked_docred_file_of_the_sample_world() -> None:
    w = sample_world()
    docs = read_docs(w.test).docs
    via_linked = read_links(w.sample / "docs" / "test.linked-docred.json", docs)
    assert via_linked == read_links(w.links, docs)
    assert sum(q is not None for v in via_linked.values() for q in v) > 100


def _linked(tmp_path: Path, docs: list[dict], links: dict, name: str = "ld.json") -> tuple[Path, list[dict]]:
    from envbench.formats.linked_docred import to_linked_docred

    records = to_linked_docred(docs, links)
    p = tmp_path / name
    p.write_text(json.dumps(records), encoding="utf-8")
    return p, records


def test_missing_titles_are_counted_in_a_warning(tmp_path: Path) -> None:
    # regression (issue 17, item 12): a link file without some titles left them unlinked silently
    p = _write(tmp_path, {"A": ["Q1", None, "Q3"]})
    lf = read_link_file(p, DOCS)
    assert lf.links == {"A": ["Q1", None, "Q3"], "B": [None]}
    assert lf.warnings() == [f"{p}: 1 of the 2 documents have no entry in this link file (e.g. 'B'); their "
                             "entities stay unlinked"]
    assert lf.describe() == f"links {p}: links, 1 of 2 documents, 2 of 4 entities linked"
    assert read_link_file(_write(tmp_path, {"A": ["Q1", None, "Q3"], "B": [None]}, "all.json"), DOCS).warnings() == []


def test_linked_docred_entities_without_links_or_with_garbage_are_counted(tmp_path: Path) -> None:
    # regression (issue 17, item 12): such entities were silently unlinked
    p, records = _linked(tmp_path, DOCS, {"A": ["Q1", "Q2", "Q3"], "B": ["Q4"]})
    del records[0]["entities"][0]["entity_linking"]
    records[0]["entities"][2]["entity_linking"]["wikidata_resource"] = "Rome (city)"
    records[1]["entities"][0]["entity_linking"]["wikidata_resource"] = 42
    p.write_text(json.dumps(records), encoding="utf-8")
    lf = read_link_file(p, DOCS)
    assert lf.links == {"A": [None, "Q2", None], "B": [None]}
    assert lf.warnings() == [
        f"{p}: 1 of its 4 entities have no entity_linking (e.g. document 'A' entity 0); they stay unlinked",
        f"{p}: 2 of its 4 entities have a wikidata_resource that is not a Wikidata item id (e.g. 'Rome (city)' in "
        "document 'A' entity 2); they stay unlinked",
    ]
    assert lf.describe().endswith("; 100.0% of 4 entities aligned by mention position")


def test_a_linked_docred_file_whose_mentions_do_not_align_is_refused(tmp_path: Path) -> None:
    # regression (issue 17, item 11): shifted positions silently unlinked the document
    p, records = _linked(tmp_path, DOCS, {"A": ["Q1", "Q2", "Q3"], "B": ["Q4"]})
    for ent in records[0]["entities"]:
        for m in ent["mentions"]:
            m["pos"] = [m["pos"][0] + 1, m["pos"][1] + 1]
            m["name"] = "x"
    p.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_link_file(p, DOCS)
    assert str(exc.value) == (
        f"{p}: only 25.0% of the 4 entities of the 2 documents it shares with the DocRED file align with its mentions "
        "by (sent_id, pos) (at least 80% needed); its mentions are not these documents' mentions: pass the "
        "Linked-DocRED file made from these documents, or a {title: [QID or null per entity index]} link file"
    )


def test_one_misaligned_document_of_many_is_named_in_a_warning(tmp_path: Path) -> None:
    docs = [{**DOCS[1], "title": f"B{i}"} for i in range(19)] + [DOCS[0]]
    p, records = _linked(tmp_path, docs, {d["title"]: ["Q4"] * len(d["vertexSet"]) for d in docs})
    for ent in records[-1]["entities"]:  # document "A": every position shifted by one
        for m in ent["mentions"]:
            m["pos"] = [m["pos"][0] + 1, m["pos"][1] + 1]
            m["name"] = "x"
    p.write_text(json.dumps(records), encoding="utf-8")
    lf = read_link_file(p, docs)
    assert lf.alignment is not None and lf.alignment.rate == 19 / 22
    assert lf.links["A"] == [None, None, None] and lf.links["B0"] == ["Q4"]
    assert lf.warnings() == [f"{p}: in 1 document fewer than 80% of the entities align with this file's mentions "
                             "by (sent_id, pos) (e.g. 'A': 0 of 3); the others stay unlinked"]
