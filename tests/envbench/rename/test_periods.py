"""Named periods in TIME names (envbench/rename/periods.py), and their place in numtime's rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envbench.rename import periods
from envbench.rename.coherence import is_interval
from envbench.rename.numtime import rename_time, rename_times
from envbench.rename.periods import LADDERS, move_periods
from envbench.rename.plausible_dates import shift_range, year_bounds


def test_spellings_name_one_period_each() -> None:
    seen: dict[tuple[str, ...], str] = {}
    for ladder in LADDERS:
        assert len(ladder.rungs) >= 2, ladder.name
        for rung in ladder.rungs:
            for spelling in rung:
                key = tuple(spelling.casefold().split())
                assert key not in seen, f"{spelling!r} is in {seen.get(key)} and {ladder.name}"
                seen[key] = ladder.name


@pytest.mark.parametrize(("name", "step", "want"), [
    ("the Middle Ages", 1, "the Renaissance"),
    ("the Middle Ages", -1, "the Roman era"),
    ("Renaissance", -1, "Middle Ages"),
    ("Pleistocene", 1, "Holocene"),
    ("Holocene", 1, "Pleistocene"),  # the last rung moves back
    ("Late Stone Age", -1, "Late Bronze Age"),  # the first rung moves on
    ("the Iron Age", -1, "the Bronze Age"),
    ("Neolithic", 1, "Chalcolithic"),
    ("Palaeocene", 1, "Eocene"),  # a spelling the new rung lacks: its first
    ("Heian Period", 1, "Kamakura Period"),  # the word after the rung stays as written
    ("Keichō era", -1, "Bunroku era"),
    ("Keicho era", 1, "Genna era"),
    ("Second Temple period", 1, "First Temple period"),
    ("Tiffanian NALMA", 1, "Clarkforkian NALMA"),
    ("In Medieval", 1, "In Early modern"),
    ("mediaeval", -1, "ancient"),  # a common word written lower case stays lower case
    ("MEDIEVAL", -1, "ANCIENT"),
    ("Elizabethan", 1, "Jacobean"),
    ("midnight", 1, "noon"),
])
def test_a_period_moves_one_rung(name: str, step: int, want: str) -> None:
    assert move_periods(name.split(), step, 1) == want.split()


@pytest.mark.parametrize("name", ["Pre - Columbian", "Great Depression", "an hour", "autumn", "Edo", "Nara",
                                  "the Stone", "Second Empire", "1997"])
def test_a_name_without_a_ladder_period_is_not_moved(name: str) -> None:
    # "Edo", "Nara" and "Second" count only before a word of their ladder ("period", "Temple")
    assert move_periods(name.split(), 1, 1) is None


def test_a_proper_name_keeps_its_capital_after_a_lower_case_word() -> None:
    assert move_periods(["pre", "-", "Renaissance"], 1, 1) == ["pre", "-", "Enlightenment"]
    assert move_periods(["the", "mediaeval"], 1, 1) == ["the", "early", "modern"]


def test_weekdays_move_by_the_shift_and_keep_their_number() -> None:
    assert move_periods(["Mondays", "and", "Tuesdays"], 1, 3) == ["Thursdays", "and", "Fridays"]
    assert move_periods(["Sunday"], -1, 2) == ["Tuesday"]  # cyclic, whatever the era step


@pytest.mark.parametrize("name", ["a year", "a year and a half", "A day", "a decade"])
def test_a_span_is_a_duration_that_keeps_its_length(name: str) -> None:
    # "Released almost a year after their self - titled EP": the EP's date moved with the release's, so the
    # span between them is what it was; the number plan keeps it (coherence), numtime's rules never move it
    assert rename_time({name: name.split()}, 1, "Doc", 0) is None
    sent = f"Released almost {name} after their debut EP".split()
    assert is_interval(sent, 2, 2 + len(name.split())) is not None


@given(st.sampled_from([(lad, r, v) for lad in LADDERS for r, rung in enumerate(lad.rungs) for v in range(len(rung))]),
       st.sampled_from([1, -1]), st.integers(1, 6))
def test_every_rung_moves_to_another_rung_of_its_ladder(entry: tuple[periods.Ladder, int, int], step: int,
                                                        weekdays: int) -> None:
    ladder, rung, variant = entry
    tokens = ladder.rungs[rung][variant].split() + sorted(ladder.follow)[:1]
    moved = move_periods(tokens, step, weekdays)
    assert moved is not None and moved != tokens
    body = moved[:len(moved) - (1 if ladder.follow else 0)]
    rungs = [i for i, spellings in enumerate(ladder.rungs)
             if any(s.casefold().split() == [w.casefold() for w in body] for s in spellings)]
    assert rungs and rungs[0] != rung
    if not ladder.cyclic:
        assert abs(rungs[0] - rung) == 1


def test_the_periods_of_one_document_move_the_same_way() -> None:
    # "The Tiffanian is preceded by the Torrejonian and followed by the Clarkforkian": one direction for all
    mammal_ages = next(lad for lad in LADDERS if lad.name == "North American land mammal ages")
    rung = {spellings[0]: i for i, spellings in enumerate(mammal_ages.rungs)}
    names = ["Torrejonian", "Tiffanian", "Clarkforkian"]
    entities: dict[int, dict[str, list[str]]] = {i: {n: [n]} for i, n in enumerate(names)}
    entities[3] = {"1990": ["1990"]}
    for attempt in range(10):
        new = rename_times(entities, 1, "Tiffanian", attempt)
        up = int(new[3]["1990"][0]) > 1990
        for i, n in enumerate(names):
            assert rung[new[i][n][0]] == rung[n] + (1 if up else -1)


def test_a_dated_period_beside_a_year_stays_and_keeps_the_year_inside_it() -> None:
    # "Edo period ( 1603 )" had read "Muromachi period ( 1583 )", a period that ended in 1573; and "active in
    # Elizabethan London from 1573 to 1581" read "active in Jacobean London from 1535 to 1543"
    new = rename_time({"Edo period ( 1603 )": ["Edo", "period", "(", "1603", ")"]}, 1, "Doc", 0, 0)
    assert new is not None
    assert new["Edo period ( 1603 )"][:3] == ["Edo", "period", "("] and new["Edo period ( 1603 )"][3] != "1603"
    assert periods.period_years(["Edo", "period"]) == (1603, 1868)
    assert periods.period_years(["Elizabethan", "London"]) == (1558, 1603)
    doc = {"title": "Ketel", "sents": [["active", "in", "Elizabethan", "London", "from", "1573", "to", "1581"]],
           "vertexSet": [[{"name": "Elizabethan", "sent_id": 0, "pos": [2, 3], "type": "TIME"}],
                         [{"name": "1573", "sent_id": 0, "pos": [5, 6], "type": "TIME"}],
                         [{"name": "1581", "sent_id": 0, "pos": [7, 8], "type": "TIME"}]]}
    times = {0: {"Elizabethan": ["Elizabethan"]}, 1: {"1573": ["1573"]}, 2: {"1581": ["1581"]}}
    assert year_bounds(doc, times) == ((1573, 1558, 1603), (1581, 1558, 1603))
    assert shift_range((), year_bounds(doc, times)) == (-15, 22)
    # without a year to keep inside it, a dated period still moves a rung (nothing dates it)
    assert move_periods(["Elizabethan", "London"], 1, 1) == ["Jacobean", "London"]
    assert move_periods(["Elizabethan", "London"], 1, 1, eras=False) == ["Elizabethan", "London"]


def test_ordinal_days_and_months_stay_days_and_months() -> None:
    name = "the 26th day of the 4th month"
    for seed in range(30):
        new = rename_time({name: name.split()}, seed, "Battle of Kashii", 3, 0)
        assert new is not None
        day, month = new[name][1], new[name][5]
        assert 1 <= int(day[:-2]) <= 28 and 1 <= int(month[:-2]) <= 12
        assert day[-2:] == {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd"}.get(int(day[:-2]), "th")
