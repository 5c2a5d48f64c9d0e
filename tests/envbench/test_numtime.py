from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from envbench.numtime import (
    MAX_YEAR,
    MONTHS,
    DateValue,
    date_value,
    order_kept,
    rename_num,
    rename_time,
)


def _time(*names: str, key: tuple = (1, "T", 0, 0)) -> dict[str, list[str]]:
    out = rename_time({n: n.split() for n in names}, *key)
    assert out is not None
    return out


def test_dates_keep_their_written_form() -> None:
    out = _time("13 March 1963", "March 1963", "1963", "the 1960s", "March 13 , 1963")
    day, month, year = out["13 March 1963"]
    assert re.fullmatch(r"\d{2}", day) and month in MONTHS and re.fullmatch(r"\d{4}", year)
    assert out["March 1963"] == [month, year]  # one mapping for the whole entity
    assert out["1963"] == [year]
    assert out["March 13 , 1963"] == [month, day, ",", year]
    the, decade = out["the 1960s"]
    assert the == "the" and decade.endswith("0s") and decade != "1960s"
    assert (month, year) != ("March", "1963")
    assert int(year) != 1963 and 1000 <= int(year) <= MAX_YEAR


def test_years_never_move_into_the_future_and_decades_change() -> None:
    for k in range(30):
        out = _time("2024", "the 1990s", key=(k, "T", 1, 0))
        assert int(out["2024"][0]) <= MAX_YEAR
        assert out["the 1990s"][1] != "1990s"


def test_other_time_shapes() -> None:
    out = _time("six months", "57-year", "the early 20th - century", "11:59", "Sept. 5th , 2001")
    assert out["six months"][1] == "months" and out["six months"][0] in {
        "one", "two", "three", "four", "five", "seven", "eight", "nine"}
    assert re.fullmatch(r"\d{2}-year", out["57-year"][0]) and out["57-year"][0] != "57-year"
    assert out["the early 20th - century"][2] in {"19th", "21st"}
    h, m = out["11:59"][0].split(":")
    assert 1 <= int(h) <= 12 and 0 <= int(m) <= 59
    month, day = out["Sept. 5th , 2001"][:2]
    assert month.endswith(".") and re.fullmatch(r"\d{1,2}(st|nd|rd|th)", day)


def test_unparseable_time_and_num_give_none() -> None:
    assert rename_time({"autumn": ["autumn"]}, 1, "T", 0, 0) is None
    assert rename_num({"a dozen": ["a", "dozen"]}, 1, "T", 0, 0) is None


def test_numbers_keep_separators_decimals_and_words() -> None:
    names = {"1,200,800": ["1,200,800"], "63.93 %": ["63.93", "%"], "Ten": ["Ten"], "US$ 90 million":
             ["US$", "90", "million"], "1200800": ["1200800"]}
    out = rename_num(names, 3, "Doc", 2, 0)
    assert out is not None
    assert re.fullmatch(r"[1-9]\d?,\d{3},\d{3}", out["1,200,800"][0]) and out["1,200,800"][0] != "1,200,800"
    assert out["1200800"] == [out["1,200,800"][0].replace(",", "")]  # same value, same new value
    assert re.fullmatch(r"\d{2}\.\d{2}", out["63.93 %"][0]) and out["63.93 %"][1] == "%"
    assert out["Ten"][0] in {"Eleven", "Twelve", "Thirteen", "Fourteen", "Fifteen", "Sixteen", "Seventeen",
                             "Eighteen", "Nineteen"}
    assert out["US$ 90 million"][0] == "US$" and out["US$ 90 million"][2] == "million"


@given(st.integers(min_value=0, max_value=10**7), st.integers(min_value=0, max_value=50))
def test_numbers_keep_their_digit_count(value: int, seed: int) -> None:
    out = rename_num({str(value): [str(value)]}, seed, "T", 0, 0)
    assert out is not None
    new = out[str(value)][0]
    assert len(new) == len(str(value)) and new != str(value) and (len(new) == 1 or new[0] != "0")


def test_renaming_is_deterministic_and_seed_dependent() -> None:
    a = rename_time({"13 March 1963": ["13", "March", "1963"]}, 1, "T", 0, 0)
    assert a == rename_time({"13 March 1963": ["13", "March", "1963"]}, 1, "T", 0, 0)
    others = {str(rename_time({"13 March 1963": ["13", "March", "1963"]}, s, "T", 0, 0)) for s in range(1, 6)}
    assert len(others) > 1


def test_date_values_and_order() -> None:
    assert date_value(["13", "March", "1963"]) == DateValue(1963, 3, 13)
    assert date_value(["the", "1990s"]) == DateValue(1990)
    assert date_value(["six", "months"]) is None
    born, died = DateValue(1963, 3, 13), DateValue(1963, 7, 1)
    assert order_kept(born, died, DateValue(1970, 1, 1), DateValue(1970, 2, 1))
    assert not order_kept(born, died, DateValue(1970, 5, 1), DateValue(1970, 2, 1))
    assert order_kept(born, DateValue(1963), DateValue(1970, 5, 1), DateValue(1970))  # same year: not reversed
    assert order_kept(died, born, DateValue(1999), DateValue(1900))  # order did not hold before


def test_days_keep_their_padding() -> None:
    for k in range(10):
        out = rename_time({"28 July 1938": ["28", "July", "1938"], "05 July": ["05", "July"]}, k, "T", 0, 0)
        assert out is not None
        assert not out["28 July 1938"][0].startswith("0")
        assert len(out["05 July"][0]) == 2


def test_ordinal_words() -> None:
    out = _time("the eighteenth century", "the second half of 1990")
    assert out["the eighteenth century"][1] in {"seventeenth", "nineteenth"}
    assert out["the second half of 1990"][:2] == ["the", "second"]  # not an ordinal number here
    num = rename_num({"Third": ["Third"]}, 1, "T", 0, 0)
    assert num is not None and num["Third"][0] in {"First", "Second", "Fourth", "Fifth", "Sixth", "Seventh",
                                                   "Eighth", "Ninth"}


def test_ordinal_digits_get_a_matching_suffix() -> None:
    for k in range(20):
        out = rename_time({"1st quarter of 2009": ["1st", "quarter", "of", "2009"]}, k, "T", 0, 0)
        assert out is not None
        m = re.fullmatch(r"(\d)(st|nd|rd|th)", out["1st quarter of 2009"][0])
        assert m and m.group(2) == {"1": "st", "2": "nd", "3": "rd"}.get(m.group(1), "th")
