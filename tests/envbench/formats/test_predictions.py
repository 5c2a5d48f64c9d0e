"""envbench.formats.predictions: reading a prediction file and checking it against the gold entity counts."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from envbench.core.errors import DataError
from envbench.formats.predictions import check_predictions, load_predictions, unknown_titles


def p(title: str, h: int, t: int, r: str, **extra: object) -> dict:
    return {"title": title, "h_idx": h, "t_idx": t, "r": r, **extra}


def test_load_reads_plain_and_compressed_lists(tmp_path: Path) -> None:
    preds = [p("A", 0, 1, "P17"), p("B", 1, 0, "P19", evidence=[0])]
    plain = tmp_path / "p.json"
    plain.write_text(json.dumps(preds))
    packed = tmp_path / "p.json.gz"
    packed.write_bytes(gzip.compress(json.dumps(preds).encode()))
    assert load_predictions(plain) == preds == load_predictions(packed)


def test_load_names_the_wrong_shapes(tmp_path: Path) -> None:
    obj = tmp_path / "obj.json"
    obj.write_text(json.dumps({"title": "A"}))
    with pytest.raises(DataError) as err:
        load_predictions(obj)
    assert str(err.value) == (f"{obj}: expected a JSON list of predictions, got an object; write "
                              '[{"title": ..., "h_idx": ..., "t_idx": ..., "r": ...}, ...] as the official scorer reads')
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps([{"title": "A", "sents": [["x"]], "vertexSet": []}]))
    with pytest.raises(DataError) as err:
        load_predictions(docs)
    assert str(err.value) == (f"{docs}: holds DocRED documents (title, sents, vertexSet), not predictions; give it as "
                              "the gold file, and as predictions the model's JSON list of {title, h_idx, t_idx, r}")


def test_check_drops_duplicates_keeps_first_evidence_and_counts_unknown_titles() -> None:
    preds = [p("A", 0, 1, "P17", evidence=[2]), p("A", 0, 1, "P17", evidence=[0]), p("Z", 5, 9, "P17"),
             p("Z", 5, 9, "P17"), p("Y", 0, 0, "P19")]
    c = check_predictions(preds, {"A": 2})
    assert c.facts == [("A", 0, 1, "P17"), ("Z", 5, 9, "P17"), ("Y", 0, 0, "P19")]
    assert c.evidence[0] == frozenset({2})
    assert (c.duplicates, c.unknown_title_preds, c.unknown_titles) == (2, 2, 2)
    assert c.duplicates_by_title == {"A": 1, "Z": 1}
    assert unknown_titles(preds, {"A"}) == ["Y", "Z"] and unknown_titles(preds, {"A"}, limit=1) == ["Y"]


def test_check_names_the_first_bad_prediction() -> None:
    with pytest.raises(DataError) as err:
        check_predictions([p("A", 0, 1, "P17"), p("A", 0, 2, "P17")], {"A": 2}, source="run/pred.json")
    assert str(err.value) == ("run/pred.json: prediction 1 (title 'A', h_idx 0, t_idx 2, r 'P17'): t_idx 2 is out of "
                              "range; document 'A' has 2 entities (indices 0-1); check that the predictions were made "
                              "for this gold file")


def test_evidence_that_names_no_sentence_is_refused_as_a_string_id_is() -> None:
    """[999] and [-1] used to pass silently where ["0"] was refused (issue 29): all three are refused."""
    n, ns = {"A": 3}, {"A": 2}
    cases = {
        "[999]": ([999], "evidence sentence 999 is out of range; document 'A' has 2 sentences (ids 0-1); "
                         "check that the predictions were made for this gold file"),
        "[-1]": ([0, -1], "evidence sentence -1 is out of range; document 'A' has 2 sentences (ids 0-1); "
                          "check that the predictions were made for this gold file"),
        '["0"]': (["0"], "evidence ['0'] is not a list of sentence ids; write it as [0, 2] or leave it out"),
    }
    for evidence, message in cases.values():
        with pytest.raises(DataError) as err:
            check_predictions([p("A", 0, 1, "P17", evidence=evidence)], n, n_sentences=ns)
        assert str(err.value) == ("predictions: prediction 0 (title 'A', h_idx 0, t_idx 1, r 'P17'): " + message)
    with pytest.raises(DataError, match="evidence sentence -1 is out of range; ids start at 0"):
        check_predictions([p("A", 0, 1, "P17", evidence=[-1])], n)  # without sentence counts
    assert check_predictions([p("A", 0, 1, "P17", evidence=[1])], n, n_sentences=ns).evidence == [frozenset({1})]


def test_a_negative_entity_index_is_refused_on_an_unknown_title_too() -> None:
    """An index below 0 names no entity of any document, as an evidence id below 0 names no sentence;
    on a title the gold file lacks it had passed, counted as an unknown-title prediction."""
    with pytest.raises(DataError) as err:
        check_predictions([p("Z", -5, 1, "P17")], {"A": 2})
    assert str(err.value) == ("predictions: prediction 0 (title 'Z', h_idx -5, t_idx 1, r 'P17'): h_idx -5 is out of "
                              "range; entity indices start at 0")
    with pytest.raises(DataError) as err:
        check_predictions([p("Z", 0, True, "P17")], {"A": 2})  # type: ignore[arg-type]
    assert str(err.value) == ("predictions: prediction 0 (title 'Z', h_idx 0, t_idx true, r 'P17'): t_idx true is not "
                              "an entity index; write it as a 0-based integer, a position in the gold vertexSet")
    with pytest.raises(DataError) as err:
        check_predictions([p("Z", 0, 1e30, "P17")], {"A": 2})  # type: ignore[arg-type]
    assert str(err.value) == ("predictions: prediction 0 (title 'Z', h_idx 0, t_idx 1000000000000000000000000000000, "
                              "r 'P17'): t_idx 1000000000000000000000000000000 is not an entity index; write it as a "
                              "0-based integer, a position in the gold vertexSet")
    assert check_predictions([p("Z", 5, 9, "P17")], {"A": 2}).unknown_title_preds == 1  # no count to check it against
    with pytest.raises(DataError) as err:  # a gold document may have no entities: it had said "(indices 0--1)"
        check_predictions([p("A", 0, 1, "P17")], {"A": 0})
    assert str(err.value) == ("predictions: prediction 0 (title 'A', h_idx 0, t_idx 1, r 'P17'): h_idx 0 is out of "
                              "range; document 'A' has 0 entities; check that the predictions were made for this gold "
                              "file")
