"""Named periods in TIME names (envbench/rename/periods.py), and their place in numtime's rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envbench.rename import periods
from envbench.rename.numtime import rename_time, rename_times
from envbench.rename.periods import LADDERS, SPAN_UNITS, move_periods, move_span


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


@pytest.mark.parametrize(("name", "up", "want"), [
    ("a year", True, "a decade"),
    ("a year", False, "a month"),
    ("a year and a half", False, "a month and a half"),
    ("A day", False, "A week"),  # the shortest unit moves up
    ("a decade", True, "a year"),
])
def test_a_span_moves_one_unit(name: str, up: bool, want: str) -> None:
    assert periods.has_span(name.split())
    assert move_span(name.split(), up) == want.split()


@pytest.mark.parametrize("name", ["an hour", "one year", "a dozen", "year"])
def test_other_spans_are_not_moved(name: str) -> None:
    assert move_span(name.split(), True) is None
    assert not periods.has_span(name.split())


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


@given(st.sampled_from(SPAN_UNITS), st.booleans())
def test_every_span_unit_moves_to_a_neighbour(unit: str, up: bool) -> None:
    moved = move_span(["a", unit], up)
    assert moved is not None and moved[0] == "a"
    assert abs(SPAN_UNITS.index(moved[1]) - SPAN_UNITS.index(unit)) == 1


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


def test_an_era_name_is_renamed_and_its_years_move() -> None:
    new = rename_time({"Edo period ( 1603 )": ["Edo", "period", "(", "1603", ")"]}, 1, "Doc", 0, 0)
    assert new is not None
    tokens = new["Edo period ( 1603 )"]
    year = int(tokens[3])
    assert tokens[0] == ("Meiji" if year > 1603 else "Muromachi") and tokens[1:3] == ["period", "("]


def test_ordinal_days_and_months_stay_days_and_months() -> None:
    name = "the 26th day of the 4th month"
    for seed in range(30):
        new = rename_time({name: name.split()}, seed, "Battle of Kashii", 3, 0)
        assert new is not None
        day, month = new[name][1], new[name][5]
        assert 1 <= int(day[:-2]) <= 28 and 1 <= int(month[:-2]) <= 12
        assert day[-2:] == {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd"}.get(int(day[:-2]), "th")
