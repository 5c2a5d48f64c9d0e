"""A document's years under one monotone map: the gaps a derived figure spans stretch, the rest keep their length.

One shift for every year of a document (``numtime.document_shift``) keeps every order and every distance
between its dates, so every age and interval the text ties to them keeps its value: on Env-Re-DocRED test
those figures were neither renamed nor novel. A monotone map keeps the order and lets the distances change:
the years a document writes, sorted and told apart ("1870", "1938", "1981"), keep their order, and the gap
between two neighbours may grow or shrink by a drawn, bounded amount; an age or interval the text ties to
two of those years then takes the value its renamed dates give (``coherence.change``): "( 3 June 1870 – 19
December 1938 ) ... aged 68" may read "( 3 June 1851 – 19 December 1922 ) ... aged 71".

Only where that pays and nothing forbids it (``coherence.NumberPlan``):

* a gap may stretch only inside the two years one figure follows alone (``stretch``), so the map is one
  shift wherever no figure gains a new value from it, and a document without such a figure is renamed
  exactly as before;
* a gap inside a range that must keep its length (``rigid``) does not: a figure that agrees with several
  pairs of years or nearly agrees with one, two figures that add up to a pair's distance ("19 years younger
  than her husband ... aged 91" beside his birth and her death), a count read off years ("four seasons (
  1914–1918 )"), a span with a short end ("1983–84", whose end moves with its start); a document that
  writes a decade or a census year moves by one shift of tens, as before;
* a gap of one year never changes ("the 1990–91 season", "the following year"), and every other by at most
  a quarter of its length (:data:`SHARE`, at least one year, at most :data:`MAX_STEP`), so no span of years
  changes by more than a quarter of its length: a life of 80 years stays between 60 and 100;
* a life (a person's birth and death) stays within ``plausible_dates.HUMAN_SPAN`` years.

The map is drawn as offsets from the first year (:meth:`YearPlan.offsets`, from the project's seeding: a
hash of seed, title and attempt); ``numtime.document_shift`` then draws the first year's shift among those
the floors and bounds of ``plausible_dates`` allow with these offsets (each year checked against its own),
and a year between two written ones moves as the straight line between them does (``numtime.offset_at``).
Months and days keep their one cyclic shift, so intervals in days, weeks and months within a year behave as
before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from envbench.core.seeding import derive_seed
from envbench.rename.numtime import offset_at, short_span
from envbench.rename.plausible_dates import HUMAN_SPAN

MAX_STEP = 5  # the most years one gap between two written years grows or shrinks
SHARE = 4  # no span of written years changes by more than this part of its length (at least one year)
TRIES = 8  # draws of the offsets before a life past HUMAN_SPAN leaves the years under one shift

Range = tuple[int, int]
Offsets = tuple[tuple[int, int], ...]


def _limit(distance: int) -> int:
    """How far a span of ``distance`` years may grow or shrink: a quarter of it, at least one year (none for
    one year)."""
    return 0 if distance < 2 else max(1, distance // SHARE)


@dataclass(frozen=True)
class YearPlan:
    """Which gaps between a document's written years may stretch, and the lives that bound them."""

    years: tuple[int, ...] = ()  # the document's distinct written years, sorted
    free: frozenset[int] = frozenset()  # gap i, between years[i] and years[i + 1], may stretch
    lives: tuple[Range, ...] = ()  # (birth, death) years of the document's persons

    def offsets(self, *keys: object) -> Offsets:
        """(year, offset) for each written year, the first at 0, drawn from ``keys`` (seed, title, attempt):
        each free gap grows or shrinks by at least one year, within :func:`_limit` of its own length and of
        every span of years it is part of; () when no gap is free or no draw keeps every life within
        ``HUMAN_SPAN`` (the years then move by one shift)."""
        if not self.free:
            return ()
        ys = self.years
        for t in range(TRIES):
            offs = [0]
            for j in range(1, len(ys)):
                prev = offs[-1]
                if j - 1 not in self.free:
                    offs.append(prev)
                    continue
                # every earlier year bounds this one's offset: the span between them changes by at most its limit
                step = min(MAX_STEP, _limit(ys[j] - ys[j - 1]))
                lo = max(prev - step, *(offs[i] - _limit(ys[j] - ys[i]) for i in range(j)))
                hi = min(prev + step, *(offs[i] + _limit(ys[j] - ys[i]) for i in range(j)))
                choices = [o for o in range(lo, hi + 1) if o != prev]
                offs.append(choices[derive_seed("year-gap", *keys, j, t) % len(choices)] if choices else prev)
            out = tuple(zip(ys, offs, strict=True))
            if all(_life(b, d, out) <= HUMAN_SPAN for b, d in self.lives if d - b <= HUMAN_SPAN):
                return out
        return ()


def _life(birth: int, death: int, offsets: Offsets) -> int:
    return death - birth + offset_at(offsets, death) - offset_at(offsets, birth)


def plan_years(years: Iterable[int], tens: bool, stretch: Sequence[Range], rigid: Sequence[Range],
               lives: Sequence[Range] = ()) -> YearPlan:
    """The :class:`YearPlan` of a document's written ``years``: a gap is free when it lies inside a
    ``stretch`` range, touches the inside of no ``rigid`` range and is two years or more; none is when the
    years move by tens (``tens``: a decade or a census year is written)."""
    ys = tuple(sorted(set(years)))
    if tens:
        return YearPlan(ys, frozenset(), tuple(lives))
    free = frozenset(i for i in range(len(ys) - 1) if ys[i + 1] - ys[i] >= 2
                     and any(a <= ys[i] and ys[i + 1] <= b for a, b in stretch)
                     and not any(ys[i] < b and ys[i + 1] > a for a, b in rigid))
    return YearPlan(ys, free, tuple(lives))


_YEAR_TOKEN = re.compile(r"^(1[0-9]{3}|20[0-9]{2})(?:([–-])(1[0-9]{3}|20[0-9]{2}))?$")  # "2011", "2009–2010"


def year_pairs(old: Sequence[str], new: Sequence[str]) -> list[tuple[int, int]]:
    """(old year, new year) of each year token a renamed TIME name moved ("February 2011" -> "January 1992":
    (2011, 1992)); none where the token count changed."""
    if len(old) != len(new):
        return []
    out = []
    for a, b in zip(old, new, strict=True):
        ma, mb = _YEAR_TOKEN.match(a), _YEAR_TOKEN.match(b)
        if ma and mb and not ma.group(2) and not mb.group(2):
            out.append((int(a), int(b)))
    return out


def move_years(tokens: Sequence[str], pairs: Sequence[tuple[int, int]]) -> tuple[str, ...]:
    """``tokens`` with each year ("2009", and both ends of "2009–2010", "2011–12" and "2011 - 12") moved as the document's years moved:
    by the change of the nearest year the document writes as a date (``pairs`` from :func:`year_pairs`; the
    lower on a tie), so a name kept around a shifted date keeps its distance to it ("Following 2009–2010
    Iranian election protests , ... in February 2011" renamed "... in January 1992" reads "Following
    1990–1991 ... protests"). Unchanged without pairs."""
    if not pairs:
        return tuple(tokens)
    moves = sorted(dict(sorted(pairs)).items())

    def moved(year: int) -> int:
        old, new = min(moves, key=lambda p: (abs(p[0] - year), p[0]))
        return year + new - old
    out: list[str] = []
    for i, tok in enumerate(tokens):
        m = _YEAR_TOKEN.match(tok)
        if m is not None and m.group(2):
            out.append(f"{moved(int(m.group(1)))}{m.group(2)}{moved(int(m.group(3)))}")
        elif m is not None:
            out.append(str(moved(int(tok))))
        elif (span := short_span(tokens, i)) is not None:
            # a short end moves with its start: "2011–12" -> "1982–83", "2011 - 12 ACT Budget" -> "1982 - 83"
            start, short, dash = span
            end = f"{(int(short) + moved(start) - start) % 100:02d}"
            out.append(end if dash is None else f"{moved(start)}{dash}{end}")
        else:
            out.append(tok)
    return tuple(out)


__all__ = ["MAX_STEP", "SHARE", "Offsets", "YearPlan", "move_years", "plan_years", "year_pairs"]
