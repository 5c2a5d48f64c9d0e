"""P31-overlap preference: candidates sharing more P31 classes with the entity are tried first."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from envbench.rename.audit import Auditor
from envbench.rename.candidates import ItemNames
from envbench.rename.engine import DocInfo, Draws, plan_runs, settle_linked
from envbench.rename.fine_types import by_p31_overlap, p31_jaccard
from envbench.rename.stats import StatsTally
from tests.envbench.index_fixture import mention

STATE, CONSTITUENT, HYMNODY = "Q35657", "Q107390", "Q1142851"


def test_jaccard() -> None:
    assert p31_jaccard({STATE, CONSTITUENT}, {STATE, CONSTITUENT}) == 1.0
    assert p31_jaccard({STATE, CONSTITUENT}, {STATE, HYMNODY}) == 1 / 3
    assert p31_jaccard(set(), set()) == 0.0 and p31_jaccard({STATE}, set()) == 0.0


def test_by_p31_overlap_puts_the_closest_first_and_keeps_draw_order_on_ties() -> None:
    types = {"Hymnody": {STATE, HYMNODY}, "Texas": {STATE, CONSTITUENT}, "Ohio": {STATE, CONSTITUENT}}
    assert by_p31_overlap(["Hymnody", "Texas", "Ohio"], {STATE, CONSTITUENT}, types) == ["Texas", "Ohio", "Hymnody"]
    assert by_p31_overlap(["Hymnody", "Texas"], set(), types) == ["Hymnody", "Texas"]  # no type data: unchanged


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("abcdef"), unique=True), st.sets(st.sampled_from("xyz")),
       st.dictionaries(st.sampled_from("abcdef"), st.sets(st.sampled_from("xyz"))))
def test_by_p31_overlap_is_a_stable_sort_by_jaccard(window: list[str], own: set[str],
                                                   types: dict[str, set[str]]) -> None:
    got = by_p31_overlap(window, own, types)
    assert sorted(got) == sorted(window)
    js = [p31_jaccard(own, types.get(c, set())) for c in got]
    assert js == sorted(js, reverse=True) or not own
    for a, b in zip(got, got[1:]):  # equal overlap: draw order
        if p31_jaccard(own, types.get(a, set())) == p31_jaccard(own, types.get(b, set())):
            assert window.index(a) < window.index(b)


def test_the_engine_takes_the_closest_candidate_of_a_window_and_stats_count_it() -> None:
    doc = {"title": "Cal", "sents": [["California", "is", "big", "."]],
           "vertexSet": [[mention("California", 0, [0, 1], "LOC")]], "labels": []}
    info = DocInfo(0, doc, ["Q99"], {("Q99", "LOC"): STATE})
    runs, slots = plan_runs([info], [1], "eval", twins=False)
    auditor = Auditor(con=None, constraints={}, types={"Q99": {STATE, CONSTITUENT}, "Q1": {STATE, HYMNODY},
                                                      "Q2": {STATE, CONSTITUENT}}, anc={})
    names = {"Q1": ItemNames("Hymnody of continental Europe", ()), "Q2": ItemNames("Texas", ())}
    draws = Draws(slots, lambda slot: 2, auditor, {(0, 0): ["Q1", "Q2"]}, names)
    assert settle_linked(runs[0], 0, draws) is None
    (row,) = runs[0].rows
    assert (row.new_qid, row.new_names, row.p31_overlap) == ("Q2", ["Texas"], 1.0)
    tally = StatsTally(1)
    tally.add_run(runs[0], doc)
    p31 = tally.as_dict({})["p31_overlap"]
    assert p31["substitutes"] == 1 and p31["bins"]["1"] == 1 and p31["mean"] == 1.0
