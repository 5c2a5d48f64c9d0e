"""The Parquet dataset format of `envbench export`: rows, schema, and the one reader behind read_docred."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envbench.core.errors import DataError
from envbench.core.relations import RELATIONS
from envbench.formats import hf
from envbench.formats.docred import read_docs


def _doc(title: str = "Lake Vord", *, labels: bool = True) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "title": title,
        "sents": [["Lake", "Vord", "lies", "in", "Vordia", "."], ["It", "was", "named", "in", "1901", "."]],
        "vertexSet": [
            [{"name": "Lake Vord", "pos": [0, 2], "sent_id": 0, "type": "LOC", "global_pos": [0, 0], "index": "0_0"}],
            [{"name": "Vordia", "pos": [4, 5], "sent_id": 0, "type": "LOC"}],
            [{"name": "1901", "pos": [4, 5], "sent_id": 1, "type": "TIME"}],
        ],
    }
    if labels:
        doc["labels"] = [{"r": "P17", "h": 0, "t": 1, "evidence": [0]}, {"r": "P571", "h": 0, "t": 2, "evidence": [0, 1]}]
    return doc


def docred_view(doc: dict[str, Any]) -> dict[str, Any]:
    """What the Parquet rows keep of a JSON document (the DocRED features; see envbench/formats/hf.py)."""
    return {"title": doc["title"], "sents": doc["sents"],
            "vertexSet": [[{k: m[k] for k in hf.MENTION_FIELDS} for m in e] for e in doc["vertexSet"]],
            "labels": [{k: lab[k] for k in ("h", "t", "r", "evidence")} for lab in doc.get("labels") or []]}


def _folder(tmp_path: Path, splits: dict[str, list[dict[str, Any]]]) -> Path:
    (tmp_path / "ds" / hf.DATA_DIR).mkdir(parents=True)
    for name, docs in splits.items():
        rows = [hf.to_row(d, source_title=d["title"], seed=0) for d in docs]
        hf.write_split(rows, tmp_path / "ds" / hf.DATA_DIR / hf.shard_name(name))
    return tmp_path / "ds"


def test_a_row_has_the_hub_docred_features_and_labels_as_a_dict_of_lists() -> None:
    row = hf.to_row(_doc(), source_title="Lake Vord", seed=3)
    assert row["labels"] == {"head": [0, 0], "tail": [1, 2], "relation_id": ["P17", "P571"],
                             "relation_text": [RELATIONS["P17"], RELATIONS["P571"]], "evidence": [[0], [0, 1]]}
    assert row["vertexSet"][0] == [{"name": "Lake Vord", "sent_id": 0, "pos": [0, 2], "type": "LOC"}]
    assert (row["source_title"], row["seed"]) == ("Lake Vord", 3)
    table = pa.Table.from_pylist([row], schema=hf.document_schema())
    assert table.schema.field("labels").type == pa.struct([
        ("head", pa.list_(pa.int32())), ("tail", pa.list_(pa.int32())), ("relation_id", pa.list_(pa.string())),
        ("relation_text", pa.list_(pa.string())), ("evidence", pa.list_(pa.list_(pa.int32())))])
    assert table.schema.field("vertexSet").type.value_type.value_type.field("sent_id").type == pa.int32()


def test_the_yaml_features_name_the_schema_columns_in_order() -> None:
    assert [f["name"] for f in hf.FEATURES_YAML] == hf.document_schema().names
    labels = next(f for f in hf.FEATURES_YAML if f["name"] == "labels")["sequence"]
    assert [f["name"] for f in labels] == list(hf.LABEL_FIELDS)


def test_a_document_without_labels_gets_empty_lists() -> None:
    row = hf.to_row(_doc(labels=False), source_title="Lake Vord", seed=0)
    assert row["labels"] == {k: [] for k in hf.LABEL_FIELDS}
    assert hf.from_row(row)["labels"] == []


def test_folder_and_parquet_read_back_as_the_json_documents(tmp_path: Path) -> None:
    docs = [_doc("A"), _doc("B", labels=False)]
    env = [_doc("A-1"), _doc("B-1")]
    folder = _folder(tmp_path, {"original": docs, "test_env": env})
    # the folder stands for its one split other than "original"
    assert read_docs(folder).docs == [docred_view(d) for d in env]
    original = folder / "data" / hf.shard_name("original")
    assert read_docs(original).docs == [docred_view(d) for d in docs]
    assert hf.document_files(folder) == [folder / "data" / hf.shard_name("test_env")]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.sampled_from(sorted(RELATIONS)),
                          st.lists(st.integers(0, 1), max_size=2)), max_size=6))
def test_labels_round_trip(labels: list[tuple[int, int, str, list[int]]]) -> None:
    doc = _doc()
    doc["labels"] = [{"h": h, "t": t, "r": r, "evidence": ev} for h, t, r, ev in labels]
    table = pa.Table.from_pylist([hf.to_row(doc, source_title="x", seed=1)], schema=hf.document_schema())
    assert hf.from_row(table.to_pylist()[0]) == docred_view(doc)


def test_labels_written_as_a_list_of_records_read_too() -> None:
    row = {"title": "T", "sents": [["a"]], "vertexSet": [[{"name": "a", "sent_id": 0, "pos": [0, 1], "type": "MISC"}]],
           "labels": [{"head": 0, "tail": 0, "relation_id": "P31", "relation_text": "instance of", "evidence": [0]}]}
    assert hf.from_row(row)["labels"] == [{"h": 0, "t": 0, "r": "P31", "evidence": [0]}]


def test_sharded_split_is_read_whole_and_a_missing_shard_is_named(tmp_path: Path) -> None:
    data = tmp_path / "ds" / "data"
    data.mkdir(parents=True)
    for i, title in enumerate(("A-1", "B-1")):
        hf.write_split([hf.to_row(_doc(title), source_title=title[0], seed=1)], data / hf.shard_name("test_env", i, 2))
    shard = data / hf.shard_name("test_env", 1, 2)
    assert [d["title"] for d in read_docs(shard).docs] == ["A-1", "B-1"]
    assert [d["title"] for d in read_docs(tmp_path / "ds").docs] == ["A-1", "B-1"]
    (data / hf.shard_name("test_env", 0, 2)).unlink()
    with pytest.raises(DataError) as e:
        read_docs(shard)
    assert str(e.value) == (f"{shard}: is one of 2 shards of split test_env, but 1 are in {data}; copy the whole split")


def test_a_folder_that_is_not_a_dataset_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    with pytest.raises(DataError) as e:
        read_docs(tmp_path / "x")
    assert str(e.value) == (f"{tmp_path / 'x'}: a folder but not a dataset folder from `envbench export` (no "
                            "data/*.parquet); pass a DocRED JSON file, a folder that `envbench export` wrote, or one "
                            "of its data/*.parquet files")


def test_a_folder_of_several_renamed_splits_asks_for_a_file(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"original": [_doc("A")], "dev_env": [_doc("A-1")], "test_env": [_doc("A-2")]})
    with pytest.raises(DataError) as e:
        read_docs(folder)
    assert str(e.value) == (f"{folder}: holds splits dev_env, original, test_env, so the folder does not say which "
                            f"to read; name the split by its Parquet file, such as {folder / 'data' / hf.shard_name('dev_env')}")
    only = _folder(tmp_path / "one", {"validation": [_doc("A")]})
    assert [d["title"] for d in read_docs(only).docs] == ["A"]  # one split, whatever its name


def test_parquet_that_is_no_documents_is_one_line(tmp_path: Path) -> None:
    subs = tmp_path / "subs.parquet"
    pq.write_table(pa.table({"title": ["A-1"], "entity": [0]}), subs)
    with pytest.raises(DataError) as e:
        read_docs(subs)
    assert str(e.value) == (f"{subs}: lacks the DocRED columns sents, vertexSet, labels; pass a split of documents "
                            "(title, sents, vertexSet, labels), not the substitutions")
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet")
    with pytest.raises(DataError) as e:
        read_docs(junk)
    assert str(e.value).startswith(f"{junk}: not a readable Parquet file (")


def test_invalid_rows_are_validated_as_json_documents_are(tmp_path: Path) -> None:
    bad = _doc("A")
    bad["labels"][0]["r"] = "P9999"
    folder = _folder(tmp_path, {"test": [bad]})
    with pytest.raises(DataError) as e:
        read_docs(folder)
    assert "relation 'P9999' is not one of the 96 DocRED relations" in str(e.value)
    assert len(read_docs(folder, skip_invalid=True).skipped) == 1


def test_linked_docred_reader_refuses_a_dataset(tmp_path: Path) -> None:
    from envbench.formats.docred import read_docred

    folder = _folder(tmp_path, {"test": [_doc("A")]})
    with pytest.raises(DataError) as e:
        read_docred(folder, expect="linked-docred")
    assert str(e.value) == (f"{folder}: a Parquet dataset holds DocRED documents, not Linked-DocRED ones; pass a "
                            "Linked-DocRED or Linked-Re-DocRED JSON file")


def test_default_substitutions(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"original": [_doc("A")], "test_env": [_doc("A-1")]})
    assert hf.default_substitutions(tmp_path / "x" / "test_env.json") == tmp_path / "x" / "substitutions.parquet"
    expected = folder / hf.SUBSTITUTIONS_DIR / hf.shard_name("test_env")
    assert hf.default_substitutions(folder) == expected  # not there yet: the path evaluate reports
    expected.parent.mkdir()
    shutil.copyfile(folder / "data" / hf.shard_name("test_env"), expected)
    assert hf.default_substitutions(folder / "data" / hf.shard_name("test_env")) == expected


def test_json_paths_are_untouched(tmp_path: Path) -> None:
    path = tmp_path / "docs.json"
    path.write_text(json.dumps([_doc("A")]))
    assert not hf.is_dataset_path(path) and hf.document_files(path) == [path]
    assert read_docs(path).docs == [_doc("A")]  # extra mention fields survive a JSON read
