"""Rule-based renaming of NUM and TIME entities that keeps the written format.

The rules work token by token on the document's own tokens of a mention, so a name keeps its
shape and its tokenisation ("13 March 1963" -> "21 June 1971", "the 1990s" -> "the 1970s",
"1,200,800" -> "1,915,093", "63.93 %" -> "48.27 %", "Ten" -> "Six", "57-year" -> "34-year").

All TIME entities of one renamed document share one :class:`TimeShift` (a year shift, a month shift
and a day shift), drawn by :func:`document_shift` from ``(seed, title, attempt)``, so every
year-level order and equality between the document's dates survives ("a 1975 film ... opened on
25 March 1975" keeps one year; "from July 1931 to July 1937" keeps its order):

* years: every year (a 4-digit number 1000-2999) of every TIME entity moves by the same shift
  ``delta`` in [-40, 40] without 0, plus, where the document's number plan lets the gaps between its
  written years stretch (``year_map``: so an age or interval tied to them takes a new value), the year's
  own offset (``TimeShift.offsets``; the order of the years is kept), chosen so that no year of the document moves past
  ``MAX_YEAR`` (a year already after it only has to stay below 3000) or below 1000, nor below a floor
  the document sets (``plausible_dates``: "the 1923 film" stays a film of 1895 or later, a living person's
  birth no more than ``plausible_dates.HUMAN_SPAN`` years before ``MAX_YEAR``); when the document writes a
  decade, ``delta`` is a multiple of 10 so decades and years move together; when no shift fits, years
  stay (months and days still move). Among the shifts that fit, those that leave the fewest of the
  document's year names ("1995", "the 1990s") seen in the training documents are drawn from
  (``seen``: ``generate --exclude-names-from``), so a bare year of 2012 rather moves to 2021 than to
  1998, which any training corpus writes;
* decades ("1990s", "the mid 90s", "'60s", "mid-1920s"): by the same ``delta`` (a document that writes one
  has no offsets);
* the two-digit end of a span ("1983–84", "1963 - 65"): as its year moves; so is the end of a span
  that the corpus annotates as a TIME entity of its own ("the 1980 – 81 German championship", "( 1527 -
  8 )", ``span_end``), which is otherwise drawn as a number ("the 2004 – 33 German championship");
* centuries ("20th century", "the eighteenth century", "the mid-19th century", both of "late 14th and
  early 15th century"): one century in the direction of ``delta``; a numbered dynasty likewise ("the 19th
  Dynasty" -> "the 20th Dynasty", where the number rule had written "the 69th Dynasty");
* months (full or abbreviated names): one cyclic shift by 1..11 months, abbreviation and case kept;
* days (1-31, with or without an ordinal suffix, only in names that contain a month): one cyclic
  shift inside 1..28, so every new date exists;
* ordinal days and months written as such ("the 26th day of the 4th month" of a Japanese era): by
  the day and month shifts, never to "the 69th day";
* named periods (``periods``): eras and ages one rung along their ladder in the direction of
  ``delta`` ("the Middle Ages" -> "the Renaissance", "Pleistocene" -> "Holocene", "Edo period" ->
  "Meiji period"), weekdays by one cyclic weekday shift ("Mondays and Tuesdays" -> "Thursdays and
  Fridays");
* dates of the Hebrew calendar ("18 Elul 5505" -> "4 Elul 5485"): the month stays (its months are
  not the Gregorian ones), the day moves as other days do, and the year, whatever its size, by the
  same ``delta`` as the document's other years (the date names the same time as its Gregorian
  neighbours). Before this rule the day and year were taken for plain numbers ("53 Elul 9672").

Durations and ages ("one week later", "19 years younger", "a year", "aged 91") are no dates: the
document's number plan (``coherence``) keeps them, or derives them from the renamed dates they join, and
never gives them to these rules. Per entity, drawn from ``(seed, title, entity index, attempt)``:

* clock times ("11:59"): a new hour in the same 12- or 24-hour range and new minutes;
* other numbers: a new value with the same number of integer digits, the same decimals and the
  same thousands separators, from two digits on within half to twice the old value (a third to three
  times a round number's one-digit head: ``_draw_bounds``, so "152 episodes" in seven months never
  reads "923 episodes"), and a round whole number (one or two digits, then zeros) stays as round
  ("10,000" -> "30,000", "190,000" -> "270,000", "100" -> "300", where a uniform draw read "44,506 in
  1953, and another 44,506"; "4810" is drawn as any other);
  number words keep their class (one..nine, ten..nineteen, twenty..ninety), ordinal words too
  (first..ninth, tenth..twentieth; in TIME names only before "century"), and their capitalisation;
  the "a" of "a dozen", "a hundred" counts one and takes a number word 2..9 ("more than seven dozen major
  characters"), not the "a" of "half a million".
  Equal values get equal new values, so every mention of the entity gets the same new value. When the word after a mention is a noun the number counts ("two
  versions"; :func:`counts_a_noun`), a count never moves between one and many: that noun is outside
  the mention and keeps its number.

A count and its noun agree: when a count goes from one to another number or back, the counted noun
right after it (or after a modifier such as "more" or "square") takes the other number, "one year" ->
"five years", "four years" -> "one year", "two more decades" -> "one more decade", from a table of the
units and counted nouns that follow numbers in Re-DocRED (:data:`COUNTED`); "one-year" ("one", "-",
"year"), "one million" and "1 mm" stay as they are. The token count never changes.

Month and day shifts are cyclic, so month- and day-level order can still flip (December -> January).
Temporal order (``TEMPORAL_PAIRS``) is therefore checked by the caller with :func:`date_value` and
:func:`order_kept`; a violation redraws the document's shift with the next attempt, and the caller
also prefers an attempt that keeps the order of all the document's month-level dates
(``engine.swapped_dates``; :func:`rename_times` renames all TIME entities of a document for one attempt).
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from envbench.core.seeding import derive_seed
from envbench.core.text import same_case
from envbench.rename import periods

MAX_YEAR = 2025  # a fixed "now", so outputs never depend on the clock
MAX_SHIFT = 40

# (start, end) properties: if a document relates the same head to both ends, start <= end must hold
# after renaming whenever it held before.
TEMPORAL_PAIRS: tuple[tuple[str, str], ...] = (
    ("P569", "P570"),  # date of birth, date of death
    ("P580", "P582"),  # start time, end time
    ("P571", "P576"),  # inception, dissolved/abolished/demolished
)

MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)
_MONTH_OF: dict[str, int] = {}
for _i, _m in enumerate(MONTHS, start=1):
    _MONTH_OF[_m.casefold()] = _i
    _MONTH_OF[_m[:3].casefold()] = _i
_MONTH_OF["sept"] = 9
# month names of the Hebrew calendar (with the usual English spellings): a name with one of them is a
# date whose day and year follow the rules for dates, though its month is not shifted
_HEBREW_EPOCH = 3760  # a year of the Hebrew calendar less this is (mostly) the Gregorian year it falls in
_HEBREW_MONTHS = frozenset({
    "tishrei", "tishri", "cheshvan", "heshvan", "marcheshvan", "kislev", "tevet", "teves", "shevat", "shvat",
    "adar", "nisan", "iyar", "iyyar", "sivan", "tammuz", "tamuz", "av", "elul",
})

UNITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen")
TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
ORDINALS = ("zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
            "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
            "eighteenth", "nineteenth", "twentieth")
_ORDINAL_VALUE: dict[str, int] = {w: i for i, w in enumerate(ORDINALS) if i}
_CENTURY_WORDS = ("century", "centuries", "millennium")
# the periods a numbered ordinal moves by one rung of ("19th century", Egypt's "19th Dynasty": never "69th")
_RUNG_WORDS = (*_CENTURY_WORDS, "dynasty", "dynasties")
WORD_VALUES: dict[str, int] = {w: i for i, w in enumerate(UNITS)}
WORD_VALUES.update({w: 10 + i for i, w in enumerate(TEENS)})
WORD_VALUES.update({w: 10 * i for i, w in enumerate(TENS) if w})

_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
# a ratio to one ("10.5:1"), whose one stays: only the first number is a value of its own
_TO_ONE = re.compile(r"(\d+(?:\.\d+)?)(:1)")
_YEAR = re.compile(r"(?<!\d)([12]\d{3})(?!\d)")
# a decade, also as the corpus writes a part of one in one token ("mid-1920s", "late-1980s", "early-1990s")
_DECADE = re.compile(r"^((?:mid|early|late)-)?([12]\d{2}0)(s|'s|’s)$", re.IGNORECASE)
_SPAN = re.compile(r"^([12]\d{3})([-–/])(\d{2})$")  # "1983–84", one token: the end moves with the start
_SHORT_DECADE = re.compile(r"^(['’]?)(\d)0s$")  # "90s", "'60s": the decade digit moves with the years
_DAY = re.compile(r"^(\d{1,2})(st|nd|rd|th)?$", re.IGNORECASE)
_DAY_SPAN = re.compile(r"^(\d{1,2})([-–])(\d{1,2})$")  # "9–26 August 1914": two days in one token
_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})$")
_ORDINAL = re.compile(r"^(\d{1,2})(st|nd|rd|th)$", re.IGNORECASE)
_CENTURY_PREFIX = re.compile(r"^(?:mid|early|late|pre|post)-", re.IGNORECASE)  # "mid-19th" century
_WORD = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True)
class DateValue:
    """A date as far as a name gives it: year, then month, then day (None = not given)."""

    year: int
    month: int | None = None
    day: int | None = None

    def parts(self) -> tuple[int, ...]:
        out = [self.year]
        if self.month is not None:
            out.append(self.month)
            if self.day is not None:
                out.append(self.day)
        return tuple(out)


def month_of(token: str) -> int | None:
    """The month a token names ("March", "Mar.", "Sept" -> 3, 3, 9), else None."""
    return _MONTH_OF.get(token.rstrip(".").casefold())


def _draw_bounds(plain: str) -> tuple[int, int, int]:
    """What a number (its digits, no separators) is drawn from: (lowest, highest, trailing zeros kept).

    A round whole number (one or two digits, then zeros) stays round ("10,000" -> "20,000", not "44,506");
    "4810" or "1,200,800" is a measured value. Either keeps its count of digits, and from two digits on
    stays within half to twice the old value ("152 episodes" between April and November never "923
    episodes"; "63.93 %" is drawn from 32 to 99; a round number's one-digit head within a third to three
    times it: "10,000" -> "20,000" or "30,000"): what the text tells of the size of a thing stays, its
    exact value does not. A single digit is drawn from 1 to 9."""
    ints, _, decs = plain.partition(".")
    if len(ints) == 1:
        return 1, 9, 0
    zeros = len(ints) - len(ints.rstrip("0")) if not decs and ints.strip("0") else 0
    head = len(ints) - zeros
    if head > 2:
        zeros, head = 0, len(ints)
    value = int(ints[:head])
    if head == 1:
        return max(1, -(-value // 3)), min(9, 3 * value), zeros  # ceil: "40,000" never "10,000"
    return max(10 ** (head - 1), -(-value // 2)), min(10 ** head - 1, 2 * value), zeros


def _ordinal_suffix(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


# Nouns counted by a number, singular -> plural: the units and counted things that follow a number in
# Re-DocRED's TIME and NUM names (dev + test), with their neighbours. Written out rather than inflected
# by rule, so a word not in it ("wild", "m", "million") is never changed.
COUNTED: dict[str, str] = {
    "year": "years", "month": "months", "week": "weeks", "day": "days", "hour": "hours", "minute": "minutes",
    "second": "seconds", "decade": "decades", "century": "centuries", "millennium": "millennia",
    "season": "seasons", "term": "terms", "time": "times", "night": "nights", "generation": "generations",
    "mile": "miles", "foot": "feet", "inch": "inches", "yard": "yards", "metre": "metres", "meter": "meters",
    "kilometre": "kilometres", "kilometer": "kilometers", "centimetre": "centimetres", "centimeter": "centimeters",
    "millimetre": "millimetres", "millimeter": "millimeters", "acre": "acres", "hectare": "hectares",
    "ton": "tons", "tonne": "tonnes", "pound": "pounds", "kilogram": "kilograms", "gram": "grams",
    "dollar": "dollars", "cent": "cents", "point": "points", "goal": "goals", "game": "games",
    "match": "matches", "person": "people", "child": "children", "member": "members", "copy": "copies",
    "episode": "episodes", "album": "albums", "song": "songs", "egg": "eggs", "third": "thirds",
    "fourth": "fourths", "quarter": "quarters", "half": "halves", "lap": "laps", "round": "rounds",
}
_SINGULAR_OF = {pl: sg for sg, pl in COUNTED.items()}
# words that may stand between a count and its noun ("two more years", "three square miles")
_COUNT_MODIFIERS = frozenset({"more", "additional", "consecutive", "straight", "full", "square", "cubic",
                              "nautical", "successive", "further", "extra", "whole", "long", "short", "calendar"})


def _is_one(token: str) -> bool:
    return token.casefold() in ("one", "1")


def agree_counts(old: Sequence[str], new: Sequence[str]) -> list[str]:
    """``new`` (a renamed name's tokens, ``old``'s positions) with each counted noun agreeing with
    its count: ["four", "years"] renamed to ["one", "years"] gives ["one", "year"]."""
    out = list(new)
    for i in range(len(old) - 1):
        if _is_one(old[i]) == _is_one(out[i]):
            continue
        j = i + 1
        while j < len(out) - 1 and out[j].casefold() in _COUNT_MODIFIERS:
            j += 1
        word = out[j].casefold()
        swap = _SINGULAR_OF.get(word) if _is_one(out[i]) else COUNTED.get(word)
        if swap is not None:
            out[j] = same_case(swap, out[j])
    return out


def date_value(tokens: Sequence[str]) -> DateValue | None:
    """The date a TIME name gives, or None when it names no year."""
    year = month = day = None
    has_month = any(month_of(t) is not None for t in tokens)
    for t in tokens:
        if year is None and (m := _YEAR.search(t)) and not _DECADE.match(t):
            year = int(m.group(1))
        elif year is None and (m := _DECADE.match(t)):
            year = int(m.group(2))
        elif month is None and (mo := month_of(t)) is not None:
            month = mo
        elif has_month and day is None and (d := _DAY.match(t)) and 1 <= int(d.group(1)) <= 31:
            day = int(d.group(1))
    if year is None:
        return None
    return DateValue(year, month, day if month is not None else None)


def date_order(a: DateValue, b: DateValue) -> int:
    """-1, 0 or 1 as ``a`` is before, level with or after ``b`` at the precision both give
    ("May 1990" is level with "3 May 1990" and before "1991")."""
    n = min(len(a.parts()), len(b.parts()))
    pa, pb = a.parts()[:n], b.parts()[:n]
    return (pa > pb) - (pa < pb)


def order_kept(old_start: DateValue | None, old_end: DateValue | None,
               new_start: DateValue | None, new_end: DateValue | None) -> bool:
    """True unless start <= end held before (at the shared precision) and fails after."""
    if None in (old_start, old_end, new_start, new_end):
        return True
    assert old_start and old_end and new_start and new_end
    if date_order(old_start, old_end) > 0:
        return True  # the order did not hold before; nothing to keep
    return date_order(new_start, new_end) <= 0


class _Draw:
    """Deterministic integers for one entity and attempt."""

    def __init__(self, *keys: object) -> None:
        self.keys = keys

    def int(self, lo: int, hi: int, *more: object) -> int:
        """Uniform in [lo, hi]."""
        return lo + derive_seed(*self.keys, *more) % (hi - lo + 1)


class _NumberMap:
    """value -> new value, the same for every mention of one entity."""

    def __init__(self, draw: _Draw, keep_one: bool = False) -> None:
        self.draw = draw
        self.memo: dict[str, str] = {}
        # the count of a noun outside the name ("two versions"): one stays one, no other value becomes one
        self.keep_one = keep_one
        self.found = False  # whether a number was seen

    def digits(self, text: str) -> str:
        self.found = True
        plain = text.replace(",", "")
        if self.keep_one and plain == "1":
            return text
        if plain not in self.memo:
            ints, _, decs = plain.partition(".")
            lo, hi, zeros = _draw_bounds(plain)
            if len(ints) == 1 and self.keep_one and not decs:
                lo = 2
            for k in range(100):
                new_int = str(self.draw.int(lo, hi, "num", plain, k)) + "0" * zeros
                new_dec = "".join(str(self.draw.int(0, 9, "dec", plain, k, i)) for i in range(len(decs)))
                new = new_int + ("." + new_dec if "." in plain else "")
                if new != plain:
                    break
            self.memo[plain] = new
        new = self.memo[plain]
        if "," in text:  # keep thousands separators
            ints, dot, decs = new.partition(".")
            ints = f"{int(ints):,}"
            new = ints + dot + decs
        return new

    def word(self, word: str) -> str:
        self.found = True
        value = WORD_VALUES[word.casefold()]
        if self.keep_one and value == 1:
            return word
        key = f"w{value}"
        if key not in self.memo:
            if value < 10:
                choices = [v for v in range(2 if self.keep_one else 1, 10) if v != value]
            elif value < 20:
                choices = [v for v in range(10, 20) if v != value]
            else:
                choices = [v for v in range(20, 100, 10) if v != value]
            self.memo[key] = str(choices[self.draw.int(0, len(choices) - 1, "word", value)])
        new = int(self.memo[key])
        text = UNITS[new] if new < 10 else TEENS[new - 10] if new < 20 else TENS[new // 10]
        return same_case(text, word)

    def ordinal(self, word: str) -> str:
        self.found = True
        value = _ORDINAL_VALUE[word.casefold()]
        key = f"o{value}"
        if key not in self.memo:
            choices = [v for v in (range(1, 10) if value < 10 else range(10, 21)) if v != value]
            self.memo[key] = str(choices[self.draw.int(0, len(choices) - 1, "ordinal", value)])
        return same_case(ORDINALS[int(self.memo[key])], word)

    def article(self, word: str) -> str:
        """The "a" of "a dozen", "a hundred": a count of one, drawn as a number word 2..9 ("five dozen")
        whatever ``keep_one`` says, since the noun it counts is already plural ("a dozen books")."""
        self.found = True
        if "a1" not in self.memo:
            self.memo["a1"] = str(self.draw.int(2, 9, "article"))
        return same_case(UNITS[int(self.memo["a1"])], word)

    def token(self, token: str) -> str:
        if r := _TO_ONE.fullmatch(token):  # "a student – teacher ratio of 10.5:1" never "17.4:6"
            return self.digits(r.group(1)) + r.group(2)
        if token.casefold() in _ORDINAL_VALUE:
            return self.ordinal(token)
        if o := _ORDINAL.match(token):  # "1st" -> "7th", not "7st"
            n = self.digits(o.group(1))
            return n + same_case(_ordinal_suffix(int(n)), o.group(2))
        if token.casefold() in WORD_VALUES:
            return self.word(token)
        return _NUMBER.sub(lambda m: self.digits(m.group(0)), token)


@dataclass(frozen=True)
class TimeShift:
    """The shifts every TIME entity of one renamed document shares."""

    years: int  # 0 when no shift keeps every year in range
    months: int  # 1..11, cyclic; 0: every month stays (a shift of the years alone)
    days: int  # 1..27, cyclic inside 1..28; 0: every day stays
    weekdays: int = 1  # 1..6, cyclic (``periods``: "Tuesday" -> "Friday")
    # whether centuries and dated periods move a rung: only in a document that writes no year, where nothing
    # dates them; beside years they stay, and the year shift keeps those years inside them (``plausible_dates``)
    eras: bool = True
    # (year, offset) for each written year, sorted, where the gaps between them stretch (``year_map``): a year
    # moves by ``years`` plus its offset; empty: every year moves by ``years`` alone
    offsets: tuple[tuple[int, int], ...] = ()

    def year(self, y: int) -> int:
        """The year ``y`` becomes: ``y + years`` plus its offset (``year_map.offset_at``)."""
        return y + self.years + (offset_at(self.offsets, y) if self.offsets else 0)

    def delta_at(self, y: int) -> int:
        """How far year ``y`` moves."""
        return self.year(y) - y


def offset_at(offsets: Sequence[tuple[int, int]], y: int) -> int:
    """The offset of year ``y`` under sorted (year, offset) points: its own where it is one, else read
    off the straight line between the points on either side (rounded down: the map stays monotone), else
    the nearest end's."""
    if not offsets:
        return 0
    if y <= offsets[0][0]:
        return offsets[0][1]
    if y >= offsets[-1][0]:
        return offsets[-1][1]
    for (a, oa), (b, ob) in zip(offsets, offsets[1:], strict=False):
        if a <= y <= b:
            if y == b:
                return ob
            return oa + ((ob - oa) * (y - a)) // (b - a)
    return offsets[-1][1]


def time_years(names: dict[str, list[str]]) -> tuple[list[int], bool]:
    """The years written in a TIME entity's names, and whether one of them is a decade ("1990s")."""
    years: list[int] = []
    decade = False
    for toks in names.values():
        for i, t in enumerate(toks):
            years.extend(int(m.group(1)) for m in _YEAR.finditer(t))
            decade = decade or bool(_DECADE.match(t) or _SHORT_DECADE.match(t)) or (
                len(t) == 4 and t.isdigit() and t.endswith("0") and toks[i + 1:i + 2] in (["s"], ["'s"], ["’s"]))
    return years, decade


def document_shift(years: Iterable[int], decades: bool, *keys: object, lowest: int | None = None,
                   highest: int | None = None, seen: Callable[[int], int] | None = None,
                   offsets: Sequence[tuple[int, int]] = (), calendar: bool = True) -> TimeShift:
    """One shift for all TIME entities of a document; ``keys`` are (seed, title, attempt).

    ``lowest`` and ``highest``: the year shifts the document's dated things allow (``plausible_dates.shift_range``);
    ``seen``: for a year shift, how many of the document's year names it would make names of the training
    documents; the shift is drawn among those with the fewest (the module docstring). ``offsets``: (year,
    offset) of each written year where the gaps between them stretch (``year_map``); the shift drawn is
    then the first year's, each year moving by it plus its offset, and one that leaves a year where it was is
    avoided where another fits. ``calendar`` False: months and days stay, the years alone move (the engine's
    last attempt, for a document whose ages no cyclic month shift keeps: born 1 January, died 1 December of the
    next year, "aged 1", reads "aged 0" under any of them)."""
    draw = _Draw("time-shift", *keys)
    years = list(years)
    moved = {y: offset_at(offsets, y) for y in set(years)} if offsets else {}
    past = [y for y in years if y <= MAX_YEAR]
    hi = min([MAX_SHIFT, *(MAX_YEAR - y - moved.get(y, 0) for y in past), *(2999 - y - moved.get(y, 0) for y in years)])
    lo = max([-MAX_SHIFT, *(1000 - y - moved.get(y, 0) for y in years)])  # stay a 4-digit year
    if lowest is not None and years:
        lo = max(lo, lowest)
    if highest is not None and years:
        hi = min(hi, highest)
    options = [d for d in range(lo, hi + 1) if d != 0 and (not decades or d % 10 == 0)]
    if moved:
        options = [d for d in options if all(d + o for o in moved.values())] or options
    if seen is not None and len(options) > 1:
        counts = [seen(d) for d in options]
        options = [d for d, c in zip(options, counts, strict=True) if c == min(counts)]
    delta = options[draw.int(0, len(options) - 1, "delta")] if options else 0
    months, days = (draw.int(1, 11, "month"), draw.int(1, 27, "day")) if calendar else (0, 0)
    return TimeShift(delta, months, days, draw.int(1, 6, "weekday"), eras=not years,
                     offsets=tuple(offsets) if options else ())


def short_spans(names: Mapping[str, Sequence[str]]) -> list[tuple[int, int]]:
    """The spans a TIME entity writes with a short end ("1983–84", "1963 - 65"), as (start, end) years: the
    end moves with the start, so the years between keep their distance (``year_map``)."""
    out: list[tuple[int, int]] = []
    for toks in names.values():
        for i in range(len(toks)):
            if (span := short_span(toks, i)) is not None:
                out.append((span[0], span_end_year(span[0], span[1])))
    return out


def short_span(toks: Sequence[str], i: int) -> tuple[int, str, str | None] | None:
    """Where token ``i`` ends a span of years with a short end: (the start year, the end's digits, the dash
    when the token holds the start as well, "1983–84"; None for the end of "1963 - 65", three tokens);
    else None. The one reading of such spans for the renaming (:func:`rename_time`), the years they span
    (:func:`short_spans`) and the names written around them (``year_map.move_years``)."""
    t = toks[i]
    if m := _SPAN.match(t):
        return int(m.group(1)), m.group(3), m.group(2)
    if i >= 2 and len(t) == 2 and t.isdigit() and toks[i - 1] in ("-", "–", "/") and _YEAR.fullmatch(toks[i - 2]):
        return int(toks[i - 2]), t, None
    return None


def span_end_year(start: int, short: str) -> int:
    """The full year a span's short end (its digits as written) names: "84" after 1983 is 1984, "8" after
    1527 is 1528, "05" after 1999 is 2005."""
    width = 10 ** len(short)
    end = start - start % width + int(short)
    return end if end >= start else end + width


def shifted_key(key: Sequence[str], delta: int, offsets: Sequence[tuple[int, int]] = ()) -> tuple[str, ...]:
    """A name's key (``substitute.text_key``) with every year in it moved by ``delta`` ("1995" ->
    "2003", "1990s" -> "2000s"), and by its offset where ``offsets`` stretch the years: what the name
    becomes under that year shift, as far as its years go."""
    def move(m: re.Match[str]) -> str:
        y = int(m.group(1))
        return str(y + delta + (offset_at(offsets, y) if offsets else 0))
    return tuple(_YEAR.sub(move, part) for part in key)


def rename_time(names: dict[str, list[str]], *keys: object, shift: TimeShift | None = None,
                span_end: bool = False, span_start: int | None = None) -> dict[str, list[str]] | None:
    """New tokens for each distinct name of a TIME entity, or None when no rule applies.

    ``keys`` are (seed, title, entity index, attempt); ``shift`` is the document's shift (see
    :func:`rename_times`). Without it the entity is treated as a document of its own. ``span_end``:
    the entity is the last digits of a span whose year is another TIME entity ("81" of "1980 – 81"):
    its one- and two-digit numbers move as that year does (``span_start``, where known; else by the
    year shift), modulo their width ("81" -> "05" for +24).
    """
    draw = _Draw("time", *keys)
    if shift is None:
        shift = document_shift(*time_years(names), *keys)
    delta, month_shift, day_shift = shift.years, shift.months, shift.days
    numbers = _NumberMap(draw)
    end_delta = shift.delta_at(span_start) if span_start is not None else delta

    def new_year(y: int) -> int:
        return shift.year(y)

    def new_decade(y: int) -> int:
        return (new_year(y) // 10) * 10  # delta is a multiple of 10 when the document has decades

    out: dict[str, list[str]] = {}
    for name, toks in names.items():
        hebrew = any(t.casefold() in _HEBREW_MONTHS for t in toks) and any(t.isdigit() for t in toks)
        has_month = hebrew or any(month_of(t) is not None for t in toks)
        # "late 14th and early 15th century": every numbered ordinal of a name about centuries is one, and
        # so is a TIME name that is a bare ordinal: all seven in Re-DocRED ("14th" and early 15th century)
        words = [t for t in toks if t.casefold() != "the"]
        about_centuries = any(t.casefold() in _CENTURY_WORDS for t in toks) or (
            len(words) == 1 and _ORDINAL.match(_CENTURY_PREFIX.sub("", words[0])) is not None)
        new: list[str] = []
        for i, t in enumerate(toks):
            if span_end and t.isdigit() and len(t) <= 2:
                new.append(f"{(int(t) + end_delta) % 10 ** len(t):0{len(t)}d}")
                continue
            nxt = next((u for u in toks[i + 1:] if u not in ("-", "–")), "")
            mo = month_of(t)
            if mo is not None:
                m2 = (mo - 1 + month_shift) % 12 + 1
                full = MONTHS[m2 - 1]
                stem = t.rstrip(".")
                text = full if len(stem) > 3 or stem.casefold() == "may" else full[:3]
                if stem.casefold() == "sept":
                    text = full[:4] if m2 == 9 else full[:3]
                new.append(same_case(text, stem) + t[len(stem):])
            elif m := _DECADE.match(t):
                new.append(f"{m.group(1) or ''}{new_decade(int(m.group(2)))}{m.group(3)}")
            elif not has_month and (span := short_span(toks, i)) is not None:
                # a season "1983–84" -> "1963–64" and "1963 - 65" -> "1933 - 35"; not "1797–17 February"
                start, short, dash = span
                end = f"{(int(short) + shift.delta_at(start)) % 100:02d}"
                new.append(end if dash is None else f"{new_year(start)}{dash}{end}")
            elif m := _SHORT_DECADE.match(t):  # "the mid 90s" -> "the mid 50s" (not "19s")
                new.append(f"{m.group(1)}{(int(m.group(2)) + delta // 10) % 10}0s")
            elif t.isdigit() and len(t) == 4 and t.endswith("0") and i + 1 < len(toks) \
                    and toks[i + 1] in ("s", "'s", "’s"):
                new.append(str(new_decade(int(t))))
            elif c := _CLOCK.match(t):
                hour, minute = int(c.group(1)), int(c.group(2))
                h2 = draw.int(1, 12, "hour", hour) if 1 <= hour <= 12 else draw.int(0, 23, "hour", hour)
                m2 = draw.int(0, 59, "minute", minute)
                if (h2, m2) == (hour, minute):
                    m2 = (m2 + 1) % 60
                new.append(f"{h2:0{len(c.group(1))}d}:{m2:02d}")
            elif (o := _ORDINAL.match(_CENTURY_PREFIX.sub("", t))) and (
                    nxt.casefold() in _RUNG_WORDS or (about_centuries and int(o.group(1)) <= 21)):
                # "19th century", and as the corpus writes it, "mid-19th century" (one token)
                c = max(1, int(o.group(1)) + (1 if delta >= 0 else -1)) if shift.eras else int(o.group(1))
                prefix = t[: len(t) - len(o.group(0))]
                new.append(f"{prefix}{c}{same_case(_ordinal_suffix(c), o.group(2))}")
            elif t.casefold() in _ORDINAL_VALUE and nxt.casefold() in _RUNG_WORDS:
                c = _ORDINAL_VALUE[t.casefold()] + (1 if delta >= 0 else -1)
                c = c if 1 <= c < len(ORDINALS) else _ORDINAL_VALUE[t.casefold()] - (1 if delta >= 0 else -1)
                new.append(same_case(ORDINALS[c], t) if shift.eras else t)
            elif (o := _ORDINAL.match(t)) and nxt.casefold() in ("day", "month"):
                # "the 26th day of the 4th month" (of an era): a day or month moves as dates do, never to "69th"
                n = int(o.group(1))
                n = n if (day_shift if nxt.casefold() == "day" else month_shift) == 0 else \
                    (n - 1 + day_shift) % 28 + 1 if nxt.casefold() == "day" else (n - 1 + month_shift) % 12 + 1
                new.append(f"{n}{same_case(_ordinal_suffix(n), o.group(2))}")
            elif t.casefold() in _ORDINAL_VALUE:
                new.append(t)  # "second" in a date or duration is rarely an ordinal number
            elif has_month and (d := _DAY_SPAN.match(t)) and 1 <= int(d.group(1)) < int(d.group(3)) <= 31:
                new.append(_day_span(int(d.group(1)), int(d.group(3)), d.group(2), day_shift))
            elif has_month and (d := _DAY.match(t)) and 1 <= int(d.group(1)) <= 31:
                day = _new_day(int(d.group(1)), day_shift)
                suffix = same_case(_ordinal_suffix(day), d.group(2)) if d.group(2) else ""
                width = len(d.group(1)) if d.group(1).startswith("0") else 1  # "05" stays zero-padded
                new.append(f"{day:0{width}d}{suffix}")
            elif hebrew and t.isdigit() and len(t) == 4:  # "5505" of "18 Elul 5505": a year of its calendar
                new.append(str(int(t) + shift.delta_at(int(t) - _HEBREW_EPOCH)))
            elif _YEAR.search(t):  # with delta 0 (no shift fits the document) a year stays a year
                new.append(_YEAR.sub(lambda m: str(new_year(int(m.group(1)))), t))
            else:
                new.append(numbers.token(t))
        new = agree_counts(toks, new)
        # named periods move with the years, as centuries do
        new = periods.move_periods(new, 1 if delta >= 0 else -1, shift.weekdays, eras=shift.eras) or new
        new = with_weekday(new)
        out[name] = new
    if all(out[n] == names[n] for n in names):
        return None
    return out


def _new_day(day: int, day_shift: int) -> int:
    """A day of the month moved by the document's day shift, within the 28 days every month has."""
    return day if day_shift == 0 else (day - 1 + day_shift) % 28 + 1


def _day_span(first: int, last: int, dash: str, day_shift: int) -> str:
    """The two days of "9–26 August", moved: the last as a day does (so it agrees with "26 August" elsewhere),
    the first kept before it. Moved on its own the first could pass the last, and as plain numbers the pair
    read "4–38 April". A last day moved to the 1st leaves no day before it: the span is written as that day."""
    new_first, new_last = _new_day(first, day_shift), _new_day(last, day_shift)
    if new_first >= new_last:  # the shift wrapped one day round the month and not the other
        new_first = max(1, new_last - (last - first))
    return f"{new_first}{dash}{new_last}" if new_first < new_last else str(new_last)


_PARTS = {"early": (0, 32), "mid": (33, 65), "middle": (33, 65), "late": (67, 99)}


def century_years(tokens: Sequence[str]) -> tuple[int, int] | None:
    """The years a TIME name about centuries covers: "the 19th century" 1801-1900, "early 17th century"
    1601-1633, "the mid-19th century" 1834-1866, "late 14th and early 15th century" 1368-1433; None for a
    name about no century, or one before Christ or "pre-" / "post-" one."""
    folded = [t.casefold().rstrip(".") for t in tokens]
    if not any(t in ("century", "centuries") for t in folded) or any(t in ("bc", "bce", "b.c") for t in folded):
        return None
    spans: list[tuple[int, int]] = []
    part: str | None = None
    for t in tokens:
        low = t.casefold()
        if low in _PARTS:
            part = low
            continue
        prefix = _CENTURY_PREFIX.match(t)
        if prefix and prefix.group(0)[:-1].casefold() in ("pre", "post"):
            return None
        n = int(o.group(1)) if (o := _ORDINAL.match(_CENTURY_PREFIX.sub("", t))) else _ORDINAL_VALUE.get(low)
        if n is None:
            continue
        which = prefix.group(0)[:-1].casefold() if prefix else part
        first = (n - 1) * 100 + 1
        a, b = _PARTS.get(which or "", (0, 99))
        spans.append((first + a, first + b))
        part = None
    return (min(a for a, _ in spans), max(b for _, b in spans)) if spans else None


def eras_only(names: Mapping[str, Sequence[str]]) -> bool:
    """Whether a TIME entity's names move only as centuries and dated periods do (``TimeShift.eras``): "the
    19th century", "the 17th", "the 4th century BC", "Edo period"; such a name stays in a document that
    writes years, which date it."""
    shift = TimeShift(1, 1, 1)
    names = {nm: list(t) for nm, t in names.items()}
    return rename_time(names, 0, "", 0, 0, shift=shift) is not None and rename_time(
        names, 0, "", 0, 0, shift=TimeShift(1, 1, 1, eras=False)) is None


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def weekday_of(value: DateValue) -> int | None:
    """The weekday (0 Monday .. 6 Sunday) of a full date, else None."""
    if value.month is None or value.day is None:
        return None
    try:
        return datetime.date(value.year, value.month, value.day).weekday()
    except ValueError:
        return None


def with_weekday(tokens: Sequence[str]) -> list[str]:
    """A date's tokens with a weekday written in it set to the date's own ("Friday 1 August 2014" renamed
    to "... 20 February 1979" reads "Tuesday 20 February 1979"); other tokens as they are."""
    out = list(tokens)
    value = date_value(tokens)
    day = weekday_of(value) if value is not None else None
    if day is None:
        return out
    for i, t in enumerate(tokens):
        if t.casefold() in (w.casefold() for w in _WEEKDAYS):
            out[i] = same_case(_WEEKDAYS[day], t)
    return out


def document_years(entities: Mapping[int, dict[str, list[str]]]) -> tuple[tuple[int, ...], bool]:
    """The years written in a document's TIME entities (:func:`time_years` of each, in order), and
    whether one of them is a decade: what :func:`document_shift` is drawn against."""
    years: list[int] = []
    decades = False
    for names in entities.values():
        ys, dec = time_years(names)
        years.extend(ys)
        decades = decades or dec
    return tuple(years), decades


def rename_times(entities: dict[int, dict[str, list[str]]], seed: int, title: str, attempt: int, *,
                 years: tuple[tuple[int, ...], bool] | None = None,
                 span_ends: Collection[int] = (), lowest: int | None = None, highest: int | None = None,
                 seen: Callable[[int], int] | None = None, offsets: Sequence[tuple[int, int]] = (),
                 span_starts: Mapping[int, int] | None = None, calendar: bool = True
                 ) -> dict[int, dict[str, list[str]] | None]:
    """Rename all TIME entities of one document with one shared :class:`TimeShift`.

    ``entities`` maps entity index -> {distinct name: tokens}; the result maps each index to its new
    tokens per name, or None when no rule applies to it. ``years``: their :func:`document_years`,
    when the caller has them (the same for every seed and attempt of a document). ``span_ends``: the
    entities that are the short end of a span after a year (:func:`rename_time`'s ``span_end``), and
    ``span_starts`` the year each such end follows, where known. ``lowest``, ``highest``, ``seen`` and
    ``offsets`` and ``calendar``: see :func:`document_shift`.
    """
    written, decades = document_years(entities) if years is None else years
    shift = document_shift(written, decades, seed, title, attempt, lowest=lowest, highest=highest, seen=seen,
                           offsets=offsets, calendar=calendar)
    starts = span_starts or {}
    return {ei: rename_time(names, seed, title, ei, attempt, shift=shift, span_end=ei in span_ends,
                            span_start=starts.get(ei))
            for ei, names in entities.items()}


def rename_num(names: dict[str, list[str]], *keys: object, counting: bool = False) -> dict[str, list[str]] | None:
    """New tokens for each distinct name of a NUM entity, or None when no number is found.

    ``counting``: a mention of the entity is followed by a noun it counts (:func:`counts_a_noun`),
    whose number the renaming cannot change: then one stays one and no other count becomes one
    ("two versions" never reads "one versions"), and the names may come back unchanged."""
    numbers = _NumberMap(_Draw("num", *keys), keep_one=counting)
    out = {name: agree_counts(toks, [numbers.article(t) if _counts_one(toks, i) else numbers.token(t)
                                     for i, t in enumerate(toks)]) for name, toks in names.items()}
    return out if numbers.found else None


# what stands between the two ends of a range ("one to five years", "18 - 19 mph", "1965 through 1969"), inside
# one name ("7 - 7.5 mm") or between two mentions (``engine.DocInfo.number_pairs``, ``coherence.equivalents``)
RANGE_WORDS = frozenset({"to", "-", "–", "—", "through", "until"})


_TOKEN_RANGE = re.compile(r"(\d[\d,]*(?:\.\d+)?)[-–—](\d[\d,]*(?:\.\d+)?)")


def _token_range(token: str) -> tuple[float, float] | None:
    """The two ends of a range written as one token ("10–20", "1.5-2"), else None."""
    m = _TOKEN_RANGE.fullmatch(token)
    if m is None:
        return None
    return float(m.group(1).replace(",", "")), float(m.group(2).replace(",", ""))


def _order(a: float, b: float) -> int:
    """-1, 0 or 1 as ``a`` is below, equal to or above ``b``."""
    return (a > b) - (a < b)


def ranges_in_order(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether every range written inside one NUM name keeps the order of its two ends after renaming: "The
    wingspan is 7 - 7.5 mm" had read "9 - 3.5 mm", each number of the name drawn on its own. A name whose
    token count changed is not judged (its ranges are the engine's pairs of mentions, ``DocInfo.number_pairs``)."""
    if len(old) != len(new):
        return True
    for was, now in zip(old, new, strict=True):  # a range in one token: "minor ( 10–20 % ) differences"
        ends, new_ends = _token_range(was), _token_range(now)
        if ends is not None and new_ends is not None and _order(*ends) != _order(*new_ends):
            return False
    words = [i for i, tok in enumerate(old) if tok.strip()]  # Re-DocRED's no-break space tokens aside
    for x, y, z in zip(words, words[1:], words[2:], strict=False):
        if old[y].casefold() not in RANGE_WORDS:
            continue
        a, b = leading_number([old[x]]), leading_number([old[z]])
        c, d = leading_number([new[x]]), leading_number([new[z]])
        if None in (a, b, c, d):
            continue
        if (a < b, a == b, a > b) != (c < d, c == d, c > d):
            return False
    return True


# words a count multiplies, so that "a" before them is a count of one ("a dozen", "a hundred")
MULTIPLIERS = frozenset({"dozen", "hundred", "thousand", "million", "billion"})


def _counts_one(toks: Sequence[str], i: int) -> bool:
    """Whether token ``i`` is the "a" of "a dozen" (not of "half a million", whose "a" belongs to "half")."""
    return (toks[i].casefold() in ("a", "an") and i + 1 < len(toks) and toks[i + 1].casefold() in MULTIPLIERS
            and not (i > 0 and toks[i - 1].casefold() in ("half", "quarter", "third")))


def leading_number(tokens: Sequence[str]) -> float | None:
    """The first number a NUM or TIME name writes, or None: digits ("1,200" -> 1200, "63.93", the 7 of
    "7th"), a number word ("five"; "sixty - eight" and "sixty-eight" -> 68) or an ordinal word ("tenth").
    None as well for a name with a month (a date, whose order ``date_value`` reads), so "18 to 22",
    "one to five years" and "every two years for a four - year term" compare by these values."""
    head = _number_head(tuple(tokens))
    return head[0] if head is not None else None


def number_range(tokens: Sequence[str]) -> tuple[float, float] | None:
    """The lowest and highest value :func:`rename_num` can give a name's :func:`leading_number`: the
    same count of integer digits within half to twice the value ("18" -> 10..36, "7" -> 1..9), the same
    class of number word
    ("five" -> 1..9, "fifteen" -> 10..19, "sixty" -> 20..90, "sixty - eight" -> 21..99) or of
    ordinal ("third" -> 1..9). None when the name has no leading number."""
    head = _number_head(tuple(tokens))
    return head[1] if head is not None else None


_HYPHENATED = re.compile(r"(?<=[A-Za-z])-(?=[A-Za-z])")  # "sixty-eight" is two words


@functools.lru_cache(maxsize=1 << 16)  # the pairs of a document are checked on every attempt
def _number_head(tokens: tuple[str, ...]) -> tuple[float, tuple[float, float]] | None:
    """(:func:`leading_number`, :func:`number_range`) of a name, from one scan."""
    if any(month_of(t) is not None for t in tokens):
        return None
    words = [w for t in tokens for w in _HYPHENATED.split(t)]
    for i, t in enumerate(words):
        low = t.casefold()
        if m := _NUMBER.search(t):
            plain = m.group(0).replace(",", "")
            lo, hi, zeros = _draw_bounds(plain)
            return float(plain), (float(lo * 10 ** zeros), float(hi * 10 ** zeros))
        if low in _ORDINAL_VALUE:
            value = _ORDINAL_VALUE[low]
            return float(value), ((1.0, 9.0) if value < 10 else (10.0, 20.0))
        if low in WORD_VALUES:
            value = WORD_VALUES[low]
            if value < 10:
                return float(value), (1.0, 9.0)
            if value < 20:
                return float(value), (10.0, 19.0)
            rest = [w.casefold() for w in words[i + 1:i + 3]]
            unit = rest[1] if rest[:1] == ["-"] and len(rest) > 1 else rest[0] if rest else ""
            if value % 10 == 0 and unit in UNITS[1:]:  # "sixty - eight": a compound, drawn as 21..99
                return float(value + UNITS.index(unit)), (21.0, 99.0)
            return float(value), (20.0, 90.0)
    return None


# words after a number that are not a noun it counts ("four of the", "one to five")
_NOT_COUNTED = frozenset({"of", "to", "or", "and", "in", "on", "at", "for", "from", "by", "with", "than", "per",
                          "out", "as", "into", "over", "under", "a", "an", "the", "is", "was", "are", "were",
                          "percent", "hundred", "thousand", "million", "billion", "trillion"})


# the plural of an initialism, a noun as countable as a lower-case one ("2 CDs in the standard edition" had
# read "1 CDs"; "three EPs", "two DJs")
_INITIALISM_PLURAL = re.compile(r"[A-Z]{2,5}s")


def counts_a_noun(next_token: str) -> bool:
    """Whether the token after a NUM mention looks like the noun it counts: a lower-case word that is
    not a preposition, article, verb "to be" or a scale word ("two versions" yes, "four of" no), or the
    plural of an initialism ("2 CDs")."""
    if _INITIALISM_PLURAL.fullmatch(next_token):
        return True
    return next_token.isalpha() and next_token.islower() and next_token not in _NOT_COUNTED


RENAMERS: dict[str, Callable[..., dict[str, list[str]] | None]] = {"TIME": rename_time, "NUM": rename_num}
