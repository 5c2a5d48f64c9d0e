"""Entities annotated PER that their document's triples say are no person (``rename.person_roles``)."""

from __future__ import annotations

from envbench.core.reasons import KeptReason
from envbench.rename.candidates import ItemNames
from envbench.rename.person_roles import not_a_person


def test_roles_no_person_plays_without_a_persons_role() -> None:
    # Re-DocRED test: Muleshoe (PER) located in Bailey County; Avanza País (PER), whose member Ulises Humala is
    assert not_a_person(frozenset({("P131", "subject"), ("P150", "value")}))
    assert not_a_person(frozenset({("P17", "subject"), ("P463", "value")}))
    # a person Re-DocRED gives a country beside a citizenship (Booker T. Washington) stays a person
    assert not not_a_person(frozenset({("P17", "subject"), ("P27", "subject"), ("P570", "subject")}))
    assert not not_a_person(frozenset({("P50", "value")})) and not not_a_person(frozenset())


def test_a_place_annotated_a_person_keeps_its_name() -> None:
    # "Victor Leal , an Amarillo restaurateur and the former mayor of Muleshoe in Bailey County , Texas" had read
    # "... the former mayor of Sigmund Romberg in Charleston County , Vermont" (salt fresh1208a)
    from tests.envbench.rename.test_built_on import _doc, _names, _row, _settle

    doc = _doc(["He was the former mayor of Muleshoe in Bailey County ."],
               [[("Muleshoe", 0, "PER")], [("Bailey County", 0, "LOC")]])
    doc["labels"] = [{"h": 0, "r": "P131", "t": 1, "evidence": [0]}]
    items = {0: [("Q7", ItemNames("Sigmund Romberg", ()))], 1: [("Q8", ItemNames("Charleston County", ()))]}
    run = _settle(doc, ["Q1", "Q2"], items)
    assert (_row(run, 0).kind, _row(run, 0).reason) == ("kept", KeptReason.NOT_A_PERSON)
    assert _names(run, 1) == ["Charleston County"]
    # without the triple it is a person like any other
    doc["labels"] = []
    assert _names(_settle(doc, ["Q1", "Q2"], items), 0) == ["Sigmund Romberg"]
