from __future__ import annotations

from pathlib import Path

from envbench.rename.fine_types import (
    ancestors,
    choose_fine_type,
    class_sizes,
    fine_types,
    fits_coarse,
    item_types,
)
from tests.envbench.index_fixture import connect, tiny_world


def test_typing_rule(tmp_path: Path) -> None:
    con = connect(tiny_world().write(tmp_path))
    ft = fine_types(con, ["Q100", "Q200", "Q401", "Q402", "Q403", "Q404", "Q405", "Q999"])
    assert ft["Q100"] == "Q5" and ft["Q200"] == "Q515"
    assert ft["Q401"] == "Q515"  # city is a subclass of human settlement: the specific one wins
    assert ft["Q402"] == "Q4830453"  # only the preferred value counts
    assert ft["Q403"] == "Q515"  # 33 cities vs 7 countries: the more frequent class
    assert ft["Q405"] == "Q4830453"
    assert "Q404" not in ft and "Q999" not in ft  # deprecated only / unknown: no type
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
