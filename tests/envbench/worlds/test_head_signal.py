"""The ``head`` typing signal of kb-from-corpus (issue 31): the type must show in the name.

Written from offline substitutions of Re-DocRED test that read wrong: "an Associate Justice of the
Supreme Court of Ohio" had become "... of the Societe Internationale de Telecommunications
Aeronautiques", "played college baseball for the Huskies" "for the Levi 's", "premiered at the Sala
Planeta" "at the Gun Wharf", "accessible only by B.C. Ferries" "by El Buscón": all clusters no signal
had typed, swapped across kinds inside a catch-all class.
"""

from __future__ import annotations

from envbench.core.types import CATCH_ALL_CLASSES
from envbench.worlds.fine_typing import HEAD_CLASS_BASE, Evidence, FineTyper, Typing

ORGANIZATION, LOCATION = "Q43229", "Q2221906"
LIBRARY = "Q7075"


def _pass(rows: list[tuple[str, str, str]]) -> tuple[FineTyper, list[Typing]]:
    """(coarse, name, class) rows, typed as given (``fallback`` for a catch-all), through the head pass."""
    evidences = [Evidence(coarse, [name]) for coarse, name, _ in rows]
    typed = [Typing(q, "fallback" if q in CATCH_ALL_CLASSES else "name") for _, _, q in rows]
    typer = FineTyper()
    return typer, typer.head_pass(evidences, typed)


def test_names_that_share_a_head_get_a_class_of_it_and_one_word_names_stay_catch_all() -> None:
    typer, out = _pass([("ORG", "Supreme Court of Ohio", ORGANIZATION),
                        ("ORG", "Supreme Court of Nevada", ORGANIZATION),
                        ("ORG", "Court of Appeals of Texas", ORGANIZATION),
                        ("ORG", "Societe Internationale de Telecommunications Aeronautiques", ORGANIZATION),
                        ("ORG", "Huskies", ORGANIZATION),
                        ("LOC", "Sala Planeta", LOCATION),
                        ("ORG", "B.C. Ferries", ORGANIZATION)])
    courts = {t.qid for t in out[:3]}
    assert len(courts) == 1
    (court,) = courts
    assert int(court[1:]) >= HEAD_CLASS_BASE and {t.signal for t in out[:3]} == {"head"}
    info = typer.class_info(court)
    assert info is not None and (info.head, info.label, info.parent) == ("court", "court (head noun)", ORGANIZATION)
    # a head no other name shares, a one-word name: left at the catch-all, so generate keeps them
    assert [t.qid for t in out[3:]] == [ORGANIZATION, ORGANIZATION, LOCATION, ORGANIZATION]


def test_a_head_learns_the_class_of_the_names_typed_with_it() -> None:
    _, out = _pass([("ORG", "British Library", LIBRARY), ("ORG", "Library of Alexandria", LIBRARY),
                    ("ORG", "Library of Congress National Recording Registry", ORGANIZATION),
                    ("ORG", "Library of Nowhere", ORGANIZATION)])
    assert [t.qid for t in out[2:]] == [LIBRARY, LIBRARY] and out[2].signal == "head"
    # one typed name is not enough to learn from, and two that disagree teach nothing
    _, out = _pass([("ORG", "British Library", LIBRARY), ("ORG", "Library of Congress", ORGANIZATION)])
    assert out[1].qid == ORGANIZATION
    _, out = _pass([("ORG", "British Library", LIBRARY), ("ORG", "Paris Library", "Q1"),
                    ("ORG", "Library of Congress", ORGANIZATION)])
    assert out[2].qid == ORGANIZATION


def test_the_head_classes_are_numbered_from_coarse_and_head_alone() -> None:
    rows = [("ORG", f"Supreme Court of {s}", ORGANIZATION) for s in ("Ohio", "Nevada", "Utah")]
    _, a = _pass(rows)
    _, b = _pass([("MISC", "X Register", "Q35120")] * 3 + rows)
    assert a[0].qid == b[3].qid and b[0].qid != b[3].qid
