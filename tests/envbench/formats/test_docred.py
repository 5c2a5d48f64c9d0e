"""The shared DocRED / Re-DocRED / Linked-DocRED validation."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envbench.core.errors import DataError, EnvbenchError
from envbench.formats.docred import (
    read_docred,
    read_docs,
    require_documents,
    validate_document,
    validate_documents,
)
from envbench.formats.linked_docred import to_linked_docred, validate_file
from tests.conftest import shared_path


def _doc(title: str = "Lake Vord") -> dict:
    return {
        "title": title,
        "sents": [["Lake", "Vord", "lies", "in", "Vordia", "."], ["It", "was", "named", "in", "1901", "."]],
        "vertexSet": [
            [{"name": "Lake Vord", "pos": [0, 2], "sent_id": 0, "type": "LOC"}],
            [{"name": "Vordia", "pos": [4, 5], "sent_id": 0, "type": "LOC"}],
            [{"name": "1901", "pos": [4, 5], "sent_id": 1, "type": "TIME"}],
        ],
        "labels": [{"r": "P17", "h": 0, "t": 1, "evidence": [0]}],
    }


def _errors(doc: dict) -> list[str]:
    return [f"{p.where}: {p.message}" for p in validate_document(doc, 0, "f.json") if p.severity == "error"]


def test_a_mention_without_a_type_and_an_entity_of_two_types_are_warned_of() -> None:
    doc = _doc()
    del doc["vertexSet"][0][0]["type"]
    doc["vertexSet"][1].append({"name": "Vordia", "pos": [4, 5], "sent_id": 0, "type": "MISC"})
    problems = [(p.severity, f"{p.where}: {p.message}") for p in validate_document(doc, 0, "f.json")]
    assert problems == [("warning", "entity 0 mention 0: has no type"),
                        ("warning", "entity 1: has mentions of types LOC, MISC")]


def test_a_valid_document_has_no_problems() -> None:
    assert validate_document(_doc(), 0) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d["vertexSet"][1][0].update(pos=[4, 9]), "entity 1 mention 0: pos [4, 9] is out of range for sentence 0 (6 tokens)"),
        (lambda d: d["vertexSet"][1][0].update(sent_id=5), "entity 1 mention 0: sent_id 5 is out of range (document has 2 sentences)"),
        (lambda d: d["labels"][0].update(r="P9999"), "label 0: relation 'P9999' is not one of the 96 DocRED relations"),
        (lambda d: d["labels"][0].update(evidence=[0, 2]), "label 0: evidence sentence 2 is out of range (2 sentences)"),
        (lambda d: d["labels"][0].update(t=3), "label 0: t=3 is out of range (3 entities)"),
        (lambda d: d["vertexSet"].append([]), "entity 3: has no mentions"),
        # regressions: these used to end in a TypeError traceback in every command
        (lambda d: d["sents"][1].__setitem__(4, 1901), "sents: holds a token that is not a string"),
        (lambda d: d.update(title=None), "title: is null, not a string"),
        (lambda d: d.update(title=["Lake Vord"]), "title: is an array, not a string"),
        # DocRED-HWE keywords: renaming moves their spans, so a span outside its sentence is refused here
        # (generate used to end in an IndexError, or write a shifted span)
        (lambda d: d["labels"][0].update(keywords=[{"name": "lies", "sent_id": 0, "pos": [2, 3]},
                                                   {"name": "x", "sent_id": 0, "pos": [5, 9]}]),
         "label 0: keyword 1 has pos [5, 9] out of range for sentence 0 (6 tokens)"),
        (lambda d: d["labels"][0].update(keywords=[{"name": "x", "sent_id": 4, "pos": [0, 1]}]),
         "label 0: keyword 0 has sent_id 4 out of range (2 sentences)"),
        (lambda d: d["labels"][0].update(keywords="lies"), "label 0: keywords is not a list"),
        # hostile gold (issue 29): these crashed validate, generate, evaluate and icl prompts with a TypeError,
        # or passed although every reader of predictions refuses them
        (lambda d: d["labels"][0].update(evidence=5), "label 0: evidence 5 is not a list"),
        (lambda d: d.update(labels=5), "labels: is an integer, not a list"),
        (lambda d: d["labels"][0].update(h=True), "label 0: h=true is not an entity index"),
        (lambda d: d["labels"][0].update(r=["P17"]), "label 0: relation ['P17'] is not one of the 96 DocRED relations"),
        (lambda d: d["labels"][0].update(evidence=[False]), "label 0: evidence sentence false is out of range (2 sentences)"),
        # hostile mentions (2026-12-03): a name that is no string crashed link and kb-from-corpus; a sent_id
        # or pos written as strings, floats or booleans was called "out of range" or passed
        (lambda d: d["vertexSet"][1][0].update(name=None), "entity 1 mention 0: name is null, not a string"),
        (lambda d: d["vertexSet"][1][0].update(name=["a", "b"]), "entity 1 mention 0: name [\"a\",\"b\"] is an array, not a string"),
        (lambda d: d["vertexSet"][1][0].update(sent_id="0"), "entity 1 mention 0: sent_id \"0\" is not a sentence index"),
        (lambda d: d["vertexSet"][1][0].update(pos=["0", "2"]), "entity 1 mention 0: pos [\"0\",\"2\"] is not two token indices"),
        (lambda d: d["vertexSet"][1][0].update(pos=[True, 2]), "entity 1 mention 0: pos [true,2] is not two token indices"),
        (lambda d: d.update(labels={}), "labels: is an object, not a list"),
    ],
)
def test_each_check_names_the_place_and_the_problem(change, expected: str) -> None:
    doc = _doc()
    change(doc)
    assert _errors(doc) == [expected]


def test_name_mismatch_is_a_warning_and_error_text_says_what_to_do() -> None:
    doc = _doc()
    doc["vertexSet"][1][0]["name"] = "Vordland"
    (p,) = validate_document(doc, 3, "f.json")
    assert p.severity == "warning"
    assert str(p) == ("f.json: document 3 'Lake Vord': entity 1 mention 0: name 'Vordland' differs from its tokens "
                      "'Vordia'; the tokens at pos are used; correct the name if that is wrong")


def test_skip_invalid_counts_and_skips_bad_documents() -> None:
    bad = _doc("Bad")
    bad["labels"][0]["r"] = "P0"
    docs = [_doc("A"), bad, _doc("A"), _doc("C")]
    with pytest.raises(DataError, match="document 1 'Bad': label 0: relation 'P0'.*or pass --skip-invalid"):
        validate_documents(docs, "f.json")
    ds = validate_documents(docs, "f.json", skip_invalid=True)
    assert [d["title"] for d in ds.docs] == ["A", "C"]
    assert [(p.doc_index, p.where) for p in ds.skipped] == [(1, "label 0"), (2, "title")]


def test_linked_docred_files_get_the_same_checks(tmp_path: Path) -> None:
    (ld,) = to_linked_docred([_doc()], {"Lake Vord": ["Q900000001", "Q900000002", None]})
    ld["relations"][0]["evidence"] = [7]
    p = tmp_path / "ld.json"
    p.write_text(json.dumps([ld]))
    with pytest.raises(DataError, match="label 0: evidence sentence 7 is out of range"):
        validate_file(p)
    assert validate_file(p, skip_invalid=True).summary().endswith("1 documents, 0 valid, 1 skipped, 0 warnings")
    ld["relations"][0]["evidence"] = [0]
    p.write_text(json.dumps([ld]))
    (doc,) = read_docs(p).docs  # the shared reader takes Linked-DocRED files through their DocRED view
    assert doc["vertexSet"][1] == [{"name": "Vordia", "pos": [4, 5], "sent_id": 0, "type": "LOC"}]
    assert doc["labels"] == [{"r": "P17", "h": 0, "t": 1, "evidence": [0]}]


def test_real_re_docred_reads_with_only_name_and_mixed_type_warnings() -> None:
    for name in ("dev_revised.json", "test_revised.json"):
        ds = read_docs(shared_path("re-docred", name))
        assert len(ds.docs) == 500 and ds.skipped == []
        kinds = Counter("name" if "differs from its tokens" in p.message else
                        "types" if "has mentions of types" in p.message else "other" for p in ds.warnings)
        assert kinds["name"] > 0 and kinds["types"] == 9 and kinds["other"] == 0
        assert "global_pos" in ds.docs[0]["vertexSet"][0][0]  # Re-DocRED's extra fields survive


@st.composite
def corrupted(draw: st.DrawFn) -> tuple[dict, int, int, list[int], bool]:
    doc = _doc()
    ei = draw(st.integers(0, 2))
    sid = draw(st.integers(-2, 3))
    s = draw(st.integers(-3, 9))
    e = draw(st.integers(-3, 9))
    m = doc["vertexSet"][ei][0]
    m["sent_id"], m["pos"] = sid, [s, e]
    in_range = 0 <= sid < 2 and 0 <= s < e <= len(doc["sents"][sid])
    return doc, ei, sid, [s, e], in_range


@settings(max_examples=200, deadline=None)
@given(corrupted())
def test_random_position_corruption_is_always_caught(case: tuple[dict, int, int, list[int], bool]) -> None:
    doc, ei, sid, pos, in_range = case
    problems = validate_document(copy.deepcopy(doc), 0)
    errors = [p for p in problems if p.severity == "error"]
    if in_range:
        # A span inside the sentence is structurally fine; a wrong span shows as a name warning.
        assert not errors
        span = " ".join(doc["sents"][sid][pos[0]:pos[1]])
        assert bool(problems) == (span != doc["vertexSet"][ei][0]["name"])
    else:
        assert [p.where for p in errors] == [f"entity {ei} mention 0"]


def test_one_reader_names_the_commands_own_skip_option(tmp_path: Path) -> None:
    bad = _doc("Bad")
    bad["labels"][0]["r"] = "P0"
    p = tmp_path / "f.json"
    p.write_text(json.dumps([_doc("A"), bad]))
    problem = f"{p}: document 1 'Bad': label 0: relation 'P0' is not one of the 96 DocRED relations; use a DocRED property id such as P17"
    for flag, hint in (("--skip-invalid", "; or pass --skip-invalid to skip invalid documents"),
                       ("--skip-invalid-train", "; or pass --skip-invalid-train to skip invalid documents"),
                       (None, "")):
        with pytest.raises(DataError) as exc:
            read_docred(p, skip_flag=flag)
        assert str(exc.value) == problem + hint
    ds = read_docred(p, skip_invalid=True)
    assert [d["title"] for d in ds.docs] == ["A"] and ds.total == 2 and ds.format == "DocRED"
    assert ds.source == ds.docs
    assert ds.skip_note() == (f"skipped 1 invalid document of {p}; the first: document 1 'Bad': label 0: relation "
                              "'P0' is not one of the 96 DocRED relations; use a DocRED property id such as P17")
    assert read_docred(p, skip_invalid=True, expect="any").format == "DocRED"
    assert read_docs is read_docred  # one reader, one short name


def test_the_reader_keeps_linked_docred_records_beside_their_docred_view(tmp_path: Path) -> None:
    (ld,) = to_linked_docred([_doc()], {"Lake Vord": ["Q900000001", "Q900000002", None]})
    p = tmp_path / "ld.json"
    p.write_text(json.dumps([ld]))
    for expect in ("docred", "linked-docred", "any"):
        ds = read_docred(p, expect=expect)
        assert ds.format == "Linked-DocRED" and ds.source == [ld] and "vertexSet" in ds.docs[0], expect
    docred = tmp_path / "docred.json"
    docred.write_text(json.dumps([_doc()]))
    with pytest.raises(DataError, match="not a Linked-DocRED file"):
        read_docred(docred, expect="linked-docred")
    obj = tmp_path / "obj.json"
    obj.write_text("{}")
    with pytest.raises(DataError) as exc:
        read_docred(obj)
    assert str(exc.value) == (f"{obj}: expected a JSON list of documents, got an object; pass a DocRED-format file such "
                              "as dev_revised.json")
    with pytest.raises(DataError) as exc:
        read_docred(obj, expect="any")
    assert str(exc.value).endswith("got an object; pass a DocRED, Re-DocRED or Linked-DocRED file")


def test_empty_inputs_are_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    with pytest.raises(EnvbenchError) as exc:
        require_documents(read_docred(empty))
    assert str(exc.value) == f"{empty}: holds no documents; give a DocRED-format file with at least one document"
    bad = _doc()
    bad["labels"][0]["r"] = "P0"
    invalid = tmp_path / "invalid.json"
    invalid.write_text(json.dumps([bad]))
    with pytest.raises(EnvbenchError) as exc:
        require_documents(read_docred(invalid, skip_invalid=True))
    assert str(exc.value) == (f"{invalid}: all 1 documents are invalid and were skipped; run without --skip-invalid "
                              "to see the first problem")


def test_a_mention_type_outside_docred_is_an_error() -> None:
    doc = _doc()
    doc["vertexSet"][0][0]["type"] = "LOCATION"
    assert _errors(doc) == ["entity 0 mention 0: type 'LOCATION' is not a DocRED type"]
    doc["vertexSet"][0][0]["type"] = None
    assert _errors(doc) == ["entity 0 mention 0: type None is not a DocRED type"]
    del doc["vertexSet"][0][0]["type"]  # no type at all reads as MISC, as before
    assert _errors(doc) == []


def test_a_label_from_an_entity_to_itself_is_a_warning() -> None:
    """issue 29: it passed silently (icl parse drops such triples from answers)."""
    doc = _doc()
    doc["labels"][0]["t"] = doc["labels"][0]["h"]
    (p,) = validate_document(doc, 0, "f.json")
    assert p.severity == "warning"
    assert str(p) == (f"f.json: document 0 'Lake Vord': label 0: h and t are the same entity ({doc['labels'][0]['h']}); "
                      "a relation holds between two different entities; fix h or t, or drop the label")


# ----------------------------------------------------------------------------- found by a hostile-input probe
# (validate had accepted each of these without a word)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d.update(title=""), "title: is empty"),
        (lambda d: d.update(title=" \t"), "title: is only whitespace"),
        (lambda d: d.update(sents=[], vertexSet=[], labels=[]), "sents: holds no sentences"),
        (lambda d: d["sents"][1].append("x" * 100_000), "sentence 1 token 6: has 100,000 characters, more than 1,000"),
    ],
)
def test_a_document_without_a_title_or_text_or_with_a_token_no_word_is_is_an_error(change, expected: str) -> None:
    doc = _doc()
    change(doc)
    assert _errors(doc) == [expected]


def test_the_token_checks_pass_real_whitespace_tokens_and_the_longest_allowed() -> None:
    doc = _doc()
    # Re-DocRED has no-break spaces and spaces as tokens (a right-to-left mark, U+200F, was here: issue 56 has it
    # warned of, as every format character, above)
    doc["sents"][1] += ["\xa0", " ", "x" * 1000]
    assert validate_document(doc, 0) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d["labels"][0].update(evidence=None),
         "label 0: evidence is null, read as no evidence sentences; the official scorer makes a set of it and fails; "
         "write [] (or leave the field out)"),
        (lambda d: d.update(labels=None),
         "labels: is null, read as no labels; the official scorer and ATLOP's reader loop over it and fail; write [] "
         "or leave the field out (a file without gold)"),
        (lambda d: d["labels"].append(dict(d["labels"][0])),
         "label 1: repeats label 0 (the same h, t and r); scorers count the fact once, but the evidence of both (as "
         "the official scorer does); drop the repeat"),
        (lambda d: d["labels"].append({**d["labels"][0], "evidence": [1]}),
         "label 1: repeats label 0 (the same h, t and r); scorers count the fact once, but the evidence of both (as "
         "the official scorer does); drop the repeat"),
        (lambda d: d["sents"][1].append(""),
         "sentence 1 token 6: is empty; a token is a word or sign of the text; it is read as it is: remove it (and "
         "shift the positions after it) if that is wrong"),
        *[(lambda d, c=c: d["sents"][0].__setitem__(2, f"li{c}es"),
           f"sentence 0 token 2: holds the control character U+{ord(c):04X}; a token is text on one line; it is read "
           "as it is: remove the line break, tab, NUL or other control character if that is wrong")
          for c in ("\n", "\x00", "\x85")],
        (lambda d: d["sents"][0].__setitem__(2, "li\u202ees"),
         "sentence 0 token 2: holds the bidirectional control character U+202E; it makes the text after it display "
         "in another order than it reads; remove it unless the text needs it"),
        # issue 56: every other format character (Unicode Cf) is warned of as U+202E is
        *[(lambda d, c=c: d["sents"][0].__setitem__(2, f"li{c}es"),
           f"sentence 0 token 2: holds the invisible format character U+{ord(c):04X}; it makes a name look like "
           "another (and would come out inside new names); remove it unless the text needs it")
          for c in ("\u200d", "\u200b", "\u200f", "\ufeff", "\u00ad", "\u2060", "\U000e0041")],
        (lambda d: d.update(vertexSet=d["vertexSet"][:1], labels=[]),
         "vertexSet: has 1 entity, so no entity pair; relation models and scorers classify pairs of entities and "
         "find nothing in this document; add its entities, or remove it"),
        (lambda d: d.update(vertexSet=[], labels=[]),
         "vertexSet: has 0 entities, so no entity pair; relation models and scorers classify pairs of entities and "
         "find nothing in this document; add its entities, or remove it"),
    ],
)
def test_odd_but_readable_documents_are_warned_of(change, expected: str) -> None:
    doc = _doc()
    change(doc)
    problems = validate_document(doc, 0, "f.json")
    assert [(p.severity, f"{p.where}: {p.message}; {p.fix}") for p in problems] == [("warning", expected)]


def test_a_valid_document_stays_free_of_the_new_warnings() -> None:
    """The warnings above can fail: two entities, distinct facts and a list of evidence give none."""
    doc = _doc()
    doc["vertexSet"] = doc["vertexSet"][:2]
    doc["labels"].append({"r": "P17", "h": 1, "t": 0, "evidence": []})
    assert validate_document(doc, 0) == []


def test_messages_cut_a_long_title_and_name_json_types_and_big_integers(tmp_path: Path) -> None:
    doc = _doc("T" * 200_000)
    doc["sents"] = 5
    (p,) = validate_document(doc, 0, "f.json")
    assert str(p) == (f"f.json: document 0 '{'T' * 116}...: sents: is not a list of token lists; write sents as "
                      "[[token, ...], ...]")
    doc = _doc()
    doc["vertexSet"][1][0]["name"] = "V" * 100_000
    (p,) = validate_document(doc, 0, "f.json")
    assert p.message == f"name '{'V' * 116}... differs from its tokens 'Vordia'"
    for value, shown in ((None, "null"), (True, "a boolean"), (7, "an integer"), (1.5, "a number"), ("x", "a string"),
                         ([], "an array"), ({}, "an object")):
        doc = _doc()
        doc["title"] = value
        assert _errors(doc) == ([f"title: is {shown}, not a string"] if value != "x" else [])
    # orjson reads an integer beyond 64 bits as a real number: it is shown as written, not as 1e+30
    f = tmp_path / "big.json"
    f.write_text(json.dumps([_doc()]).replace('"t": 1', '"t": ' + "1" + "0" * 30))
    with pytest.raises(DataError, match=r"label 0: t=1000000000000000000000000000000 is not an entity index; "):
        read_docs(f)
    f.write_text(json.dumps([_doc()]).replace('"t": 1', '"t": ' + "1" + "0" * 60))
    with pytest.raises(DataError, match=r"label 0: t=1000000000000000000000000000000000000\.\.\. is not an entity "):
        read_docs(f)
