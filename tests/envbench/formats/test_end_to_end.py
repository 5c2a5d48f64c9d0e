"""The end-to-end prediction format: checking rows against their gold documents, and JEREX's output."""

from __future__ import annotations

import pytest

from envbench.core.errors import DataError
from envbench.formats.end_to_end import (
    Entity,
    Relation,
    check_end_to_end,
    detect_format,
    from_jerex,
    shared_mention,
    write_rows,
)


def doc(title: str = "D") -> dict:
    # sentence 0 has 4 tokens, sentence 1 has 3
    m = lambda s, a, b, t: {"name": "x", "sent_id": s, "pos": [a, b], "type": t}  # noqa: E731
    return {"title": title, "sents": [["Ann", "met", "Bob", "."], ["In", "Rome", "."]],
            "vertexSet": [[m(0, 0, 1, "PER")], [m(0, 2, 3, "PER")], [m(1, 1, 2, "LOC")]], "labels": []}


def row(**over: object) -> dict:
    base = {"title": "D", "entities": [{"mentions": [[0, 0, 1]], "type": "PER"}, {"mentions": [[1, 1, 2]], "type": "LOC"}],
            "relations": [{"h": 0, "t": 1, "r": "P19", "evidence": [1]}]}
    return base | over


def test_a_valid_row_is_read() -> None:
    got = check_end_to_end([row()], [doc()], source="p.json")
    d = got.docs["D"]
    assert d.entities == (Entity(((0, 0, 1),), "PER"), Entity(((1, 1, 2),), "LOC"))
    assert d.relations == (Relation(0, 1, "P19", frozenset({1})),)
    assert got.skipped == [] and got.format == "envbench"
    assert write_rows([d]) == [row()]  # the writer gives back what the reader took


@pytest.mark.parametrize(("bad", "message"), [
    ({"title": "Nope"}, "p.json: document 'Nope' (row 0): title is not a document of the gold file; check that "
                        "the predictions were made for this --gold"),
    ({"entities": [{"mentions": [[0, 3, 5]], "type": "PER"}]},
     "p.json: document 'D' (row 0): entities[0].mentions[0] [0, 3, 5] is outside sentence 0 (4 tokens: "
     "0 <= start < end <= 4)"),
    ({"entities": [{"mentions": [[2, 0, 1]], "type": "PER"}]},
     "p.json: document 'D' (row 0): entities[0].mentions[0] [2, 0, 1] names sentence 2, but the document has 2 (0-1)"),
    ({"entities": [{"mentions": [], "type": "PER"}]},
     "p.json: document 'D' (row 0): entities[0].mentions is empty; an entity needs at least one mention span"),
    ({"relations": [{"h": 0, "t": 2, "r": "P19"}]},
     "p.json: document 'D' (row 0): relations[0].t 2 is not an entity of this document (entities: 0-1)"),
    ({"relations": [{"h": 0, "t": 1, "r": "country"}]},
     "p.json: document 'D' (row 0): relations[0].r 'country' is not one of the 96 DocRED relations (did you mean "
     "'P17'?); use a property id such as 'P17'"),
    ({"entities": [{"mentions": [[0, 0, 1]], "type": "PERSON"}], "relations": []},
     "p.json: document 'D' (row 0): entities[0].type 'PERSON' is not one of PER, ORG, LOC, MISC, NUM, TIME"),
])
def test_each_problem_is_one_line_naming_document_and_field(bad: dict, message: str) -> None:
    with pytest.raises(DataError) as exc:
        check_end_to_end([row(**bad)], [doc()], source="p.json")
    assert str(exc.value) == message + "; or pass --skip-invalid to skip such rows"


def test_skip_invalid_counts_and_lists_the_skipped_rows() -> None:
    rows = [row(), row(title="Nope"), row(title="E", relations=[{"h": 5, "t": 0, "r": "P17"}]), row()]
    got = check_end_to_end(rows, [doc(), doc("E")], source="p.json", skip_invalid=True)
    assert list(got.docs) == ["D"]
    assert [(s.row, s.title) for s in got.skipped] == [(1, "Nope"), (2, "E"), (3, "D")]
    assert got.skipped[2].problem == "p.json: document 'D' (row 3): title repeats an earlier row; give each document once"
    assert "relations[0].h 5 is not an entity" in got.skipped[1].problem
    assert "--skip-invalid" not in got.skipped[0].problem  # the hint is for runs that stop


def test_spans_are_checked_against_the_document_of_the_title() -> None:
    # [0, 4, 5] is a span of a twin whose sentence 0 has 5 tokens, not of the 4-token source
    twin = doc("D-1")
    twin["sents"][0] = ["Mary", "Jane", "met", "Bob", "."]
    ok = row(title="D-1", entities=[{"mentions": [[0, 4, 5]], "type": "PER"}], relations=[])
    assert check_end_to_end([ok], [doc(), twin]).docs["D-1"].entities[0].mentions == ((0, 4, 5),)
    with pytest.raises(DataError, match="is outside sentence 0"):
        check_end_to_end([ok | {"title": "D"}], [doc(), twin])


def jerex_row() -> dict:
    """A row as JEREX writes predictions.json today (lavis-nlp/jerex at HEAD, ``store_predictions`` since
    June 2021): the tokens, mentions as {start, end} over the whole document, entities listing their mention
    indices, relations over the entities. Document-level spans: Ann [0, 1], Bob [2, 3], Rome [5, 6]
    (sentence 1 starts at token 4)."""
    return {"tokens": ["Ann", "met", "Bob", ".", "In", "Rome", "."],
            "mentions": [{"start": 0, "end": 1}, {"start": 2, "end": 3}, {"start": 5, "end": 6}],
            "entities": [{"mentions": [0], "type": "PER"}, {"mentions": [2], "type": "LOC"}],
            "relations": [{"head": 0, "tail": 1, "type": "P19"}]}


def jerex_first_row() -> dict:
    """The same row as JEREX wrote it from April to June 2021: mentions as [start, end], clusters of mention
    indices, entities naming a cluster."""
    return {"mentions": [[0, 1], [2, 3], [5, 6]], "clusters": [[0], [1], [2]],
            "entities": [{"cluster": 0, "type": "PER"}, {"cluster": 2, "type": "LOC"}],
            "relations": [{"head": 0, "tail": 1, "type": "P19"}]}


@pytest.mark.parametrize("layout", [jerex_row, jerex_first_row])
def test_jerex_rows_map_by_position_onto_sentence_spans(layout) -> None:
    assert detect_format([layout()], "j.json") == "jerex"
    got = check_end_to_end([layout()], [doc()], source="j.json")
    assert got.format == "jerex"
    d = got.docs["D"]
    assert d.entities == (Entity(((0, 0, 1),), "PER"), Entity(((1, 1, 2),), "LOC"))
    assert d.relations == (Relation(0, 1, "P19"),)


def test_jerex_errors_name_the_document_and_field() -> None:
    with pytest.raises(DataError) as exc:
        from_jerex([jerex_first_row()], [doc(), doc("E")], "j.json")
    assert str(exc.value) == ("j.json: JEREX predictions hold 1 documents and the gold file 2; JEREX writes one row "
                              "per document of the file it read, in order, so pass as --gold that very file")
    crossing = jerex_first_row() | {"mentions": [[0, 1], [3, 6], [5, 6]]}  # [3, 6] runs past sentence 0
    with pytest.raises(DataError) as exc:
        check_end_to_end([crossing], [doc()], source="j.json")
    assert str(exc.value) == ("j.json: document 'D' (row 0): mentions[1] [3, 6] crosses the end of sentence 0 "
                              "(document tokens 0-3); or pass --skip-invalid to skip such rows")
    bad = jerex_first_row() | {"entities": [{"cluster": 7, "type": "PER"}]}
    with pytest.raises(DataError) as exc:
        check_end_to_end([bad], [doc()], source="j.json")
    assert str(exc.value) == ("j.json: document 'D' (row 0): entities[0].cluster 7 is not a cluster index (0-2); "
                              "or pass --skip-invalid to skip such rows")
    outside = jerex_first_row() | {"mentions": [[0, 1], [2, 3], [5, 9]]}
    got = check_end_to_end([outside], [doc()], source="j.json", skip_invalid=True)
    assert got.docs == {} and got.skipped[0].problem == (
        "j.json: document 'D' (row 0): mentions[2] [5, 9] is not a [start, end] token span of the document (7 tokens)")


@pytest.mark.parametrize(("over", "problem"), [
    ({"mentions": [{"start": 5, "end": 9}]},
     "mentions[0] {'start': 5, 'end': 9} is not a {start, end} token span of the document (7 tokens)"),
    ({"mentions": [{"start": 3, "end": 6}]}, "mentions[0] [3, 6] crosses the end of sentence 0 (document tokens 0-3)"),
    ({"entities": [{"mentions": [0, 3], "type": "PER"}]}, "entities[0].mentions holds 3, not a mention index (0-2)"),
    ({"entities": [{"mentions": None, "type": "PER"}]}, "entities[0].mentions is null, not a list of mention indices"),
    ({"entities": [{"mentions": [0], "type": ["PER"]}], "relations": []},
     "entities[0].type ['PER'] is not one of PER, ORG, LOC, MISC, NUM, TIME"),
    ({"relations": None}, "relations is null, not a list of relations {head, tail, type}"),
    ({"relations": 5}, "relations is an integer, not a list of relations {head, tail, type}"),
    ({"relations": [{"head": 0, "tail": 2, "type": "P19"}]},
     "relations[0].tail 2 is not an entity of this document (entities: 0-1)"),
    ({"relations": [{"head": 0, "tail": 1, "type": ["P17"]}]},
     "relations[0].type ['P17'] is not one of the 96 DocRED relations; JEREX writes the keys of its types file, "
     "property ids such as 'P17'"),
    ({"relations": [{"head": 0, "tail": 1, "type": {"id": "P17"}}]},
     "relations[0].type {'id': 'P17'} is not one of the 96 DocRED relations; JEREX writes the keys of its types "
     "file, property ids such as 'P17'"),
    ({"tokens": ["Ann", "saw", "Bob", ".", "In", "Rome", "."]},
     "tokens differ from the gold document's at token 1 ('saw' here, 'met' in the gold); JEREX writes one row per "
     "document of the file it read, in order, so pass as --gold that very file"),
    ({"entities": [{"mentions": [0, 1], "type": "PER"}, {"mentions": [1], "type": "PER"}], "relations": []},
     "entities[1].mentions[0] [0, 2, 3] is also a mention of entities[0], whose mentions differ; a mention belongs "
     "to one entity (MUC and B³ score a partition of the mentions): merge the two entities, or keep the mention in "
     "one"),
])
def test_each_problem_of_a_jerex_row_is_one_line_in_jerex_field_names(over: dict, problem: str) -> None:
    # issue 56: relations null or 5, or a relation type that is a list or an object, gave a TypeError
    row = jerex_row() | over
    with pytest.raises(DataError) as exc:
        check_end_to_end([row], [doc()], source="j.json")
    assert str(exc.value) == f"j.json: document 'D' (row 0): {problem}; or pass --skip-invalid to skip such rows"
    got = check_end_to_end([row, jerex_row()], [doc(), doc("E")], source="j.json", skip_invalid=True)
    assert list(got.docs) == ["E"] and [s.problem for s in got.skipped] == [f"j.json: document 'D' (row 0): {problem}"]


def test_a_jerex_row_without_tokens_is_read_by_position() -> None:
    # JEREX's first layout had no tokens (before 26 April 2021): the rows are taken in the gold file's order
    row = {k: v for k, v in jerex_row().items() if k != "tokens"}
    assert check_end_to_end([row], [doc()]).docs["D"].entities[1] == Entity(((1, 1, 2),), "LOC")


@pytest.mark.parametrize(("r", "shown"), [(["P17"], "['P17']"), ({"id": "P17"}, "{'id': 'P17'}"), (17, "17"),
                                          (None, "None")])
def test_a_relation_id_that_is_no_string_is_one_line(r: object, shown: str) -> None:
    # issue 56: a list or an object as r gave "TypeError: unhashable type"
    with pytest.raises(DataError) as exc:
        check_end_to_end([row(relations=[{"h": 0, "t": 1, "r": r}])], [doc()], source="p.json")
    assert str(exc.value) == (f"p.json: document 'D' (row 0): relations[0].r {shown} is not one of the 96 DocRED "
                              "relations; use a property id such as 'P17'; or pass --skip-invalid to skip such rows")


def test_a_mention_in_two_predicted_entities_is_refused_naming_it() -> None:
    # issue 56: MUC and B³ assume a partition; overlapping entities gave B³ recall 2.67 and MUC recall -5.51
    shared = row(entities=[{"mentions": [[0, 0, 1], [1, 1, 2]], "type": "PER"},
                           {"mentions": [[0, 2, 3], [1, 1, 2]], "type": "LOC"}], relations=[])
    with pytest.raises(DataError) as exc:
        check_end_to_end([shared], [doc()], source="p.json")
    assert str(exc.value) == (
        "p.json: document 'D' (row 0): entities[1].mentions[1] [1, 1, 2] is also a mention of entities[0], whose "
        "mentions differ; a mention belongs to one entity (MUC and B³ score a partition of the mentions): merge the "
        "two entities, or keep the mention in one; or pass --skip-invalid to skip such rows")
    got = check_end_to_end([shared], [doc()], source="p.json", skip_invalid=True)
    assert got.docs == {} and len(got.skipped) == 1
    # two entities with the same mentions are one cluster: read, and counted once by the scorers
    same = row(entities=[{"mentions": [[0, 0, 1]], "type": "PER"}, {"mentions": [[0, 0, 1]], "type": "PER"}],
               relations=[])
    assert len(check_end_to_end([same], [doc()]).docs["D"].entities) == 2


def test_shared_mention_names_the_first_span_two_different_clusters_hold() -> None:
    a, b, c = (0, 0, 1), (0, 2, 3), (1, 1, 2)
    assert shared_mention([[a, b], [c]]) is None
    assert shared_mention([[a, b], [b, a], [c]]) is None  # the same cluster twice
    assert shared_mention([[a], [b, c], [c]]) == (c, 1, 2)
    assert shared_mention([[a, b], [a, b], [b]]) == (b, 0, 2)


def test_unknown_shapes_are_refused() -> None:
    with pytest.raises(DataError, match="neither the envbench end-to-end format"):
        detect_format([{"foo": 1}], "x.json")
