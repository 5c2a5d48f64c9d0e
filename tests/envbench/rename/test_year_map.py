"""A document's years under one monotone map (envbench/rename/year_map.py): which gaps stretch, by how much,
and how numtime writes the years it maps."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from envbench.rename.numtime import (
    MAX_YEAR,
    TimeShift,
    document_shift,
    offset_at,
    rename_time,
    short_spans,
    span_end_year,
)
from envbench.rename.plausible_dates import HUMAN_SPAN, shift_range
from envbench.rename.year_map import MAX_STEP, YearPlan, plan_years


def test_a_gap_is_free_inside_a_stretch_range_outside_every_rigid_one_and_longer_than_a_year() -> None:
    years = [1870, 1890, 1891, 1900, 1938, 1981]
    plan = plan_years(years, False, stretch=[(1870, 1938)], rigid=[(1895, 1910)])
    # 1870-1890 free; 1890-1891 one year; 1891-1900 and 1900-1938 touch the rigid range; 1938-1981 outside
    assert plan.free == frozenset({0})
    assert plan_years(years, True, stretch=[(1870, 1938)], rigid=[]).free == frozenset()  # a decade: tens
    assert plan_years(years, False, stretch=[], rigid=[]).offsets(1, "T", 0) == ()


def test_a_rigid_range_between_written_years_keeps_the_gaps_across_it() -> None:
    # a rigid range whose ends are no written years still holds the gaps that cross it
    plan = plan_years([1900, 1920, 1940], False, stretch=[(1900, 1940)], rigid=[(1915, 1918)])
    assert plan.free == frozenset({1})


@settings(max_examples=200, deadline=None)
@given(years=st.lists(st.integers(1000, 2020), min_size=2, max_size=12, unique=True).map(sorted),
       seed=st.integers(0, 10_000), lives=st.booleans())
def test_offsets_keep_order_one_year_gaps_and_every_span_within_a_quarter(years: list[int], seed: int,
                                                                          lives: bool) -> None:
    life = ((years[0], years[-1]),) if lives else ()
    plan = plan_years(years, False, stretch=[(years[0], years[-1])], rigid=[], lives=life)
    offsets = plan.offsets(seed, "Doc", 0)
    if not offsets:
        assert not plan.free or (lives and years[-1] - years[0] <= HUMAN_SPAN)
        return
    new = [y + o for y, o in offsets]
    assert [y for y, _ in offsets] == years and offsets[0][1] == 0
    for k in range(len(years) - 1):
        gap, new_gap = years[k + 1] - years[k], new[k + 1] - new[k]
        assert new_gap >= 1  # the order is kept, and no two years meet
        if gap == 1:
            assert new_gap == 1  # "the 1990–91 season"
        assert abs(new_gap - gap) <= MAX_STEP
        if k in plan.free:
            assert new_gap != gap  # a free gap moves
    for a in range(len(years)):
        for b in range(a + 1, len(years)):
            span = years[b] - years[a]
            assert abs((new[b] - new[a]) - span) <= max(1, span // 4) if span > 1 else new[b] - new[a] == span
    if lives and years[-1] - years[0] <= HUMAN_SPAN:
        assert new[-1] - new[0] <= HUMAN_SPAN


@settings(max_examples=200, deadline=None)
@given(points=st.lists(st.tuples(st.integers(1000, 2000), st.integers(-10, 10)), min_size=1, max_size=6,
                       unique_by=lambda p: p[0]).map(sorted))
def test_a_year_between_two_written_ones_moves_monotonely(points: list[tuple[int, int]]) -> None:
    # offsets that keep every written year apart (as YearPlan draws them) give a map that never reverses
    fixed = [points[0]]
    for y, o in points[1:]:
        fixed.append((y, max(o, fixed[-1][1] - (y - fixed[-1][0]) + 1)))
    mapped = [y + offset_at(fixed, y) for y in range(fixed[0][0] - 5, fixed[-1][0] + 5)]
    assert mapped == sorted(mapped)
    assert all(offset_at(fixed, y) == o for y, o in fixed)


def test_the_shift_keeps_each_stretched_year_in_range_and_moves_every_year() -> None:
    offsets = ((2000, 0), (2010, 3), (2020, 5))
    for attempt in range(30):
        shift = document_shift([2000, 2010, 2020], False, 1, "Doc", attempt, offsets=offsets)
        assert shift.offsets == offsets
        assert all(shift.year(y) <= MAX_YEAR and shift.year(y) != y for y in (2000, 2010, 2020))
    # the floors and bounds of plausible_dates are checked year by year under the offsets
    assert shift_range([(2020, 2000)], [(2010, 2001, 2050)], offsets) == (2001 - 2010 - 3, 2050 - 2010 - 3)


def test_a_short_end_moves_with_the_year_it_follows() -> None:
    assert span_end_year(1983, "84") == 1984 and span_end_year(1527, "8") == 1528 and span_end_year(1999, "05") == 2005
    assert short_spans({"x": ["1983–84"], "y": ["1963", "-", "65"]}) == [(1983, 1984), (1963, 1965)]
    shift = TimeShift(10, 1, 1, offsets=((1960, 0), (1983, 4), (1990, 6)))
    assert shift.year(1983) == 1997
    new = rename_time({"1983–84": ["1983–84"]}, 1, "T", 0, 0, shift=shift)
    assert new == {"1983–84": ["1997–98"]}
    assert rename_time({"84": ["84"]}, 1, "T", 0, 0, shift=shift, span_end=True, span_start=1983) == {"84": ["98"]}


def test_a_plan_without_free_gaps_moves_years_as_one_shift_did() -> None:
    plan = YearPlan((1900, 1950), frozenset(), ())
    assert plan.offsets(1, "T", 0) == ()
    for attempt in range(10):
        assert document_shift([1900, 1950], False, 1, "T", attempt) == document_shift(
            [1900, 1950], False, 1, "T", attempt, offsets=plan.offsets(1, "T", attempt))


def test_a_span_with_a_short_end_moves_both_ends() -> None:
    # Re-DocRED test: "once the 2011 - 12 ACT Budget is passed" had read "the 1982 - 12 Region Hovedstaden Budget"
    # (salt third1207s69): the year moved and its short end stayed
    from envbench.rename.year_map import move_years

    assert move_years(["2011", "-", "12", "ACT", "Budget"], [(2011, 1982)]) == ("1982", "-", "83", "ACT", "Budget")
    assert move_years(["2011–12", "season"], [(2011, 1982)]) == ("1982–83", "season")
    assert move_years(["1999", "–", "00"], [(1999, 2003)]) == ("2003", "–", "04")
    assert move_years(["Route", "-", "12"], [(2011, 1982)]) == ("Route", "-", "12")  # no year before: no span
