"""Numbers and dates a reader can check against each other: the document's number plan.

Renaming moves every date of a document by one map of its years (``numtime.document_shift``: one shift,
whose gaps between written years stretch where this plan lets them, ``year_map``) and draws other numbers
anew. A figure that follows from other figures of the text must still follow from them after
renaming, or the renamed document contradicts itself where the original did not: "( 3 June 1870 – 19
December 1938 ) ... He died in December 1938 , aged 68" read "aged 23" once ages were drawn on their
own, "released nationwide one week later on October 18" read "seven weeks later on December 8", and
"two versions , the Interplanetary spaceship ... and the ITS tanker" read "five versions". So each NUM
and TIME entity gets a *role* (``core.reasons.ValueRule``), the first of these that fits one of its
mentions:

* ``fixed_form``: a number inside a form a reader knows, which keeps it (:func:`fixed_form`): a record's
  size ('7 " single', '12 " vinyl', "12-inch"), a speed in rpm ("45 rpm", "78 rpm format"), a step of a
  scale ("category 4 equivalent - typhoon"), "two - stroke", "four - star", a fraction ("one - half",
  "two - thirds"),
  a number after a name it belongs to ("Boeing 747", "Apollo 11", "Top 40", "BWV 1007", "NH 214": the
  words of :data:`NAME_PREFIXES`, and for a NUM entity the last word of another entity's mention right
  before it). Kept (``KeptReason.FIXED_FORM``).
* ``age``: "aged 91", "at the age of 36", "age 55", "a 30 - year - old", "ten years old", "twelve years
  of age" (:func:`is_age`). Its value follows from the birth of the person it belongs to (the last person
  named before it in its sentence, else the document's first person) and the date of the event in its
  sentence (a TIME entity there, else the person's death where the sentence tells of one): the renamed
  age is the old one plus the change of the whole years between the two dates (:func:`change`). Beside
  those two, any two dates of the document the age agrees with (:func:`agreeing_pairs`; a year less where
  the dates leave the birthday open: born 1950, "aged 29" in 1980) are dates a reader can check it
  against, and the age follows them all (``NumberPlan.pairs``). The gaps between the years of the one
  pair an age agrees with may stretch (``year_map``), so the age takes a new value ("( 1908 - 1980 ) ...
  died at age 72" may read "( 1875 - 1944 ) ... at age 69"); a cyclic month or day shift that moves a
  birthday past the event's date changes it too ("June 1870 ... December 1938, aged 68" under a month
  shift of 3 is "September 1870 ... March 1938, aged 67"). An age that agrees with no two dates (another
  person's birth, an age at an event not written) keeps its value, the relation it had.
  ``KeptReason.CHECKED`` when it comes out unchanged.
* ``interval``: a duration: a count followed by a time unit, inside the name or right after it ("one
  week", "19 years younger", "two months later", "a year and a half", "a four - year term"; :func:`is_interval`).
  Followed by "later" or "after", with a date before it (in its sentence or the one before) and a date
  after it in its sentence ("premiere ... on October 11 , 2008 ... one week later on October 18"), it
  is derived from those two as an age is (:func:`change`); so is one in months or longer that agrees with
  any two dates of the document ("for 17 years , from 1950 to 1967"; :func:`agreeing_pairs`). Otherwise it
  keeps its value, and the years it may be read against keep their distances (``NumberPlan.rigid``: a pair
  about as far apart as it says; a pair as far apart as two figures add up to: "Lady Peel , who was 19
  years younger than her husband , died in January 1981 , aged 91" beside his birth in 1870).
* ``listed_count``: a count whose counted noun is followed by the list it counts (:func:`is_listed`: after
  the noun phrase a comma, colon, dash or parenthesis, or a name, and then a list: "two versions , the X
  and the Y", "four times ( 1959 , 1960 , 1962 , 1963 )", "his two younger brothers Aurangzeb and Murad"). Kept.
* ``tied_count``: NUM counts of the same noun in one document ("contained five ministers ... reduced to
  four ministers"): one offset moves them all, so their difference and their order stay (:func:`tied_counts`).
* ``share``: a NUM percentage with another in its sentence ("approved ... with a 63.93 % to 28.10 % margin",
  "50 % ... and 30 %"): shares of one whole a reader adds up, which two values drawn on their own took past
  100 ("67.94 % to 48.00 %"); and a part written with its whole, "N of (the) M" ("in 45 of the 48
  contiguous United States ( the exceptions being three states", which read "65 of the 72"). Kept
  (:func:`shares`).
* ``equivalent``: a NUM value written with its equivalent in brackets, both ("23.0 cm ( 9.1 in )", "18 to 22
  ° C ( 64 to 72 ° F )", "77 ( 11.5 % of students )"), which read "29.9 cm ( 7.6 in )" when drawn on their
  own. Kept (:func:`equivalents`).
* ``date``: every other TIME entity (dates, decades, centuries, periods, clock times): the document's shift.
* ``drawn``: every other NUM entity: a new value in its written form (``numtime.rename_num``).

A plan reads the source document only; the engine (``engine.settle_times``, ``engine.settle_other``)
applies it to each seed.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from envbench.core.reasons import ValueRule
from envbench.core.seeding import derive_seed
from envbench.core.text import same_case
from envbench.rename.numtime import (
    COUNTED,
    MONTHS,
    RANGE_WORDS,
    TEENS,
    TENS,
    UNITS,
    WORD_VALUES,
    DateValue,
    agree_counts,
    counts_a_noun,
    date_order,
    date_value,
    leading_number,
    month_of,
    time_years,
    weekday_of,
)

# ---------------------------------------------------------------------------- fixed forms
# a record's size in inches ('7 " single'): the marks and the words that say a record follows
_INCH_MARKS = frozenset({'"', "''", "”", "inch", "inches", "in.", "-inch"})
_RECORD_WORDS = frozenset({"single", "singles", "vinyl", "record", "records", "ep", "lp", "release", "releases",
                           "version", "versions", "picture", "disc", "discs", "pressing", "pressings", "format",
                           "edition", "box", "acetate", "flexi", "b-side"})
# words after "N -" that make a fixed form: engines are two- or four-stroke, ranks and hotels one- to five-star,
# and a fraction is a whole ("one - half of the Senate" had read "nine - half")
_FIXED_AFTER_DASH = frozenset({"stroke", "star", "half", "halves", "third", "thirds", "quarter", "quarters",
                               "fifth", "fifths"})
# names that a number right after belongs to ("Boeing 747", "Apollo 11", "Top 40", "BWV 1007", "NH 214",
# "Category 9", "Windows 95", "Formula One"): models, missions, charts, catalogues, roads and grades
NAME_PREFIXES = frozenset({
    "Airbus", "Apollo", "Boeing", "BWV", "Category", "Channel", "Class", "Formula", "Gemini", "Grade", "Highway",
    "Interstate", "K.", "Level", "Mark", "Mk", "Mk.", "Model", "NH", "No.", "Op.", "Opus", "Pioneer", "Psalm",
    "Route", "Series", "Soyuz", "SR", "Studio", "Terminal", "Top", "Type", "Voyager", "Windows",
})
# scales whose steps a reader knows (a hurricane's category 1 to 5): "category 4 equivalent - typhoon"
_SCALES = frozenset({"category"})
# what may follow a number that is no part of a name ("Great Britain 11 to 1", a score; "Cup seven times")
_NOT_NAMED_AFTER = frozenset({"to", "-", "–", "—", "times", "%", "percent", "per", "of", "and", "or", ":", "/"})


def fixed_form(sent: Sequence[str], a: int, b: int, coarse: str, name_end_before: bool) -> bool:
    """Whether the mention ``sent[a:b]`` is a number inside a fixed form (the module docstring).
    ``name_end_before``: the token before it ends another entity's mention."""
    toks = sent[a:b]
    after = [t.casefold() for t in sent[b:b + 4]]
    last = toks[-1].casefold() if toks else ""
    # '7 " single', '12 " vinyl'; the mark or unit may be the name's last token ('7 "', "12-inch", "78 rpm")
    mark = bool(after) and after[0] in _INCH_MARKS
    inch = mark or last in _INCH_MARKS or last.endswith("inch")
    if inch and any(w in _RECORD_WORDS for w in after[1 if mark else 0:]):
        return True
    if after[:1] == ["rpm"] or last == "rpm":
        return True
    words = [t.casefold() for t in sent[a:b + 2]]
    if any(words[i] in ("-", "–") and words[i + 1] in _FIXED_AFTER_DASH for i in range(len(words) - 1)):
        return True
    if a > 0 and (sent[a - 1] in NAME_PREFIXES or sent[a - 1].casefold() in _SCALES):
        return True
    if len(toks) > 1 and (toks[0] in NAME_PREFIXES or toks[0].casefold() in _SCALES):
        return True  # the name holds its prefix: "Apollo 11", "category 4"
    # a NUM entity of one integer right after another entity's name: "Boeing 747", unless what follows
    # makes it a score, a count or a range
    return (coarse == "NUM" and name_end_before and len(toks) == 1 and toks[0].isdigit()
            and sent[a - 1][:1].isupper()
            and not (after[:1] and (after[0] in _NOT_NAMED_AFTER or counts_a_noun(sent[b]))))


# ---------------------------------------------------------------------------- ages and intervals
# time units a duration counts, with their length in days where whole days measure them (a month and a
# year are counted by the calendar instead)
TIME_UNITS: dict[str, str] = {
    "year": "year", "years": "year", "month": "month", "months": "month", "week": "week", "weeks": "week",
    "fortnight": "fortnight", "fortnights": "fortnight", "day": "day", "days": "day", "decade": "decade",
    "decades": "decade", "century": "century", "centuries": "century", "millennium": "millennium",
    "millennia": "millennium", "hour": "hour", "hours": "hour", "minute": "minute", "minutes": "minute",
    "seconds": "second", "night": "night", "nights": "night",
}
_UNIT_DAYS = {"week": 7, "fortnight": 14, "day": 1, "night": 1}
_UNIT_MONTHS = {"month": 1, "year": 12, "decade": 120, "century": 1200, "millennium": 12000}
# words that may stand between a count and its unit ("two more years", "four full months", "a 30 - year")
_BETWEEN = frozenset({"-", "–", "more", "additional", "consecutive", "straight", "full", "successive", "further",
                      "extra", "whole", "long", "short", "calendar", "and", "a", "half"})
# words that count in a duration besides numbers ("a year and a half", "several years" has no rule anyway)
_COUNT_WORDS = frozenset({"a", "an", "half", "dozen", "hundred", "thousand", "million"})
_NUMBER = re.compile(r"^\d{1,3}(?:,\d{3})*(?:\.\d+)?$|^\d+(?:\.\d+)?$")
_YEAR = re.compile(r"[12]\d{3}")


def _is_count(token: str) -> bool:
    low = token.casefold()
    return bool(_NUMBER.match(token)) or low in WORD_VALUES or low in _COUNT_WORDS


def _hyphen_words(tokens: Sequence[str]) -> list[str]:
    """Folded words, with one-token compounds split at hyphens ("57-year" -> "57", "-", "year")."""
    out: list[str] = []
    for t in tokens:
        parts = re.split(r"(-)", t.casefold()) if re.search(r"\w-\w", t) else [t.casefold()]
        out.extend(p for p in parts if p)
    return out


def duration_unit(tokens: Sequence[str], at_start: bool = False) -> str | None:
    """The time unit a run of tokens counts ("one week", "19 years", "a four - year", "57-year", "two
    more decades", "two and a half years"): the unit after a count, else None. ``at_start``: only a count
    that opens the run counts (the tokens after a mention: "19" "years younger", not "1826" "and two years")."""
    words = _hyphen_words(tokens)
    for i, w in enumerate(words[:1] if at_start else words):
        if not _is_count(w):
            continue
        j = i + 1
        while j < len(words) and (words[j] in _BETWEEN or _is_count(words[j])) and not (at_start and words[j] == "and"):
            j += 1
        if j < len(words) and words[j] in TIME_UNITS:
            return TIME_UNITS[words[j]]
    return None


# what after a number makes it an age (hyphens split: "30 - year-old" reads "30", "-", "year", "-", "old")
_AGE_AFTER = (("years", "old"), ("year", "old"), ("-", "year", "-", "old"), ("year", "-", "old"),
              ("years", "-", "old"), ("years", "of", "age"))
_AGE_BEFORE = frozenset({"aged", "age", "Aged"})  # "aged 91", "at age 15" (not "the Iron Age 500 BC")


def is_age(sent: Sequence[str], a: int, b: int) -> bool:
    """Whether the mention ``sent[a:b]`` is an age: "aged 91", "at the age of 36", "age 55", "a 30 -
    year - old", "ten years old", "twelve years of age", "81 year old"."""
    if a > 0 and sent[a - 1] in _AGE_BEFORE or [t.casefold() for t in sent[max(0, a - 2):a]] == ["age", "of"]:
        return True
    name = _hyphen_words(sent[a:b])
    if name[:1] == ["age"] or "old" in name or any(name[i:i + 3] == ["years", "of", "age"] for i in range(len(name))):
        return True
    after = tuple(_hyphen_words(sent[b:b + 4]))
    if any(after[:len(p)] == p for p in _AGE_AFTER):
        return True
    # "ten years" then "old" or "of age"
    return duration_unit(sent[a:b]) is not None and (after[:1] == ("old",) or after[:2] == ("of", "age"))


def is_interval(sent: Sequence[str], a: int, b: int) -> str | None:
    """The unit of the duration the mention ``sent[a:b]`` is, in its name ("two months", "a year and a
    half", "57-year") or right after it ("19" "years younger", "two" "more decades"), else None; a name
    with a month or a second year is a date, not a duration ("17 December 1903", "1990 - 91 season")."""
    toks = sent[a:b]
    if any(month_of(t) is not None for t in toks):
        return None
    unit = duration_unit(toks)
    if unit is None and toks and _is_count(toks[-1]) and not _YEAR.fullmatch(toks[-1]):
        unit = duration_unit([toks[-1], *sent[b:b + 4]], at_start=True)  # "1826" "and two years later" is a date
    return unit


# ---------------------------------------------------------------------------- counts
_SINGULAR = {pl: sg for sg, pl in COUNTED.items()}
_PARTITIVE = frozenset({"these", "those", "its", "his", "her", "their", "the"})  # "three of these railways , the A , ..."
_BOTH = frozenset({"both", "either", "neither"})  # words that say the count before them is two
_DASHES = frozenset({"–", "—", "-"})
_LIST_OPENERS = frozenset({",", ":", "(", ";"}) | _DASHES
_POINTERS = frozenset({"those", "these", "namely"})  # "- those to Ararat , ..."
_NOT_A_LIST = frozenset({"and", "but", "is", "was", "are", "were", "has", "had", "which", "who", "while", "where", "when", "after", "before", "although",
                         "as", "so", "including", "such", "among", "with", "in", "on", "at", "for", "from", "by",
                         "to", "of", "that", "then", "each", "both", "all", "most", "some", "he", "she", "it",
                         "they", "we", "i", "his", "her", "its", "their"})


# words of a short phrase of place or origin between a counted noun and a colon that opens its list
_PLACE_WORDS = frozenset({"in", "of", "from"})
# the verbs of a relative clause that opens a whole list after a colon: "five kingdoms , which included : A ( ... ) ,
# B ( ... ) , ..."
_WHICH_LISTS = frozenset({"include", "includes", "included", "comprise", "comprises", "comprised", "are", "were"})


def is_listed(sent: Sequence[str], a: int, b: int) -> bool:
    """Whether the count ``sent[a:b]`` is followed, after the noun it counts, by the list it counts, of
    about as many items: "two versions , the Interplanetary spaceship ... and the ITS tanker", "four times (
    1959 , 1960 , 1962 , 1963 )", "four seasons ( 1914–1918 )", "his two younger brothers Aurangzeb and
    Murad", "Three of these railways , the Darjeeling Himalayan Railway , the Nilgiri Mountain Railway , and the
    Kalka – Shimla Railway", "Four of the South African Bantustans — Transkei , Bophuthatswana , Venda , and
    Ciskei", a "two" that "both" counts again ("the name of two bodies , both appointed by"), and a count of
    the names before it ("Lough Owel and Lough Ennell are two of many lakes"). Not a partial list ("five ministers
    including Stanhope"), nor a clause ("six sestieri , ordered the ...")."""
    value = leading_number(sent[a:b])
    if value is not None and _names_before(sent, a) == value:
        return True  # "Lough Owel and Lough Ennell are two of many lakes" had read "are eight of many lakes"
    if b + 2 < len(sent) and sent[b].casefold() == "of" and sent[b + 1].casefold() in _PARTITIVE:
        b += 2  # "Three of these railways , the Darjeeling Himalayan Railway , ... and the Kalka – Shimla Railway"
        while b + 1 < len(sent) and sent[b].istitle() and sent[b + 1].istitle():
            b += 1  # "Four of the South African Bantustans — Transkei , ...": the name's words before its noun
        if b < len(sent) and sent[b].istitle() and sent[b].endswith("s"):
            return value is not None and 2 <= value <= 30 and _listed_after(sent, b, value)
    if value is None or not 2 <= value <= 30 or b >= len(sent) or not counts_a_noun(sent[b]):
        return False
    return _listed_after(sent, b, value)


def _names_before(sent: Sequence[str], a: int) -> int | None:
    """How many names the subject before "are"/"were" and the count at ``a`` lists ("Lough Owel and Lough
    Ennell are two of many lakes": 2), when that subject is only a list of names; else None."""
    if a < 2 or sent[a - 1].casefold() not in ("are", "were"):
        return None
    lead = list(sent[:a - 1])
    for stop in (";", ":"):
        if stop in lead:
            lead = lead[len(lead) - lead[::-1].index(stop):]
    if not lead or not any(t.casefold() == "and" for t in lead) or not all(
            t[:1].isupper() or t in (",", "and", "&", "-", "–") or t.casefold() == "the" for t in lead):
        return None
    return _list_items(lead, need_and=True)


def _listed_after(sent: Sequence[str], b: int, value: float) -> bool:
    """:func:`is_listed` from the counted noun at ``b`` on."""
    if value == 2 and any(t.casefold() in _BOTH for t in sent[b + 1:]):
        # "the name of two bodies , both appointed by", "The first two singles ... , " A " and " B " were released
        # ... and both managed": a later "both" of the sentence counts them again
        return True
    j = b + 1
    while j < len(sent) and j - b <= 4 and (sent[j].islower() and sent[j].isalpha() and sent[j] not in _NOT_A_LIST
                                            or sent[j] == "-"):
        j += 1  # the rest of the noun phrase: "younger half - brothers"
    if j < len(sent) and sent[j] in _PLACE_WORDS:  # "three states in the northwest : Idaho , Montana , and Washington"
        k = j + 1
        while k < len(sent) and k - j <= 3 and sent[k].islower() and sent[k].isalpha():
            k += 1
        if k < len(sent) and sent[k] == ":":
            j = k
    if j + 2 < len(sent) and sent[j] == "in" and _YEAR.fullmatch(sent[j + 1]) and sent[j + 2] in _LIST_OPENERS:
        j += 2  # "associated with 2 movies in 2017 ; Ram Leela with Dileep , and the Biju Menon starring ..."
    if j >= len(sent):
        return False
    opener = sent[j]
    if opener == ":" and j + 1 == len(sent):
        return True  # "The new Society approved three enduring projects :", the list in the sentences after
    if opener == "(":
        rest = sent[j + 1:]
        rest = rest[:rest.index(")")] if ")" in rest else rest
        if _year_span(rest):
            return True  # "played four seasons ( 1914–1918 )": the years count them
        items = _list_items(rest)
    elif opener in _LIST_OPENERS:
        rest = sent[j + 1:]
        if len(rest) > 3 and rest[0].casefold() == "which" and rest[1].casefold() in _WHICH_LISTS and rest[2] == ":":
            items = _list_items(rest[3:])  # ", which included : Angas ( ... ) , Vangas ( ... ) , ..."
        elif not rest or rest[0].casefold() in _NOT_A_LIST:
            return False  # ", and moved to ..." is a clause, not a list
        else:
            items = _list_items(rest, need_and=True)
    elif opener[:1].isupper():  # a name right after the noun: "brothers Aurangzeb and Murad"
        items = _list_items(sent[j:], need_and=True)
    elif (k := next((k for k in range(j, min(len(sent), j + 8)) if sent[k] in _DASHES or sent[k] == "("),
                    None)) is not None:
        # a clause about the noun, then a dash and the list: "Four lines previously closed to passenger services -
        # those to Ararat , Bairnsdale , Leongatha and Mildura" (it had read "Five lines"), or the list in
        # parentheses: "nominated three times for Academy Awards ( Ace in the Hole , Cat Ballou , and
        # Bloodbrothers )" (it had read "five times")
        rest = sent[k + 1:]
        if sent[k] == "(":
            rest = rest[:rest.index(")")] if ")" in rest else rest
        rest = rest[1:] if rest[:1] and rest[0].casefold() in _POINTERS else rest
        rest = rest[1:] if rest[:1] and rest[0].casefold() in _NOT_A_LIST and rest[0].islower() else rest
        items = _list_items(rest, need_and=True) if rest and rest[0][:1].isupper() else None
    else:
        return False
    return items is not None and abs(items - value) <= 1


_YEAR_SPAN = re.compile(r"^[12]\d{3}[–-]\d{2,4}$")


def _year_span(tokens: Sequence[str]) -> bool:
    """Whether tokens hold a span of years: "1914–1918" (one token) or "1914 – 1918"."""
    return any(_YEAR_SPAN.match(t) for t in tokens) or any(
        _YEAR.fullmatch(tokens[i]) and tokens[i + 1] in ("–", "-", "—") and _YEAR.fullmatch(tokens[i + 2])
        for i in range(len(tokens) - 2))


def _list_items(tokens: Sequence[str], need_and: bool = False) -> int | None:
    """How many items a list opening ``tokens`` has: the commas before its "and" (or "or"), and the item
    after it ("A , B and C" and "A , B , and C": 3); without an "and", the commas and one (a list in
    parentheses: "( 1959 , 1960 , 1962 )"); None when it needs one and has none. What an item says in
    parentheses is part of it: "Angas ( east , central Bihar ) , Vangas ( West Bengal and Bangladesh )" is two."""
    depth, flat = 0, []
    for tok in tokens:
        depth += (tok == "(") - (tok == ")" and depth > 0)
        if depth == 0 and tok != ")":
            flat.append(tok)
    tokens = flat
    k = next((i for i, t in enumerate(tokens) if t.casefold() in ("and", "or", "&")), None)
    if k is None:
        return None if need_and else tokens.count(",") + 1
    commas = list(tokens[:k]).count(",")
    segments: list[list[str]] = [[]]
    for tok in tokens[:k]:
        if tok == ",":
            segments.append([])
        else:
            segments[-1].append(tok)
    segments = [s for s in segments if s]
    # a list of names whose items carry a lower-case apposition ("Praszka , north of Olesno , Dobrodzień ,
    # south of Olesno , and Gorzów Śląski"): the items are the segments that open with a name
    if segments and _opens_item(segments[0]) and not all(_opens_item(s) for s in segments):
        return sum(_opens_item(s) for s in segments) + 1
    return commas + 2 - (1 if k > 0 and tokens[k - 1] == "," else 0)


def _opens_item(segment: Sequence[str]) -> bool:
    """Whether a segment of a list opens with a name or a number ("Praszka", "the ITS tanker", "1959"), not
    with a lower-case word that continues the item before it ("north of Olesno")."""
    first = segment[1] if len(segment) > 1 and segment[0].casefold() in ("the", "a", "an") else segment[0]
    return first[:1].isupper() or first[:1].isdigit()


def counted_noun(sent: Sequence[str], b: int) -> str | None:
    """The noun a count right before ``sent[b]`` counts, singular and folded ("ministers" -> "minister"),
    past the words between a count and its noun ("two more seasons" -> "season"); None when none follows."""
    if b >= len(sent) or not counts_a_noun(sent[b]):
        return None
    j = b
    while j + 1 < len(sent) and sent[j].casefold() in _BETWEEN and counts_a_noun(sent[j + 1]):
        j += 1
    word = sent[j].casefold()
    singular = _SINGULAR.get(word)
    if singular is not None:
        return singular
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


_WEEKDAY_NAMES = {w.casefold(): i for i, w in enumerate(("Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
                                                          "Saturday", "Sunday"))}
_SCALE_WORDS = frozenset({"hundred", "thousand", "million", "billion", "trillion"})


def count_shape(names: Mapping[str, Sequence[str]]) -> str | None:
    """How a count that may be tied is written: "word" ("five"), "digits" ("671", "1,054") or digits and
    a scale word ("digits million": "30 million"); None for anything else (a decimal, two numbers, "one",
    a unit inside the name), which moves on its own. Counts are tied only to counts written alike, so an
    offset means the same to each ("7,600,000 copies" and "30 million copies" are not)."""
    shapes = set()
    for toks in names.values():
        numbers = [t for t in toks if _NUMBER.match(t) or t.casefold() in WORD_VALUES]
        rest = [t.casefold() for t in toks if t not in numbers]
        if len(numbers) != 1 or "." in numbers[0] or len(rest) > 1 or (rest and rest[0] not in _SCALE_WORDS):
            return None
        value = leading_number(numbers)
        if value is None or value < 2:
            return None  # "one title": its noun is singular, and no offset may move it
        shapes.add(("word" if numbers[0].casefold() in WORD_VALUES else "digits") + (f" {rest[0]}" if rest else ""))
    return shapes.pop() if len(shapes) == 1 else None


# ---------------------------------------------------------------------------- the plan
@dataclass(frozen=True)
class Anchors:
    """The two dates a derived figure follows: ``start`` (a birth, the earlier date of an interval) and
    ``end`` (the event, the later date), as TIME entity indices; ``unit``: the interval's unit ("year"
    for an age); ``least``: the least value it may take (an age may be nought, an interval no less than one)."""

    start: int
    end: int
    unit: str
    least: int = 1
    age: bool = False  # an age, which dates without a birthday's month or day allow one year less (born 1950, 30 in 1980)


@dataclass(frozen=True)
class NumberPlan:
    """What one document's NUM and TIME entities are (the module docstring)."""

    rules: Mapping[int, ValueRule] = field(default_factory=dict)  # every NUM and TIME entity
    anchors: Mapping[int, Anchors] = field(default_factory=dict)  # the ages and intervals that derive
    ties: Mapping[int, tuple[int, ...]] = field(default_factory=dict)  # a tied count -> its group, in order
    # a full date with its weekday written right before it ("on Friday 1 August 2014"), where the two agree
    # in the source: TIME entity -> that weekday (0 Monday), which the renamed date should fall on too
    weekdays: Mapping[int, int] = field(default_factory=dict)
    # an age or interval -> every pair of the document's dates it agrees with in the source (its anchors when
    # they agree, and in months or longer any two written dates as far apart: :func:`agreeing_pairs`); its
    # renamed value follows them (:func:`change`)
    pairs: Mapping[int, tuple[Anchors, ...]] = field(default_factory=dict)
    # year ranges (first, last) between the two years one figure follows, alone: the gaps between the
    # document's years inside may stretch, so the figure takes a new value (``year_map``)
    stretch: tuple[tuple[int, int], ...] = ()
    # year ranges that keep their length: where a figure agrees with several pairs of years, nearly agrees with
    # one ("for 17 years" beside 1950 and 1968), or two figures add up to or differ by a pair's distance ("19
    # years younger than her husband ... aged 91" beside his birth in 1870 and her death in 1981); where
    # a count is read off years ("four seasons ( 1914–1918 )")
    rigid: tuple[tuple[int, int], ...] = ()
    # (birth, death) years of the document's persons: a life stays within ``plausible_dates.HUMAN_SPAN``
    lives: tuple[tuple[int, int], ...] = ()

    def rule(self, ei: int) -> ValueRule | None:
        return self.rules.get(ei)

    def settled_with_times(self, ei: int) -> bool:
        """Whether a TIME entity follows the renamed dates rather than moving with them (an age, an
        interval, a fixed form): settled after the document's shift, by :func:`derive`."""
        return self.rules.get(ei) in (ValueRule.AGE, ValueRule.INTERVAL, ValueRule.FIXED_FORM)


_DEATH_WORDS = frozenset({"died", "dies", "death", "killed", "executed", "murdered", "drowned"})
_BIRTH_WORDS = frozenset({"born", "b."})
_BIRTH, _DEATH = "P569", "P570"


def plan_numbers(doc: Mapping, coarse: Sequence[str], tokens: Sequence[Mapping[str, list[str]]]) -> NumberPlan:
    """The roles of a document's NUM and TIME entities and the dates each derived one follows."""
    vs = doc["vertexSet"]
    sents = doc["sents"]
    # the last token of every mention, by (sentence, position after it): a number right after a name
    name_ends = {(m["sent_id"], m["pos"][1]) for ei, ent in enumerate(vs) if coarse[ei] not in ("NUM", "TIME")
                 for m in ent}
    rules: dict[int, ValueRule] = {}
    anchors: dict[int, Anchors] = {}
    units: dict[int, str] = {}  # each age ("year") and interval -> the unit it counts
    listed_years: list[tuple[int, int]] = []  # the years a listed count is read off ("four seasons ( 1914–1918 )")
    nouns: dict[tuple[str, str], list[int]] = {}  # (counted noun, how the count is written) -> counts
    dates = _dated(doc, coarse, tokens)
    for ei, ent in enumerate(vs):
        if coarse[ei] not in ("NUM", "TIME"):
            continue
        rule = ValueRule.DATE if coarse[ei] == "TIME" else ValueRule.DRAWN
        for role in (ValueRule.FIXED_FORM, ValueRule.AGE, ValueRule.INTERVAL, ValueRule.LISTED_COUNT):
            hit = next((m for m in ent if _has_role(role, sents[m["sent_id"]], m["pos"][0], m["pos"][1],
                                                    coarse[ei], (m["sent_id"], m["pos"][0]) in name_ends)), None)
            if hit is not None:
                rule = role
                if role is ValueRule.AGE:
                    found = _age_anchors(doc, coarse, dates, hit)
                    units[ei] = "year"
                elif role is ValueRule.INTERVAL:
                    found = _interval_anchors(doc, dates, hit)
                    units[ei] = is_interval(sents[hit["sent_id"]], *hit["pos"]) or ""
                else:
                    found = None
                    if role is ValueRule.LISTED_COUNT:
                        listed_years.extend(_listed_years(sents[hit["sent_id"]], hit["pos"][1]))
                if found is not None:
                    anchors[ei] = found
                break
        if rule is ValueRule.DRAWN:
            noun = next((n for m in ent if (n := counted_noun(sents[m["sent_id"]], m["pos"][1])) is not None), None)
            shape = count_shape(tokens[ei])
            if noun is not None and shape is not None:
                nouns.setdefault((noun, shape), []).append(ei)
        rules[ei] = rule
    ties: dict[int, tuple[int, ...]] = {}
    for group in nouns.values():
        if len(group) > 1:
            for ei in group:
                rules[ei] = ValueRule.TIED_COUNT
                ties[ei] = tuple(group)
    for ei in shares(doc, coarse, rules):
        rules[ei] = ValueRule.SHARE
    for ei in equivalents(doc, coarse, rules):
        rules[ei] = ValueRule.EQUIVALENT
    for ei in list(ties):  # a tied group left with one count ties nothing
        group = tuple(e for e in ties[ei] if rules[e] is ValueRule.TIED_COUNT)
        if rules[ei] is not ValueRule.TIED_COUNT:
            del ties[ei]
        elif len(group) > 1:
            ties[ei] = group
        else:
            rules[ei] = ValueRule.DRAWN
            del ties[ei]

    def source(e: int, renamed: bool) -> Mapping[str, Sequence[str]]:
        return tokens[e]
    points = _date_points(dates, tokens)
    pairs: dict[int, tuple[Anchors, ...]] = {}
    for ei, unit in sorted(units.items()):
        value = count_value(tokens[ei])
        if value is None or not unit:
            continue
        age = rules[ei] is ValueRule.AGE
        # a count of two or more stays so, and one stays one or more: "held every two years" never reads
        # "every one year", nor "died at the age of two" "at the age of zero"
        least = min(2, int(value))
        found = []
        if (anchor := anchors.get(ei)) is not None:
            anchor = Anchors(anchor.start, anchor.end, anchor.unit, least, age)
            if (both := anchor_dates(anchor, source, False)) is not None and agrees(*both, unit, value, age):
                found.append(anchor)
        if unit in _UNIT_MONTHS:
            found.extend(p for p in agreeing_pairs(points, unit, value, age, least) if (p.start, p.end) not in
                         {(f.start, f.end) for f in found})
        if found:
            pairs[ei] = tuple(found)
    stretch, rigid = _year_ties(points, units, pairs, tokens, coarse)
    lives = tuple(sorted({(b.year, d.year) for person in _person_dates(doc, coarse, dates).values()
                          if _BIRTH in person and _DEATH in person
                          and (b := _date(tokens[person[_BIRTH]])) is not None
                          and (d := _date(tokens[person[_DEATH]])) is not None and b.year <= d.year}))
    return NumberPlan(rules, anchors, ties, _weekdays(doc, coarse, tokens), pairs, stretch,
                      tuple(sorted(set(rigid) | set(listed_years))), lives)


# years in a unit a figure counts
UNIT_YEARS = {"year": 1, "decade": 10, "century": 100, "millennium": 1000}


def agrees(a: DateValue, b: DateValue, unit: str, value: float, age: bool = False) -> bool:
    """Whether ``value`` is the whole ``unit``s from date ``a`` to date ``b`` (:func:`span`); an age may be a
    year less where the dates leave the birthday open (born 1950, "aged 29" in 1980)."""
    whole = span(a, b, unit)
    if whole is None:
        return False
    if whole == value:
        return True
    open_birthday = a.month is None or b.month is None or (a.month == b.month and (a.day is None or b.day is None))
    return age and open_birthday and whole - 1 == value


def _date_points(dates: _Dated, tokens: Sequence[Mapping[str, list[str]]]) -> list[tuple[DateValue, int]]:
    """The document's distinct dates (``_dated``) that give a year, each with the first TIME entity that writes
    it, in date order."""
    first: dict[DateValue, int] = {}
    for _, _, ei in dates:
        value = _date(tokens[ei])
        if value is not None:
            first.setdefault(value, ei)
    return sorted(((v, ei) for v, ei in first.items()), key=lambda p: (p[0].parts(), p[1]))


def agreeing_pairs(points: Sequence[tuple[DateValue, int]], unit: str, value: float, age: bool = False,
                   least: int = 1) -> list[Anchors]:
    """Every pair of dates (``_date_points``), the earlier first, that ``value`` ``unit``s agree with
    (:func:`agrees`): the pairs a reader can check the figure against, wherever the document writes them;
    ``least``: the least value the figure may take (``Anchors``)."""
    out = []
    for i, (a, ea) in enumerate(points):
        for b, eb in points[i + 1:]:
            if ea != eb and date_order(a, b) < 0 and agrees(a, b, unit, value, age):
                out.append(Anchors(ea, eb, unit, least, age))
    return out


def _year_ties(points: Sequence[tuple[DateValue, int]], units: Mapping[int, str], pairs: Mapping[int, tuple[Anchors, ...]],
               tokens: Sequence[Mapping[str, list[str]]], coarse: Sequence[str]
               ) -> tuple[tuple[tuple[int, int], ...], list[tuple[int, int]]]:
    """The year ranges that may stretch and those that keep their length (``NumberPlan.stretch``, ``rigid``).

    A figure that agrees with one pair of years alone, and can write another value, may stretch it. Where a
    reader may read a pair of years against figures that do not follow it, the pair keeps its length, or
    changes as the figure's own pair does: a pair nearly as far apart as one figure says (within a year
    less and two more: "for 17 years" beside 1950 and 1968), or as far apart as two figures add up to or
    differ by ("19 years younger than her husband ... aged 91" beside his birth in 1870 and her death in
    1981). Between such a pair and the one pair its figure follows, the years that are not in both keep their
    distances (:func:`_apart`), so both change alike."""
    year_of = {ei: v.year for v, ei in points}
    written = sorted({y for ei, c in enumerate(coarse) if c == "TIME" and ei not in units
                      for y in time_years(tokens[ei])[0]})
    stretch: set[tuple[int, int]] = set()
    rigid: set[tuple[int, int]] = set()
    counted: list[tuple[float, tuple[int, int] | None]] = []  # each figure's value in years, and its one pair

    apart: dict[int, list[tuple[int, int]]] = {}  # distance -> the pairs of written years so far apart
    for j, a in enumerate(written):
        for b in written[j + 1:]:
            apart.setdefault(b - a, []).append((a, b))

    def near(target: float, own: tuple[int, int] | None, *more: tuple[int, int] | None) -> None:
        for distance in range(max(1, math.ceil(target - 1)), math.floor(target + 2) + 1):
            for pair in apart.get(distance, ()):
                if pair != own:
                    rigid.update(_apart(pair, own) if own is not None and not any(more) else [pair])
    for ei, unit in sorted(units.items()):
        value = count_value(tokens[ei])
        if value is None:
            continue
        spans = {(year_of[p.start], year_of[p.end]) for p in pairs.get(ei, ()) if p.start in year_of and p.end in year_of}
        spans = {sp for sp in spans if sp[0] < sp[1]}
        # a count of decades or centuries stays: a stretch of a few years rarely makes it whole
        writable = unit in ("year", "month") and any(with_value(tokens[ei], k) is not None for k in (-2, -1, 1, 2))
        (stretch if len(spans) == 1 and writable else rigid).update(spans)
        own = next(iter(spans)) if len(spans) == 1 and writable else None
        if unit not in UNIT_YEARS:
            continue
        years = value * UNIT_YEARS[unit]
        counted.append((years, own))
        near(years, own)  # a reader may still read the figure against a pair about as far apart
    for i, (x, own_x) in enumerate(counted):
        for y, own_y in counted[i + 1:]:
            for target in (x + y, abs(x - y)):
                near(target, own_x or own_y, own_x and own_y)
    return tuple(sorted(stretch)), sorted(rigid)


def _apart(pair: tuple[int, int], own: tuple[int, int]) -> list[tuple[int, int]]:
    """The year ranges in one of two pairs and not in the other, which keep their lengths so both pairs
    change alike: (1950, 1968) against (1950, 1967) is (1967, 1968)."""
    out = [(min(pair[0], own[0]), max(pair[0], own[0])), (min(pair[1], own[1]), max(pair[1], own[1]))]
    return [r for r in out if r[0] < r[1]]


_YEAR_IN = re.compile(r"(?<!\d)[12]\d{3}(?!\d)")


def _listed_years(sent: Sequence[str], b: int) -> list[tuple[int, int]]:
    """The first and last year a listed count's parenthesis writes ("four seasons ( 1914–1918 )"), if any."""
    if "(" not in sent[b:b + 6]:
        return []
    k = b + list(sent[b:b + 6]).index("(")
    inside = list(sent[k + 1:])
    inside = inside[:inside.index(")")] if ")" in inside else inside
    years = [int(y) for t in inside for y in _YEAR_IN.findall(t)]
    return [(min(years), max(years))] if len(years) > 1 else []


def _weekdays(doc: Mapping, coarse: Sequence[str], tokens: Sequence[Mapping[str, list[str]]]) -> dict[int, int]:
    """The full dates written right after their weekday ("Friday 1 August 2014", "Friday , 1 August"),
    where the weekday is the date's own: the weekday is outside the mention, so the renamed date must fall
    on it (``engine.settle_times`` prefers a shift that keeps it)."""
    out: dict[int, int] = {}
    for ei, ent in enumerate(doc["vertexSet"]):
        if coarse[ei] != "TIME":
            continue
        for m in ent:
            sent, a = doc["sents"][m["sent_id"]], m["pos"][0]
            before = [t for t in sent[max(0, a - 2):a] if t != ","][-1:]
            day = _WEEKDAY_NAMES.get(before[0].casefold()) if before else None
            value = date_value(tokens[ei].get(m["name"], []))
            if day is not None and value is not None and weekday_of(value) == day:
                out[ei] = day
    return out


_PERCENT = frozenset({"%", "percent", "per-cent"})


def is_percentage(sent: Sequence[str], a: int, b: int) -> bool:
    """Whether the number ``sent[a:b]`` is a percentage: "%" inside it or right after it ("63.93 %", "50%",
    "12 percent", "5 per cent")."""
    words = [t.lower() for t in sent[a:b + 2]]
    return (any(w in _PERCENT or w.endswith("%") for w in words[:b - a + 1])
            or (b + 1 < len(sent) and " ".join(sent[b:b + 2]).lower() == "per cent"))


def shares(doc: Mapping, coarse: Sequence[str], rules: Mapping[int, ValueRule]) -> list[int]:
    """The NUM entities still free to change (drawn or tied) that are shares of one whole, in order: a
    percentage in a sentence holding another NUM percentage ("with a 63.93 % to 28.10 % margin of victory"),
    a part written with its whole ("in 45 of the 48 contiguous United States", both), and a total written
    with the parts it adds up to (:func:`_sums`)."""
    by_sent: dict[int, set[int]] = {}
    starts: dict[tuple[int, int], int] = {}  # (sentence, first token) of each NUM mention -> its entity
    for ei, ent in enumerate(doc["vertexSet"]):
        if coarse[ei] != "NUM":
            continue
        for m in ent:
            starts[(m["sent_id"], m["pos"][0])] = ei
            if is_percentage(doc["sents"][m["sent_id"]], m["pos"][0], m["pos"][1]):
                by_sent.setdefault(m["sent_id"], set()).add(ei)
    found = {ei for group in by_sent.values() if len(group) > 1 for ei in group}
    # a part and its whole: "operates stores in 45 of the 48 contiguous United States", "won 9 of 12 games"
    for ei, ent in enumerate(doc["vertexSet"]):
        if coarse[ei] != "NUM":
            continue
        for m in ent:
            sent, b = doc["sents"][m["sent_id"]], m["pos"][1]
            gap = 2 if b + 1 < len(sent) and sent[b] == "of" and sent[b + 1].casefold() == "the" else 1
            whole = starts.get((m["sent_id"], b + gap)) if b < len(sent) and sent[b] == "of" else None
            if whole is not None and whole != ei:
                found |= {ei, whole}
    found |= _sums(doc, coarse)
    return sorted(e for e in found if rules.get(e) in (ValueRule.DRAWN, ValueRule.TIED_COUNT))


def _sums(doc: Mapping, coarse: Sequence[str]) -> set[int]:
    """NUM entities of a total written in one sentence with the parts it adds up to, all of them: a value
    equal to the sum of the two or more NUM values after it in its sentence, or before it ("130 delegates
    were elected : 24 members from national lists , 100 representing the provinces and six for emigrants",
    which read "34 ... 300 ... nine"; "eight voices : two sopranos , two altos , two tenors and two basses")."""
    by_sent: dict[int, list[tuple[int, int, float]]] = {}
    for ei, ent in enumerate(doc["vertexSet"]):
        if coarse[ei] != "NUM":
            continue
        for m in ent:
            value = leading_number(doc["sents"][m["sent_id"]][m["pos"][0]:m["pos"][1]])
            if value is not None:
                by_sent.setdefault(m["sent_id"], []).append((m["pos"][0], ei, value))
    found: set[int] = set()
    for mentions in by_sent.values():
        mentions.sort()
        for i, (_, ei, value) in enumerate(mentions):
            for parts in (mentions[i + 1:], mentions[:i]):
                parts = [p for p in parts if p[1] != ei]
                if len(parts) >= 2 and math.isclose(sum(p[2] for p in parts), value):
                    found |= {ei, *(p[1] for p in parts)}
    return found


# words between "(" and the equivalent value ("( about 64 km )", "( USD 82.7 billion )", "( US$ 90 )")
_EQUIVALENT_LEADS = frozenset({"about", "approximately", "around", "approx.", "c.", "ca.", "circa", "some", "roughly",
                               "nearly", "almost", "over", "under", "usd", "us$", "$", "€", "£", "eur", "gbp"})
_EQUIVALENT_GAP = 3  # unit words between a value and the bracket of its equivalent ("air miles", "° C")
_UNIT_MARKS = frozenset({"°", "%", "$", "€", "£", "²", "³", "/"})  # marks a unit is written with ("km / h")


def equivalents(doc: Mapping, coarse: Sequence[str], rules: Mapping[int, ValueRule]) -> list[int]:
    """The NUM entities still free to change (drawn or tied) written with an equivalent in brackets, both
    of them, in order: the same measure in another unit or currency ("23.0 cm ( 9.1 in )", "18 to 22 ° C (
    64 to 72 ° F )", "85 million euros ( 167.6 million dollars )") or a count with its share of a whole
    ("77 ( 11.5 % of students )"). Drawn on their own they read "29.9 cm ( 7.6 in )", "26 to 37 ° C ( 95 to
    99 ° F )" and "575 students ( 41.0 % of enrollment ) ... 90 ( 11.5 % of students )". The value is
    followed by at most :data:`_EQUIVALENT_GAP` words, none of them punctuation, then "(", an optional
    "about" or currency word, and the other NUM mention."""
    starts: dict[tuple[int, int], int] = {}  # (sentence, first token) of each NUM mention -> its entity
    ends: dict[tuple[int, int], int] = {}  # (sentence, token after it) of each NUM mention -> its entity
    for ei, ent in enumerate(doc["vertexSet"]):
        if coarse[ei] == "NUM":
            for m in ent:
                starts[(m["sent_id"], m["pos"][0])] = ei
                ends[(m["sent_id"], m["pos"][1])] = ei
    found: set[int] = set()
    for ei, ent in enumerate(doc["vertexSet"]):
        if coarse[ei] != "NUM":
            continue
        for m in ent:
            sent, b = doc["sents"][m["sent_id"]], m["pos"][1]
            words = 0
            for j in range(b, len(sent)):
                if not sent[j].strip():  # Re-DocRED keeps a no-break space as a token: "23.0   cm"
                    continue
                if sent[j] == "(":
                    k = j + 1
                    while k < len(sent) and sent[k].casefold() in _EQUIVALENT_LEADS:
                        k += 1
                    other = starts.get((m["sent_id"], k))
                    if other is not None and other != ei:
                        found |= {ei, other}
                        found |= _range_partners(doc, starts, ends, (ei, other))
                    break
                words += 1
                if words > _EQUIVALENT_GAP or (not any(c.isalnum() for c in sent[j]) and sent[j] not in _UNIT_MARKS):
                    break  # "12 % citrus juice , ( 10 % ...": a comma ends the value's phrase
    return sorted(e for e in found if rules.get(e) in (ValueRule.DRAWN, ValueRule.TIED_COUNT))


def _range_partners(doc: Mapping, starts: Mapping[tuple[int, int], int], ends: Mapping[tuple[int, int], int],
                    members: Sequence[int]) -> set[int]:
    """The NUM entities joined to one of ``members`` as the other end of a range ("18 to 22 ° C ( 64 to 72 °
    F )": 18 and 72 beside 22 and 64), whose value converts with it."""
    out: set[int] = set()
    for ei in members:
        for m in doc["vertexSet"][ei]:
            sent, (a, b) = doc["sents"][m["sent_id"]], m["pos"]
            if a >= 2 and sent[a - 1] in RANGE_WORDS and (e := ends.get((m["sent_id"], a - 1))) is not None:
                out.add(e)
            if b < len(sent) and sent[b] in RANGE_WORDS and (e := starts.get((m["sent_id"], b + 1))) is not None:
                out.add(e)
    return out


def _has_role(role: ValueRule, sent: Sequence[str], a: int, b: int, coarse: str, name_before: bool) -> bool:
    if role is ValueRule.FIXED_FORM:
        return fixed_form(sent, a, b, coarse, name_before)
    if role is ValueRule.AGE:
        return is_age(sent, a, b)
    if role is ValueRule.INTERVAL:
        return is_interval(sent, a, b) is not None
    return coarse == "NUM" and is_listed(sent, a, b)


# (sentence, token) of each date mention, with its entity, in text order
_Dated = list[tuple[int, int, int]]


def _dated(doc: Mapping, coarse: Sequence[str], tokens: Sequence[Mapping[str, list[str]]]) -> _Dated:
    """The date mentions: TIME names that give a year, or a month ("October 18"), and are no duration."""
    out = [(m["sent_id"], m["pos"][0], ei) for ei, ent in enumerate(doc["vertexSet"]) if coarse[ei] == "TIME"
           for m in ent if (date_value(toks := tokens[ei].get(m["name"], [])) is not None
                            or _month_day({m["name"]: toks}) is not None)
           and is_interval(doc["sents"][m["sent_id"]], *m["pos"]) is None]
    return sorted(out)


def _person_dates(doc: Mapping, coarse: Sequence[str], dates: _Dated) -> dict[int, dict[str, int]]:
    """Each person's birth and death date entities: "( D1 – D2 )" or "( born D1" right after one of its
    mentions, else the gold labels (P569, P570; of several, the one written first: Re-DocRED also labels a
    year of a later event as a birth now and then)."""
    out: dict[int, dict[str, int]] = {}
    at = {(s, p): ei for s, p, ei in dates}
    for ei, ent in enumerate(doc["vertexSet"]):
        if coarse[ei] != "PER":
            continue
        for m in ent:
            sent, b = doc["sents"][m["sent_id"]], m["pos"][1]
            if b < len(sent) and sent[b] == "(":
                k = b + 1
                if k < len(sent) and sent[k].casefold() in _BIRTH_WORDS:
                    k += 1
                first = at.get((m["sent_id"], k))
                if first is None:
                    continue
                out.setdefault(ei, {}).setdefault(_BIRTH, first)
                dash = next((j for j in range(k + 1, min(len(sent), k + 6)) if sent[j] in ("–", "-", "—")), None)
                if dash is not None and (second := at.get((m["sent_id"], dash + 1))) is not None:
                    out[ei].setdefault(_DEATH, second)
    first_written = {}
    for _, _, ei in dates:
        first_written.setdefault(ei, len(first_written))
    labelled = sorted((first_written.get(lab["t"], len(first_written)), lab["h"], lab["r"], lab["t"])
                      for lab in doc.get("labels", []) or []
                      if lab["r"] in (_BIRTH, _DEATH) and coarse[lab["h"]] == "PER" and coarse[lab["t"]] == "TIME")
    for _, h, r, t in labelled:
        out.setdefault(h, {}).setdefault(r, t)
    return out


def _age_anchors(doc: Mapping, coarse: Sequence[str], dates: _Dated, m: Mapping) -> Anchors | None:
    """The birth and the event an age mention follows: the person is the last one named before it in its
    sentence, else the document's first person; the event a date of its sentence (the nearest), else the
    person's death where the sentence tells of one."""
    sid, a = m["sent_id"], m["pos"][0]
    persons = sorted((pm["sent_id"], pm["pos"][0], ei) for ei, ent in enumerate(doc["vertexSet"])
                     if coarse[ei] == "PER" for pm in ent)
    before = [p for p in persons if p[0] == sid and p[1] < a]
    person = before[-1][2] if before else (persons[0][2] if persons else None)
    if person is None:
        return None
    known = _person_dates(doc, coarse, dates).get(person, {})
    birth = known.get(_BIRTH)
    if birth is None:
        return None
    here = [(abs(p - a), ei) for s, p, ei in dates if s == sid and ei != birth]
    if here:
        event = min(here)[1]
    elif any(t.casefold() in _DEATH_WORDS for t in doc["sents"][sid]) and _DEATH in known:
        event = known[_DEATH]
    else:
        return None
    return Anchors(birth, event, "year", least=0)


def _interval_anchors(doc: Mapping, dates: _Dated, m: Mapping) -> Anchors | None:
    """The two dates an interval followed by "later" or "after" joins: the nearest date before it (its
    sentence or the one before) and the first date after it in its sentence."""
    sid, (a, b) = m["sent_id"], m["pos"]
    sent = doc["sents"][sid]
    unit = is_interval(sent, a, b)
    k = b
    while k < len(sent) and k - b < 4 and (sent[k].casefold() in TIME_UNITS or sent[k].casefold() in _BETWEEN):
        k += 1
    if unit is None or k >= len(sent) or sent[k].casefold() not in ("later", "after"):
        return None
    earlier = [(s, p, ei) for s, p, ei in dates if (s == sid and p < a) or s == sid - 1]
    later = [(s, p, ei) for s, p, ei in dates if s == sid and p > k]
    if not earlier or not later or earlier[-1][2] == later[0][2]:
        return None
    return Anchors(earlier[-1][2], later[0][2], unit)


# ---------------------------------------------------------------------------- deriving a value
# (TIME entity, renamed?) -> its names' tokens: as the source writes them, or as the renamed document does
NamesOf = Callable[[int, bool], Mapping[str, Sequence[str]]]


def _date(names: Mapping[str, Sequence[str]]) -> DateValue | None:
    """The most precise date the names give (a year, then a month, then a day)."""
    values = [v for t in names.values() if (v := date_value(t)) is not None]
    return max(values, key=lambda v: len(v.parts())) if values else None


def _month_day(names: Mapping[str, Sequence[str]]) -> tuple[int, int | None] | None:
    """The month and day of a date written without its year ("October 18", "18 October")."""
    for toks in names.values():
        month = next((mo for t in toks if (mo := month_of(t)) is not None), None)
        if month is not None:
            day = next((int(t) for t in toks if t.isdigit() and 1 <= int(t) <= 31), None)
            return month, day
    return None


def anchor_dates(anchors: Anchors, names_of: NamesOf, renamed: bool) -> tuple[DateValue, DateValue] | None:
    """The two dates a derived figure follows; a later date written without its year ("October 11 , 2008
    ... one week later on October 18") takes the earlier one's year, or the next when it would fall before."""
    start = _date(names_of(anchors.start, renamed))
    if start is None:
        return None
    end_names = names_of(anchors.end, renamed)
    end = _date(end_names)
    if end is None:
        md = _month_day(end_names)
        if md is None:
            return None
        end = DateValue(start.year, *md)
        if date_order(end, start) < 0:
            end = DateValue(start.year + 1, *md)
    return start, end


def _months(a: DateValue, b: DateValue) -> int:
    """Whole months from ``a`` to ``b`` at the precision both give (years alone: 12 per year)."""
    if a.month is None or b.month is None:
        return 12 * (b.year - a.year)
    n = 12 * (b.year - a.year) + b.month - a.month
    if a.day is not None and b.day is not None and b.day < a.day:
        n -= 1
    return n


def _days(a: DateValue, b: DateValue) -> int | None:
    if a.month is None or a.day is None or b.month is None or b.day is None:
        return None
    try:
        return (datetime.date(b.year, b.month, b.day) - datetime.date(a.year, a.month, a.day)).days
    except ValueError:  # a 30 February, which no renaming writes but a source might
        return None


def span(a: DateValue, b: DateValue, unit: str) -> int | None:
    """The whole ``unit``s from date ``a`` to date ``b`` (an age: whole years), or None when the dates do
    not say (days between two dates without a day), the span is not whole (ten days in weeks) or the unit
    is none of the calendar's (hours)."""
    if unit in _UNIT_MONTHS:
        months = _months(a, b)
        per = _UNIT_MONTHS[unit]
        return months // per if months >= 0 else -((-months) // per)
    if unit in _UNIT_DAYS:
        days = _days(a, b)
        if days is None or days % _UNIT_DAYS[unit]:
            return None
        return days // _UNIT_DAYS[unit]
    return None


def count_value(names: Mapping[str, Sequence[str]]) -> float | None:
    """The count a figure writes: its leading number ("thirty - seven - year" 37), or one for "a week", "an hour"."""
    for toks in names.values():
        at = _count_at(toks)
        if at is not None:
            return float(at[2])
        for t in toks:
            if t.casefold() in ("a", "an"):
                return 1.0
            if (v := leading_number([t])) is not None:
                return v
    return None


def change(plan: NumberPlan, ei: int, names: Mapping[str, Sequence[str]], names_of: NamesOf) -> int | None:
    """How far a derived figure's value moves: the renamed span between the two dates it agrees with less
    the original one (:func:`span`), the same for every such pair (``NumberPlan.pairs``); 0 when it agrees
    with none; None when the pairs' renamed spans disagree or one gives no whole span, which the document's
    shift should not do (``engine.settle_times`` prefers another, and else the value stays)."""
    value = count_value(names)
    found = plan.pairs.get(ei, ())
    if value is None or not found:
        return 0
    moved: set[int] = set()
    for anchors in found:
        before, after = anchor_dates(anchors, names_of, False), anchor_dates(anchors, names_of, True)
        if before is None or after is None:
            continue
        old = span(*before, anchors.unit)
        if old is None or not agrees(*before, anchors.unit, value, anchors.age):
            continue  # the text does not agree with these dates (a kept entity): no relation to keep
        new = span(*after, anchors.unit)
        if new is None:
            return None
        if anchors.unit == "year" and not anchors.age and \
                (after[1].year - after[0].year) - (before[1].year - before[0].year) != new - old:
            return None  # "held every four years" beside 2 September 2018 and 27 January 2023: about five
        moved.add(new - old)
    if len(moved) > 1:
        return None
    delta = moved.pop() if moved else 0
    least = min(a.least for a in found)
    return None if value + delta < least else delta


def following_end(plan: NumberPlan, ei: int, names: Mapping[str, Sequence[str]],
                  names_of: NamesOf) -> tuple[int, dict[str, list[str]]] | None:
    """For an interval counted in days or weeks that its renamed dates leave without a whole span: the later
    date rewritten to lie that interval after the renamed earlier one, as (its entity, its names). The
    document's month shift moves every March to one month and its day shift every day alike, so a span across
    a month's end changes with the months' lengths ("January 1 ... nine weeks later on March 4" under a shift
    to August is 64 days); no shift of the 50 may keep it whole, and the date then follows the interval
    (never the other way: a reader counts weeks, not days between dates). None when it has no such dates or
    the source did not agree with them."""
    anchors = plan.anchors.get(ei)
    value = count_value(names)
    if anchors is None or anchors.unit not in _UNIT_DAYS or value is None:
        return None
    before, after = anchor_dates(anchors, names_of, False), anchor_dates(anchors, names_of, True)
    if before is None or after is None or span(*before, anchors.unit) != value or span(*after, anchors.unit) == value:
        return None
    start = after[0]
    if start.month is None or start.day is None:
        return None
    end = datetime.date(start.year, start.month, start.day) + datetime.timedelta(days=int(value) * _UNIT_DAYS[anchors.unit])
    out: dict[str, list[str]] = {}
    for nm, toks in names_of(anchors.end, True).items():
        new = list(toks)
        for i, t in enumerate(toks):
            if month_of(t) is not None:
                full = MONTHS[end.month - 1]
                stem = t.rstrip(".")
                new[i] = same_case(full if len(stem) > 3 or stem.casefold() == "may" else full[:3], stem) + t[len(stem):]
            elif t.isdigit() and len(t) <= 2 and 1 <= int(t) <= 31:
                new[i] = f"{end.day:0{len(t)}d}" if t.startswith("0") else str(end.day)
            elif _YEAR.fullmatch(t):
                new[i] = str(end.year)
        out[nm] = new
    return anchors.end, out


def derive(plan: NumberPlan, ei: int, names: Mapping[str, list[str]], names_of: NamesOf) -> dict[str, list[str]] | None:
    """A derived figure's new names (:func:`change`, :func:`with_value`), or None when it keeps its value."""
    moved = change(plan, ei, names, names_of)
    return with_value(names, moved, least=min(a.least for a in plan.pairs[ei])) if moved else None


def _number_word(value: int, like: str) -> str | None:
    if 0 <= value < 10:
        word = UNITS[value]
    elif value < 20:
        word = TEENS[value - 10]
    elif value < 100 and value % 10 == 0:
        word = TENS[value // 10]
    else:
        return None
    return same_case(word, like)


def _write_count(value: int, like: Sequence[str]) -> list[str] | None:
    """``value`` written as ``like`` (a number's tokens) writes its number, in as many tokens: digits as
    digits ("1,054" keeps its comma), a word as a word ("Nine" -> "Eleven"), a compound as a compound
    ("Forty - six" -> "Fifty - one", "forty-six" -> "fifty-one"); None when that form cannot hold it."""
    first = like[0]
    if _NUMBER.match(first) and "." not in first:
        return [f"{value:,}" if "," in first else str(value)]
    words = _hyphen_words(like)
    if len(words) == 3 and words[1] == "-":  # a compound number word
        if not (21 <= value <= 99 and value % 10):
            return None
        tens, unit = same_case(TENS[value // 10], first), UNITS[value % 10]
        return [f"{tens}-{unit}"] if len(like) == 1 else [tens, like[1], unit]
    word = _number_word(value, first)
    return [word] if word is not None else None


_DIGIT_COMPOUND = re.compile(r"^(\d{1,3})(-[^\W\d].*)$")  # "72-year" (old), "57-year" (lawsuit): one token


def _count_at(toks: Sequence[str]) -> tuple[int, int, int] | None:
    """Where a name's count is: (start, end, value) of its first number, "a" / "an" counting one."""
    for i, t in enumerate(toks):
        low = t.casefold()
        if _NUMBER.match(t) and "." not in t:
            return i, i + 1, int(t.replace(",", ""))
        if m := _DIGIT_COMPOUND.match(t):
            return i, i + 1, int(m.group(1))
        if low in ("a", "an"):
            return i, i + 1, 1
        if low in WORD_VALUES:
            value = WORD_VALUES[low]
            if value >= 20 and value % 10 == 0 and i + 2 < len(toks) and toks[i + 1] == "-" \
                    and toks[i + 2].casefold() in UNITS[1:]:
                return i, i + 3, value + UNITS.index(toks[i + 2].casefold())  # "forty - six"
            if "-" in t and len(parts := t.casefold().split("-")) == 2 and parts[1] in UNITS[1:]:
                return i, i + 1, value + UNITS.index(parts[1])
            return i, i + 1, value
        if "-" in t and (parts := t.casefold().split("-"))[0] in WORD_VALUES and parts[1] in UNITS[1:]:
            return i, i + 1, WORD_VALUES[parts[0]] + UNITS.index(parts[1])  # "forty-six"
    return None


def with_value(names: Mapping[str, list[str]], delta: int, least: int = 1) -> dict[str, list[str]] | None:
    """Each name with its count moved by ``delta`` in its written form ("91" -> "92", "one" -> "two",
    "a week" -> "two weeks", "Forty - six" -> "Fifty - one"), in as many tokens, the counted noun
    agreeing; None when a name cannot write the new value so (a single word past "twenty" that is no round
    ten, a compound that would be round), it would fall below ``least``, or no name writes a count it can
    find (then none could change)."""
    out: dict[str, list[str]] = {}
    counted = False
    for nm, toks in names.items():
        at = _count_at(toks)
        if at is None:
            out[nm] = list(toks)
            continue
        counted = True
        i, j, value = at
        new_value = value + delta
        if (m := _DIGIT_COMPOUND.match(toks[i])) is not None:  # "72-year" -> "77-year"
            written: list[str] | None = [f"{new_value}{m.group(2)}"] if new_value >= least else None
        else:
            written = _write_count(new_value, ["one"] if toks[i].casefold() in ("a", "an") else toks[i:j]) \
                if new_value >= least else None
        if written is None or len(written) != j - i:
            return None
        new = [*toks[:i], *written, *toks[j:]]
        old_as_count = ["one" if t.casefold() in ("a", "an") else t for t in toks]
        out[nm] = agree_counts(old_as_count, new)
    return out if counted or not delta else None


def _magnitude(tokens: Sequence[str]) -> tuple[str, int] | None:
    """How big a count is as written: ("digits", how many integer digits) or ("word", 0 under ten, 1 for ten
    to nineteen, 2 for the tens)."""
    at = _count_at(tokens)
    if at is None:
        return None
    i, j, value = at
    if tokens[i][:1].isdigit():
        return "digits", len(str(value))
    return "word", 0 if value < 10 else 1 if value < 20 else 2


def same_magnitude(old: Mapping[str, Sequence[str]], new: Mapping[str, Sequence[str]] | None) -> bool:
    """Whether each name's count keeps its order of magnitude as written: as many digits ("671" -> "371",
    not "1571"), a word of the same class (under ten, ten to nineteen, the tens: "five" -> "eight", not
    "fourteen")."""
    if new is None:
        return False
    return all(_magnitude(old[nm]) == _magnitude(toks) for nm, toks in new.items())


def tied_offset(values: Sequence[float], *keys: object) -> int:
    """The offset that moves a group of tied counts together: 1 to 9 steps up or down, a step being the
    smallest count's order of magnitude (1 under ten, 10 under a hundred: "five ... four" -> "eight ...
    seven", "120 ... 150" -> "170 ... 200"), drawn from ``keys`` (seed, title, the group's first entity,
    attempt)."""
    scale = 10 ** max(0, len(str(int(min(values)))) - 1)
    n = derive_seed("tied", *keys)
    return (1 + n % 9) * scale * (1 if (n // 9) % 2 else -1)


__all__ = [
    "NAME_PREFIXES", "TIME_UNITS", "Anchors", "NamesOf", "NumberPlan", "anchor_dates", "change", "count_value",
    "count_shape", "counted_noun", "derive", "duration_unit", "equivalents", "fixed_form", "following_end", "is_age", "is_interval", "is_listed", "plan_numbers",
    "same_magnitude", "span", "tied_offset", "with_value",
]
