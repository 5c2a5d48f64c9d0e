from __future__ import annotations

import json
from pathlib import Path

import pytest

from envbench.core.errors import DataError
from envbench.formats.docred import read_docs
from envbench.formats.links import align_linked_docred, read_links
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
