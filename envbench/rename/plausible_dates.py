"""Dates that stay plausible for what they date: the floors a document's year shift keeps above.

One shift moves every year of a renamed document (``numtime.document_shift``; the gaps between its written
years stretch only where an age or interval takes a new value from them, ``year_map``, which keeps a life
within :data:`HUMAN_SPAN`), so the order of its events stays. What a shift alone can break is a date against
the world: a film of 1905 moved to 1875, before the first films; a living person born in 1930 moved to
1890, so the article's "is an American actor" describes someone 135 years old. So a document gives
*floors*, pairs (year, floor): a year at or above its floor stays at or above it after the shift (a
year already below it may move as it likes), and ``document_shift`` narrows its range to match (each year
with its own offset where the gaps stretch: :func:`shift_range`):

* a thing and the year it came into being (:data:`FIRSTS`: film 1895, television 1928, video game 1972,
  website 1991, ...) is a floor for every year written in a sentence that names the thing ("the 1923
  film" stays a film of 1895 or after; a birth in 1850 in the same article may still move);
* a person whose birth the document gives (gold P569) and no death (P570) is alive in the text, and a
  life lasts at most :data:`HUMAN_SPAN` years: the birth year stays at or after ``numtime.MAX_YEAR`` less
  that span.

And *bounds*, (year, first, last): a year written in a sentence with a century or a dated period that
holds it stays inside it. In a document that writes years, centuries and dated periods no longer move a
rung (``numtime.TimeShift.eras``), since a shift of at most 40 years rarely moves a year into the next
century: "Guido Bonatti ( died between 1296 and 1300 ) ... the most celebrated astrologer of the 13th
century" keeps both in the 13th century (the shift is at most 4), "the early 17th century ... after 1612"
stays before 1634, "active in Elizabethan London from 1573 to 1581" stays between 1558 and 1603.
:func:`shift_range` turns floors and bounds into the lowest and highest year shift. When none is left, the
years stay (``numtime.document_shift``).

A census is taken every ten years in most countries that name it so ("At the 2010 census , the
population was 4,133"): a document that writes a year right before "census" moves its years by a multiple
of ten (:func:`decennial`, as a document that writes a decade does), so "the 2017 census" is never written.

The upper end needs no floor: no year of a document moves past ``numtime.MAX_YEAR``, a fixed "now".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from envbench.rename.numtime import MAX_YEAR, century_years, date_value, offset_at
from envbench.rename.periods import period_years

HUMAN_SPAN = 110  # the longest life a reader takes as ordinary (the oldest people live to about 115)

# things and the year the first of them was made, public or sold: "film" is the Lumières' 1895, "television"
# Baird's and Farnsworth's 1928 broadcasts, "video game" the first sold arcade games of 1972
FIRSTS: dict[tuple[str, ...], int] = {
    ("film",): 1895, ("films",): 1895, ("movie",): 1895, ("movies",): 1895, ("cinema",): 1895,
    ("filmmaker",): 1895, ("television",): 1928, ("tv",): 1928, ("sitcom",): 1947, ("video", "game"): 1972,
    ("video", "games"): 1972, ("website",): 1991, ("internet",): 1983, ("podcast",): 2004, ("aircraft",): 1903,
    ("airline",): 1914, ("airport",): 1909, ("helicopter",): 1939, ("radio", "station"): 1920,
    ("compact", "disc"): 1982, ("cd",): 1982, ("dvd",): 1996, ("smartphone",): 1994, ("automobile",): 1886,
    ("computer",): 1941, ("satellite",): 1957, ("spacecraft",): 1957,
}
_LONGEST = max(len(k) for k in FIRSTS)
_YEAR = re.compile(r"(?<!\d)[12]\d{3}(?!\d)")
_BIRTH, _DEATH = "P569", "P570"

Floor = tuple[int, int]  # (a year the document writes, the year it may not move below)
Bound = tuple[int, int, int]  # (a year the document writes, the first and the last year it must stay within)


def year_floors(doc: Mapping, coarse: Sequence[str], times: Mapping[int, Mapping[str, Sequence[str]]]) -> tuple[Floor, ...]:
    """The floors of a document (the module docstring), for the years of its TIME entities ``times``
    (entity -> {name: tokens}, those the document's shift moves)."""
    floors: set[Floor] = set()
    for sent_id, sent in enumerate(doc["sents"]):
        words = [t.casefold() for t in sent]
        first = max((FIRSTS.get(tuple(words[i:i + n]), 0) for i in range(len(words))
                     for n in range(1, _LONGEST + 1)), default=0)
        if not first:
            continue
        for ei, ent in enumerate(doc["vertexSet"]):
            if ei in times and any(m["sent_id"] == sent_id for m in ent):
                floors.update((int(y), first) for toks in times[ei].values() for t in toks for y in _YEAR.findall(t))
    died = {lab["h"] for lab in doc.get("labels", []) or [] if lab["r"] == _DEATH}
    for lab in doc.get("labels", []) or []:
        if lab["r"] == _BIRTH and lab["h"] not in died and coarse[lab["h"]] == "PER" and lab["t"] in times:
            for toks in times[lab["t"]].values():
                if (d := date_value(toks)) is not None:
                    floors.add((d.year, MAX_YEAR - HUMAN_SPAN))
    return tuple(sorted(floors))


def year_bounds(doc: Mapping, times: Mapping[int, Mapping[str, Sequence[str]]]) -> tuple[Bound, ...]:
    """The bounds of a document (the module docstring): each year of a TIME entity ``times`` holds, in a
    sentence where a TIME mention names a century or a dated period that contains it."""
    vs = doc["vertexSet"]
    periods: dict[int, list[tuple[int, int]]] = {}  # sentence -> the centuries and periods named there
    years: dict[int, set[int]] = {}
    for ei, ent in enumerate(vs):
        if not ent or ent[0].get("type") != "TIME":
            continue
        for m in ent:
            toks = doc["sents"][m["sent_id"]][m["pos"][0]:m["pos"][1]]
            found = century_years(toks) or period_years(toks)
            if found is not None:
                periods.setdefault(m["sent_id"], []).append(found)
            elif ei in times:
                years.setdefault(m["sent_id"], set()).update(int(y) for t in toks for y in _YEAR.findall(t))
    return tuple(sorted({(y, a, b) for sid, spans in periods.items() for a, b in spans
                         for y in years.get(sid, ()) if a <= y <= b}))


def decennial(doc: Mapping, times: Mapping[int, Mapping[str, Sequence[str]]]) -> bool:
    """Whether a year of a TIME entity ``times`` holds comes right before "census" ("the 2010 census")."""
    for ei in times:
        for m in doc["vertexSet"][ei]:
            sent, (a, b) = doc["sents"][m["sent_id"]], m["pos"]
            if b < len(sent) and sent[b].casefold() == "census" and any(_YEAR.search(t) for t in sent[a:b]):
                return True
    return False


def shift_range(floors: Sequence[Floor], bounds: Sequence[Bound] = (),
                offsets: Sequence[tuple[int, int]] = ()) -> tuple[int | None, int | None]:
    """The lowest and highest year shift that floors and bounds allow (None: no limit that side): a year
    at or above its floor may move down to it and no further; a year within its bounds may reach either end.
    ``offsets``: (year, offset) where the years' gaps stretch (``year_map``): each year moves by the shift
    plus its own offset (``numtime.offset_at``), and is checked so."""
    def off(year: int) -> int:
        return offset_at(offsets, year) if offsets else 0
    low = [floor - year - off(year) for year, floor in floors if year >= floor] + [
        first - year - off(year) for year, first, _ in bounds]
    high = [last - year - off(year) for year, _, last in bounds]
    return (max(low) if low else None), (min(high) if high else None)


__all__ = ["FIRSTS", "HUMAN_SPAN", "Bound", "Floor", "decennial", "shift_range", "year_bounds", "year_floors"]
