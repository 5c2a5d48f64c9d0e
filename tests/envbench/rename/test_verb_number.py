"""A name and the verb after it agree in number (issue 58 §3: "… is an island" never an archipelago)."""

from __future__ import annotations

from envbench.rename.candidates import ItemNames
from envbench.rename.verb_number import (
    COUNTED,
    PLURAL,
    SINGULAR,
    breaks_number,
    reads_counted_plural,
    reads_plural,
    verb_numbers,
)
from tests.envbench.rename.test_built_on import _doc, _names, _settle


def test_an_island_never_becomes_an_archipelago() -> None:
    doc = _doc(["Tasmania is an island state of Australia ."], [[("Tasmania", 0, "LOC")]])
    run = _settle(doc, ["Q1"], {0: [("Q7", ItemNames("Faroe Islands", ())), ("Q8", ItemNames("Sicily", ()))]})
    assert _names(run, 0) == ["Sicily"]
    # and the other way: "The Azores are" never "Madeira are"; without a verb that shows it, either
    doc = _doc(["The Canary Islands are an archipelago ."], [[("Canary Islands", 0, "LOC")]])
    run = _settle(doc, ["Q1"], {0: [("Q7", ItemNames("Madeira", ())), ("Q8", ItemNames("Faroe Islands", ()))]})
    assert _names(run, 0) == ["Faroe Islands"]
    doc = _doc(["He sailed to Tasmania in May ."], [[("Tasmania", 0, "LOC")]])
    run = _settle(doc, ["Q1"], {0: [("Q7", ItemNames("Faroe Islands", ()))]})
    assert _names(run, 0) == ["Faroe Islands"]


def test_number_rules() -> None:
    assert reads_plural("Faroe Islands") and reads_plural("Alps") and not reads_plural("United States")
    assert not reads_plural("Wales") and not reads_plural("Netherlands")
    assert breaks_number("Tasmania", "Faroe Islands", SINGULAR) and not breaks_number("Tasmania", "Sicily", SINGULAR)
    assert breaks_number("Canary Islands", "Madeira", PLURAL) and not breaks_number("Tasmania", "Faroe Islands", None)
    doc = _doc(["Tasmania is big .", "Tasmania , an island , was settled ."], [[("Tasmania", 0, "LOC"),
                                                                           ("Tasmania", 1, "LOC")]])
    assert verb_numbers(doc["sents"], doc["vertexSet"][0]) == {"Tasmania": SINGULAR}


def test_a_name_counted_in_the_plural_stays_plural() -> None:
    # "having won two EuroLeague Championships and a Cup Winners ' Cup" had read "having won five Ryder Cup"
    # (salt second1207s68)
    doc = _doc(["It is a successful team , having won two EuroLeague Championships ."],
               [[("EuroLeague Championships", 0, "MISC")]])
    run = _settle(doc, ["Q1"], {0: [("Q7", ItemNames("Ryder Cup", ())), ("Q8", ItemNames("Brit Awards", ()))]})
    assert _names(run, 0) == ["Brit Awards"]
    assert verb_numbers(doc["sents"], doc["vertexSet"][0]) == {"EuroLeague Championships": COUNTED}
    # without a count before it, or after a year, either
    for sentence in ("It won the EuroLeague Championships .", "It won the 2006 EuroLeague Championships ."):
        doc = _doc([sentence], [[("EuroLeague Championships", 0, "MISC")]])
        assert verb_numbers(doc["sents"], doc["vertexSet"][0]) == {}
        run = _settle(doc, ["Q1"], {0: [("Q7", ItemNames("Ryder Cup", ()))]})
        assert _names(run, 0) == ["Ryder Cup"]
    assert reads_counted_plural("Grammy Awards") and not reads_counted_plural("Davis Cup")
    assert not reads_counted_plural("Africa Cup of Nations") and reads_counted_plural("World Games of Ohio")
    doc = _doc(["the 14 EuroLeague Championships teams"], [[("EuroLeague Championships", 0, "MISC")]])
    assert verb_numbers(doc["sents"], doc["vertexSet"][0]) == {}  # the count counts the teams
    assert not reads_counted_plural("Lord 's") and not reads_counted_plural("Memphis") and not reads_counted_plural("Awards")
    assert breaks_number("EuroLeague Championships", "Ryder Cup", COUNTED)
    assert not breaks_number("EuroLeague Championships", "Brit Awards", COUNTED)
