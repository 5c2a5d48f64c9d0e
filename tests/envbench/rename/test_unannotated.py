"""Renamed names left outside every annotated mention are renamed too (issue 58 §1)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from envbench.rename.candidates import ItemNames
from envbench.rename.substitute import apply_plan, mention_tokens, new_name
from envbench.rename.unannotated import occurrences, unannotated_spans
from tests.envbench.rename.test_built_on import _doc, _settle


def _found(doc: dict) -> list[tuple[int, int, int, int, str]]:
    return [tuple(u) for u in occurrences(doc, [mention_tokens(doc, e) for e in doc["vertexSet"]])]


def test_intelligent_design_is_renamed_where_re_docred_did_not_annotate_it() -> None:
    # "intelligent design" stayed three times beside its renamed mentions
    doc = _doc(["The court found that intelligent design was not science .",
                "Critics of intelligent design called it creationism , and intelligent design lost ."],
               [[("intelligent design", 0, "MISC")], [("creationism", 1, "MISC")]])
    assert _found(doc) == [(1, 2, 4, 0, "intelligent design"), (1, 9, 11, 0, "intelligent design")]
    run = _settle(doc, ["Q1", None], {0: [("Q7", ItemNames("theistic evolution", ()))]})
    out = apply_plan(doc, run.plan, "T-1", run.outside)
    assert " ".join(out["sents"][1]) == \
        "Critics of theistic evolution called it creationism , and theistic evolution lost ."
    assert next(r for r in run.rows if r.entity == 0).unannotated == ("1:2-4", "1:9-11")
    creationism = out["vertexSet"][1][0]  # positions after a replaced run move; the labels stay
    assert out["sents"][1][creationism["pos"][0]:creationism["pos"][1]] == ["creationism"]


def test_a_lone_capitalised_word_counts_only_where_it_reads_as_the_name() -> None:
    doc = _doc(["Lyndon B. Johnson met Johnson .",
                "A direct lineage to General Johnson can not be traced .",
                "Andrew Johnson and Johnson Hall differ .",
                "Johnson ran .",
                "The NHL and NHL Hall ."],
               [[("Lyndon B. Johnson", 0, "PER"), ("Johnson", 0, "PER")], [("NHL", 4, "ORG")]])
    # after a title it counts; beside another capitalised word or opening a sentence it does not; an
    # acronym counts anywhere outside mentions
    assert _found(doc) == [(1, 5, 6, 0, "Johnson"), (4, 3, 4, 1, "NHL")]


def test_a_name_two_entities_share_is_neither_s_and_the_longest_name_wins() -> None:
    doc = _doc(["Paris is in France .", "Paris Hilton and Paris met .", "He left New York City for New York ."],
               [[("Paris", 0, "LOC")], [("Paris Hilton", 1, "PER")], [("New York City", 2, "LOC")],
                [("New York", 2, "LOC")]])
    assert _found(doc) == [(1, 3, 4, 0, "Paris")]
    doc = _doc(["Lee met Lee .", "General Lee came ."], [[("Lee", 0, "PER")], [("Lee", 0, "PER")]])
    assert _found(doc) == []


def test_numbers_and_dates_are_left_to_their_rules() -> None:
    doc = _doc(["In May 1990 it rained , and May 1990 was wet ."], [[("May 1990", 0, "TIME")]])
    found = occurrences(doc, [mention_tokens(doc, e) for e in doc["vertexSet"]])
    assert [tuple(u) for u in found] == [(0, 7, 9, 0, "May 1990")]  # found, but no TIME entity's to rename
    nn = new_name("June 1995")
    assert nn is not None and unannotated_spans(found, ["TIME"], {0: {"May 1990": nn}}) == []
    assert unannotated_spans(found, ["MISC"], {0: {"May 1990": nn}}) == [(found[0], nn)]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["Lee", "Hall", "the", "met", "General", "Smith", ","]), min_size=1, max_size=12))
def test_positions_stay_right_whatever_the_text_around(words: list[str]) -> None:
    sent = ["Lee", "Smith", "met", *words, "."]
    doc = {"title": "T", "sents": [sent, ["General", "Lee", "Smith", "came", "."]],
           "vertexSet": [[{"name": "Lee Smith", "sent_id": 0, "pos": [0, 2], "type": "PER"}],
                         [{"name": "came", "sent_id": 1, "pos": [3, 4], "type": "MISC"}]], "labels": []}
    run = _settle(doc, ["Q1", None], {0: [("Q7", ItemNames("Ann Vale Roe", ()))]})
    out = apply_plan(doc, run.plan, "T-1", run.outside)
    for e in out["vertexSet"]:
        for m in e:
            assert " ".join(out["sents"][m["sent_id"]][m["pos"][0]:m["pos"][1]]) == m["name"]
    assert " ".join(out["sents"][1]) == "General Ann Vale Roe came ."
