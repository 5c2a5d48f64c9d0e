from __future__ import annotations

from pathlib import Path

import duckdb

from envbench.rename.fine_types import (
    COARSE_ROOTS,
    ancestors,
    choose_fine_type,
    class_kinds,
    class_sizes,
    fine_types,
    fits_coarse,
    item_types,
)
from tests.envbench.index_fixture import Builder, connect, tiny_world


def test_typing_rule(tmp_path: Path) -> None:
    con = connect(tiny_world().write(tmp_path))
    pairs = [("Q100", "PER"), ("Q200", "LOC"), ("Q401", "LOC"), ("Q402", "ORG"), ("Q403", "LOC"),
             ("Q404", "PER"), ("Q405", "ORG"), ("Q999", "MISC")]
    ft = fine_types(con, pairs)
    assert ft[("Q100", "PER")] == "Q5" and ft[("Q200", "LOC")] == "Q515"
    assert ft[("Q401", "LOC")] == "Q515"  # city is a subclass of human settlement: the specific one wins
    assert ft[("Q402", "ORG")] == "Q4830453"  # only the preferred value counts
    assert ft[("Q403", "LOC")] == "Q515"  # 33 cities vs 7 countries, both places: the more frequent class
    assert ft[("Q405", "ORG")] == "Q4830453"
    assert ("Q404", "PER") not in ft and ("Q999", "MISC") not in ft  # deprecated only / unknown: no type
    assert set(ft) == set(pairs) - {("Q404", "PER"), ("Q999", "MISC")}
    assert item_types(con, ["Q403"]) == {"Q403": ["Q515", "Q6256"]}


def test_ties_go_to_the_smaller_qid() -> None:
    anc = {"Q20": frozenset({"Q20"}), "Q3": frozenset({"Q3"}), "Q100": frozenset({"Q100"})}
    assert choose_fine_type(["Q20", "Q3", "Q100"], anc, {"Q20": 5, "Q3": 5, "Q100": 5}) == "Q3"
    assert choose_fine_type(["Q20", "Q3"], anc, {"Q20": 6, "Q3": 5}) == "Q20"


def test_closure_and_coarse_fit(tmp_path: Path) -> None:
    con = connect(tiny_world().write(tmp_path))
    anc = ancestors(con, ["Q515", "Q5", "Q6256"])
    assert anc["Q515"] == {"Q515", "Q486972", "Q2221906"}
    assert fits_coarse("LOC", ["Q515"], anc) and fits_coarse("PER", ["Q5"], anc)
    assert not fits_coarse("PER", ["Q515"], anc) and fits_coarse("MISC", ["Q515"], anc)
    assert not fits_coarse("MISC", [], anc)
    assert class_sizes(con, ["Q515", "Q6256"]) == {"Q515": 33, "Q6256": 7}


# Germany (Q183): its ten P31 values in the Wikidata Toolkit sample dump
# (../shared/data/wikidata-samples/wikidata-toolkit/mock-dump-for-long-testing.json), in that order.
GERMANY_P31 = ("Q3624078", "Q185441", "Q6256", "Q43702", "Q160016", "Q6505795", "Q7270", "Q619610", "Q4209223",
               "Q7275")
SOVEREIGN, COUNTRY, STATE, UN_MEMBER = "Q3624078", "Q6256", "Q7275", "Q160016"
GEO_LOCATION, POLITICAL_ENTITY = "Q2221906", "Q1048835"  # LOC roots


def _germany_world() -> Builder:
    """Germany's real P31 values over a hand-made P279 fragment: sovereign state under country and
    state (both places); UN membership and the other six classes with no P279 at all, so no LOC
    root; 12 other UN members, 4 other sovereign states, 9 other countries."""
    assert GEO_LOCATION in COARSE_ROOTS["LOC"] and POLITICAL_ENTITY in COARSE_ROOTS["LOC"]
    b = Builder()
    b.subclass(SOVEREIGN, COUNTRY, STATE).subclass(COUNTRY, GEO_LOCATION).subclass(STATE, POLITICAL_ENTITY)
    b.item("Q183", "Germany", p31=GERMANY_P31)
    for k in range(12):
        b.item(f"Q{1000 + k}", f"Member {k}", p31=(UN_MEMBER,))
    for k in range(4):
        b.item(f"Q{2000 + k}", f"Sovereign {k}", p31=(SOVEREIGN, COUNTRY))
    for k in range(9):
        b.item(f"Q{3000 + k}", f"Country {k}", p31=(COUNTRY,))
    return b


def test_a_class_that_does_not_fit_the_coarse_type_loses_to_a_smaller_one_that_does(tmp_path: Path) -> None:
    con = connect(_germany_world().write(tmp_path))
    sizes = class_sizes(con, [SOVEREIGN, COUNTRY, UN_MEMBER])
    assert sizes[UN_MEMBER] == 13 > sizes[SOVEREIGN] == 5  # UN membership is the larger class
    assert sizes[COUNTRY] == 14  # and country larger still, but its subclass is on the item
    ft = fine_types(con, [("Q183", "LOC"), ("Q183", "MISC")])
    assert ft[("Q183", "LOC")] == SOVEREIGN
    assert ft[("Q183", "MISC")] == UN_MEMBER  # MISC takes any class: the rule without step 2
    anc = ancestors(con, GERMANY_P31)
    types = item_types(con, ["Q183"])["Q183"]
    assert choose_fine_type(types, anc, sizes) == UN_MEMBER  # no coarse type: the rule without step 2


def test_no_fitting_class_falls_back_to_all_classes(tmp_path: Path) -> None:
    con = connect(_germany_world().write(tmp_path))
    # A gold link of a PER entity to Germany: no class is a person, so all of them compete
    assert not fits_coarse("PER", GERMANY_P31, ancestors(con, GERMANY_P31))
    assert fine_types(con, [("Q183", "PER")]) == {("Q183", "PER"): UN_MEMBER}
    # A type without roots (NUM, TIME are never linked) filters nothing either
    assert fine_types(con, [("Q183", "NUM")]) == {("Q183", "NUM"): UN_MEMBER}


def test_one_fine_type_per_qid_and_coarse_pair(tmp_path: Path) -> None:
    b = _germany_world()
    b.subclass("Q4830453", "Q43229")  # business under organization (an ORG root)
    b.item("Q50", "Dual", p31=("Q4830453", UN_MEMBER))  # a business and a UN member, say
    con = connect(b.write(tmp_path))
    ft = fine_types(con, [("Q50", "ORG"), ("Q50", "LOC"), ("Q50", "MISC"), ("Q183", "LOC")])
    assert ft == {("Q50", "ORG"): "Q4830453", ("Q50", "LOC"): UN_MEMBER, ("Q50", "MISC"): UN_MEMBER,
                  ("Q183", "LOC"): SOVEREIGN}


def test_fine_types_are_deterministic(tmp_path: Path) -> None:
    con = connect(_germany_world().write(tmp_path))
    pairs = [("Q183", "LOC"), ("Q183", "MISC"), ("Q1000", "LOC"), ("Q2000", "LOC"), ("Q3000", "MISC")]
    first = fine_types(con, pairs)
    # order and repeats of the input do not matter, nor does a second call on the same connection
    assert fine_types(con, list(reversed(pairs)) + pairs) == first
    assert list(first) == sorted(first)
    # among fitting classes of equal size the smaller QID wins, whatever the input order
    anc = {c: frozenset({c, GEO_LOCATION}) for c in ("Q20", "Q3")} | {"Q1": frozenset({"Q1"})}
    for classes in (["Q20", "Q3", "Q1"], ["Q1", "Q3", "Q20"]):
        assert choose_fine_type(classes, anc, {"Q20": 5, "Q3": 5, "Q1": 9}, "LOC") == "Q3"
        assert choose_fine_type(classes, anc, {"Q20": 5, "Q3": 5, "Q1": 9}, "MISC") == "Q1"


def test_class_kinds_are_the_head_nouns_of_class_labels_with_items(tmp_path: Path) -> None:
    b = Builder()
    b.item("Q1", "military unit").item("Q2", "record label").item("Q3", "city of France").item("Q4", "river")
    for k, cls in enumerate(("Q1", "Q1", "Q2", "Q2", "Q3", "Q3", "Q4")):
        b.item(f"Q{10 + k}", f"Thing {k}", p31=(cls,))
    con = connect(b.write(tmp_path))
    # "river" has one item only: too few to name a kind
    assert class_kinds(con) == {"Q1": "unit", "Q2": "label", "Q3": "city"}
    assert class_kinds(duckdb.connect()) == {}  # a bare connection knows no classes
