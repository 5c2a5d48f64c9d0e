from __future__ import annotations

from typing import Any

import pytest

from envbench.rename.candidates import MAX_WINDOWS, ItemNames
from envbench.rename.regnal import any_regnal, is_regnal
from tests.envbench.index_fixture import mention
from tests.envbench.rename.test_engine import _draws, _run


@pytest.mark.parametrize(("name", "regnal"), [
    ("Frederick I", True), ("Carol I", True), ("Louis XIV", True), ("Léopold I", True), ("Pius X", True),
    ("King Carol I", True), ("Elector Frederick III", True), ("Ptolemaic Queen Cleopatra VII", True),
    ("Charles IV of Spain", True), ("Pope Benedict XVI", True),
    ("John D. Rockefeller III", False), ("John E. Jones III", False), ("Ezzelino da Romano III", False),
    ("Malcolm X", False), ("Walt Disney", False), ("Henry", False), ("I", False), ("Mark V Smith", False),
    ("Louis XLII", False), ("louis xiv", False),
])
def test_which_names_read_as_a_monarchs(name: str, regnal: bool) -> None:
    assert is_regnal(name) is regnal


def test_any_regnal() -> None:
    assert any_regnal(["Charles", "Charles IV"]) and not any_regnal(["Charles", "Carlos"]) and not any_regnal([])


def _director_doc(name: str) -> dict[str, Any]:
    words = ["The", "film", "was", "directed", "by", *name.split(), "."]
    return {"title": "Film", "labels": [], "sents": [words],
            "vertexSet": [[mention(name, 0, [4, 4 + len(name.split())], "PER")]]}


def test_no_one_but_a_monarch_takes_a_monarchs_name() -> None:
    from envbench.rename.engine import settle_linked

    # "directed by Emmett Malloy" had read "directed by Frederick I"
    run, slots = _run(_director_doc("Emmett Malloy"), ["Q1"], {"Q1": "Q5"})
    names = {"Q7": ItemNames("Frederick I", ()), "Q8": ItemNames("Nick Cave", ())}
    draws = _draws(slots, total=10, windows={(0, 0): ["Q7", "Q8"]}, names=names)
    assert settle_linked(run, 0, draws) is None
    assert run.new_items == {0: "Q8"}


def test_a_monarch_prefers_a_monarchs_name_in_any_window_and_else_takes_the_first_fit() -> None:
    from envbench.rename.engine import settle_linked

    names = {"Q7": ItemNames("Bob Carr", ()), "Q8": ItemNames("George I", ())}
    last = MAX_WINDOWS - 1
    windows: dict[tuple[int, int], list[str]] = {(0, w): [] for w in range(MAX_WINDOWS)}
    windows[(0, 0)], windows[(0, last)] = ["Q7"], ["Q8"]
    run, slots = _run(_director_doc("Charles IV"), ["Q1"], {"Q1": "Q5"})
    assert settle_linked(run, 0, _draws(slots, total=1000, windows=windows, names=names)) is None
    assert run.new_items == {0: "Q8"}  # "Charles IV of Spain" -> "George I of Spain", not "Bob Carr of Spain"
    windows[(0, last)] = []
    run, slots = _run(_director_doc("Charles IV"), ["Q1"], {"Q1": "Q5"})
    assert settle_linked(run, 0, _draws(slots, total=1000, windows=windows, names=names)) is None
    assert run.new_items == {0: "Q7"}  # no monarch drawn: the first that fits, not kept



def test_a_title_before_a_mention_takes_no_name_that_opens_with_one() -> None:
    from envbench.rename.engine import settle_linked

    # "The inlet was named for King Haakon VII of Norway" had read "named for King Czar Nicholas II of the United
    # Arab Emirates" (salt third1207s68)
    words = "The inlet was named for King Haakon VII by Larsen .".split()
    doc = {"title": "Bay", "labels": [], "sents": [words], "vertexSet": [[mention("Haakon VII", 0, [6, 8], "PER")]]}
    names = {"Q7": ItemNames("Czar Nicholas II", ()), "Q8": ItemNames("Olaf V", ())}
    run, slots = _run(doc, ["Q1"], {"Q1": "Q5"})
    assert settle_linked(run, 0, _draws(slots, total=10, windows={(0, 0): ["Q7", "Q8"]}, names=names)) is None
    assert run.new_items == {0: "Q8"}
    # without a title before it, the first fits
    doc["sents"] = ["The inlet was named for the monarch Haakon VII by Larsen .".split()]
    doc["vertexSet"] = [[mention("Haakon VII", 0, [7, 9], "PER")]]
    run, slots = _run(doc, ["Q1"], {"Q1": "Q5"})
    assert settle_linked(run, 0, _draws(slots, total=10, windows={(0, 0): ["Q7", "Q8"]}, names=names)) is None
    assert run.new_items == {0: "Q7"}


def _titled_doc(title: str, name: str) -> dict[str, Any]:
    words = ["an", "official", "of", title, *name.split(), "."]
    return {"title": "Consort", "labels": [], "sents": [words],
            "vertexSet": [[mention(name, 0, [4, 4 + len(name.split())], "PER")]]}


def test_a_name_after_a_sovereigns_title_takes_a_monarchs_name_or_keeps_its_own() -> None:
    from envbench.core.reasons import KeptReason
    from envbench.rename.engine import settle_linked
    from envbench.rename.regnal import after_sovereign_title

    # "Gao Lishi , an eunuch official of Emperor Xuanzong" had read "of Emperor Lino S. Cayetano" (salt fresh1208g)
    doc = _titled_doc("Emperor", "Xuanzong")
    assert after_sovereign_title(doc["sents"], doc["vertexSet"][0])
    names = {"Q7": ItemNames("Lino S. Cayetano", ()), "Q8": ItemNames("Frederick II", ())}
    last = MAX_WINDOWS - 1
    windows: dict[tuple[int, int], list[str]] = {(0, w): [] for w in range(MAX_WINDOWS)}
    windows[(0, 0)], windows[(0, last)] = ["Q7"], ["Q8"]
    run, slots = _run(doc, ["Q1"], {"Q1": "Q5"})
    assert settle_linked(run, 0, _draws(slots, total=1000, windows=windows, names=names)) is None
    assert run.new_items == {0: "Q8"}  # "Emperor Frederick II"
    windows[(0, last)] = []
    run, slots = _run(doc, ["Q1"], {"Q1": "Q5"})
    assert settle_linked(run, 0, _draws(slots, total=1000, windows=windows, names=names)) is None
    assert run.new_items == {} and run.rows[0].reason == KeptReason.NO_CANDIDATE
    # a prince or a count may be anyone: "Count Lev Nikolayevich Tolstoy" takes the first fit
    run, slots = _run(_titled_doc("Count", "Lev Tolstoy"), ["Q1"], {"Q1": "Q5"})
    assert settle_linked(run, 0, _draws(slots, total=1000, windows=windows, names=names)) is None
    assert run.new_items == {0: "Q7"}
