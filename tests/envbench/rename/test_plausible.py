"""CovEReD's plausibility rule (``envbench.rename.plausible``), tried as a candidate filter (issue 58)."""

from __future__ import annotations

from pathlib import Path

from envbench.rename.plausible import entity_roles, item_roles, plausible
from tests.envbench.index_fixture import Builder, connect


def test_an_entitys_roles_come_from_its_documents_triples() -> None:
    labels = [{"h": 0, "t": 1, "r": "P57"}, {"h": 2, "t": 0, "r": "P161"}, {"h": 0, "t": 3, "r": "P31"}]
    assert entity_roles(labels, 0) == {("P57", "subject"), ("P161", "value")}  # P31 is no role
    assert entity_roles(labels, 4) == frozenset()


def test_a_candidate_must_have_played_one_of_the_roles(tmp_path: Path) -> None:
    b = Builder()
    b.item("Q1", "Blade Runner").item("Q2", "Ridley Scott").item("Q3", "Hey Jude").item("Q4", "The Beatles")
    b.edge("Q1", "P57", "Q2").edge("Q3", "P175", "Q4").edge("Q1", "P31", "Q11424")
    roles = item_roles(connect(b.write(tmp_path / "index")), ["Q1", "Q2", "Q3", "Q9"])
    assert roles == {"Q1": {("P57", "subject")}, "Q2": {("P57", "value")}, "Q3": {("P175", "subject")}}
    film = frozenset({("P57", "subject"), ("P577", "subject")})  # a film of the document: director, date
    assert plausible(film, roles["Q1"]) and not plausible(film, roles["Q3"]) and not plausible(film, frozenset())
    assert plausible(frozenset(), frozenset())  # an entity in no triple takes any candidate
