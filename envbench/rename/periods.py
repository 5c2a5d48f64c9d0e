"""Named periods in TIME names: eras, ages and weekdays written as words move along a ladder.

A TIME name with no number ("the Middle Ages", "Pleistocene", "Tuesdays") held nothing the
year/month/day rules of ``numtime`` could move, so the entity kept its name (``no_rule``). The rule:

* a *ladder* (:data:`LADDERS`) is a list of rungs in time order; a rung is the spellings of one period
  ("medieval", "mediaeval"), and some ladders only count a rung followed by one of their words
  ("Heian" in "Heian period", "Stone" in "Late Stone Age", "Second" in "Second Temple period"), which
  stays as written;
* the eras and ages of a renamed document all move one rung in the direction of the document's year
  shift, as centuries do (``numtime``), so "the Torrejonian is preceded by the Puercan" keeps its order
  and "Neolithic ( Late Stone Age )" reads "Chalcolithic ( Late Bronze Age )"; at the end of a ladder a
  rung moves the other way. A period of recorded history (English, European and Japanese periods and
  eras: :attr:`Ladder.years`) moves so only in a document that writes no year: beside years it stays,
  and the document's year shift keeps those years inside it (``plausible_dates``), since "active in Elizabethan
  London from 1573" had read "active in Jacobean London from 1535";
* weekdays move by the document's weekday shift (1..6, cyclic), so "on Mondays and Tuesdays" reads
  "on Thursdays and Fridays";
* a span written "a year" is a duration, which keeps its length (``coherence``: "released almost a year
  after their self - titled EP" stays so, since the EP's date moved with the release's);
* a spelling keeps its form (the same variant of the new rung where it has one: "Tuesdays" ->
  "Fridays", "Palaeocene" -> "Eocene") and its case: a capital where the old name had one, lower case
  for a common word written so ("the mediaeval fortress" -> "the ancient fortress"), a proper name's
  capital always ("pre - Renaissance" -> "pre - Enlightenment").

What no ladder knows ("Pre - Columbian", "Great Depression", "Second Empire", "an hour", holidays)
still keeps its name. The ladders hold the periods Re-DocRED dev writes as TIME names, with their
neighbours, from the standard tables of geological time, the three-age system, the periods of
Japanese history, the Japanese era names of the 16th and 17th centuries and the English periods named
after monarchs.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from envbench.core.text import same_case


@dataclass(frozen=True)
class Ladder:
    """Periods in time order. ``rungs``: the spellings of each period (words separated by spaces);
    ``follow``: folded words one of which must come right after a rung for it to count (empty: none
    needed);
    ``cyclic``: the rungs wrap around (weekdays), moved by the document's weekday shift;
    ``years``: the first and last year of each rung, for periods of recorded history (the Edo period
    1603-1868), whose years a document may write beside them."""

    name: str
    rungs: tuple[tuple[str, ...], ...]
    follow: frozenset[str] = frozenset()
    cyclic: bool = False
    years: tuple[tuple[int, int], ...] = ()


def _ladder(name: str, rungs: str, follow: str = "", cyclic: bool = False, years: str = "") -> Ladder:
    """``rungs``: periods separated by ";", the spellings of one period by "/"; ``years``: "first-last" of
    each rung, separated by ";"."""
    return Ladder(name, tuple(tuple(s.strip() for s in r.split("/")) for r in rungs.split(";")),
                  frozenset(w.casefold() for w in follow.split()), cyclic,
                  tuple((int(a), int(b)) for a, b in (r.strip().split("-") for r in years.split(";"))) if years else ())


LADDERS: tuple[Ladder, ...] = (
    _ladder("geologic periods", "Cambrian; Ordovician; Silurian; Devonian; Carboniferous; Permian; Triassic; "
            "Jurassic; Cretaceous; Paleogene/Palaeogene; Neogene; Quaternary"),
    _ladder("geologic eras", "Paleozoic/Palaeozoic; Mesozoic; Cenozoic/Cainozoic"),
    _ladder("Cenozoic epochs", "Paleocene/Palaeocene; Eocene; Oligocene; Miocene; Pliocene; Pleistocene; Holocene"),
    _ladder("Paleogene ages", "Danian; Selandian; Thanetian; Ypresian; Lutetian; Bartonian; Priabonian; Rupelian; "
            "Chattian"),
    _ladder("North American land mammal ages", "Puercan; Torrejonian; Tiffanian; Clarkforkian; Wasatchian; "
            "Bridgerian; Uintan; Duchesnean; Chadronian; Orellan; Whitneyan; Arikareean; Hemingfordian; "
            "Barstovian; Clarendonian; Hemphillian; Blancan; Irvingtonian; Rancholabrean"),
    _ladder("Stone Age periods", "Paleolithic/Palaeolithic; Mesolithic; Neolithic; Chalcolithic"),
    _ladder("three ages", "Stone; Bronze; Iron", follow="Age Ages"),
    _ladder("European history", "Roman era; Middle Ages; Renaissance; Enlightenment",
            years="0-476; 500-1500; 1400-1600; 1685-1815"),
    _ladder("European history, as adjectives", "ancient; medieval/mediaeval; early modern",
            years="0-500; 500-1500; 1500-1800"),
    _ladder("English periods", "Elizabethan; Jacobean; Georgian; Victorian; Edwardian",
            years="1558-1603; 1603-1625; 1714-1837; 1837-1901; 1901-1914"),
    _ladder("Temple periods", "First; Second", follow="Temple"),
    _ladder("Japanese periods", "Jōmon/Jomon; Yayoi; Kofun; Asuka; Nara; Heian; Kamakura; Muromachi; Edo; "
            "Meiji; Taishō/Taisho; Shōwa/Showa; Heisei", follow="period periods era jidai",
            years="0-300; 0-300; 300-538; 538-710; 710-794; 794-1185; 1185-1333; 1336-1573; 1603-1868; 1868-1912; "
                  "1912-1926; 1926-1989; 1989-2019"),
    _ladder("Japanese eras", "Tenshō/Tensho; Bunroku; Keichō/Keicho; Genna; Shōhō/Shoho; Keian; Meireki; Manji; "
            "Kanbun; Enpō/Enpo; Tenna; Jōkyō/Jokyo; Genroku; Hōei/Hoei; Shōtoku/Shotoku; Kyōhō/Kyoho",
            follow="era", years="1573-1592; 1592-1596; 1596-1615; 1615-1624; 1644-1648; 1648-1652; 1655-1658; "
                                "1658-1661; 1661-1673; 1673-1681; 1681-1684; 1684-1688; 1688-1704; 1704-1711; "
                                "1711-1716; 1716-1736"),
    _ladder("times of day", "midnight; noon"),
    _ladder("weekdays", "Monday/Mondays; Tuesday/Tuesdays; Wednesday/Wednesdays; Thursday/Thursdays; "
            "Friday/Fridays; Saturday/Saturdays; Sunday/Sundays", cyclic=True),
)

@functools.cache
def _spellings() -> dict[str, tuple[tuple[tuple[str, ...], Ladder, int, int], ...]]:
    """Every spelling as folded words, with its ladder, rung and variant, by its first word; longest
    first, so "Middle Ages" is read before a one-word rung. (Every TIME name of every attempt is
    read, so a token costs one lookup.)"""
    by_first: dict[str, list[tuple[tuple[str, ...], Ladder, int, int]]] = {}
    for ladder in LADDERS:
        for r, rung in enumerate(ladder.rungs):
            for v, spelling in enumerate(rung):
                words = tuple(w.casefold() for w in spelling.split())
                by_first.setdefault(words[0], []).append((words, ladder, r, v))
    return {w: tuple(sorted(es, key=lambda e: -len(e[0]))) for w, es in by_first.items()}


def move_periods(tokens: Sequence[str], step: int, weekdays: int, eras: bool = True) -> list[str] | None:
    """``tokens`` with every period of a ladder moved: ``step`` (+1 or -1) rungs for an era or age,
    ``weekdays`` rungs for a weekday; None when the name holds no period. The new tokens may be more or
    fewer than the old ("Middle Ages" -> "Renaissance"). ``eras`` False: a period with years
    (``Ladder.years``) stays, as in a document that writes years, whose shift keeps them inside it."""
    moved = _moved(tuple(tokens), step, weekdays, eras)
    return list(moved) if moved is not None else None


def period_years(tokens: Sequence[str]) -> tuple[int, int] | None:
    """The years of the dated periods a name holds ("Edo period" 1603-1868, "Elizabethan London"
    1558-1603), first to last; None when it holds none."""
    folded = [t.casefold() for t in tokens]
    spans: list[tuple[int, int]] = []
    for i in range(len(folded)):
        hit = _match(folded, i) if folded[i] in _spellings() else None
        if hit is not None and hit[1].years:
            spans.append(hit[1].years[hit[2]])
    return (min(a for a, _ in spans), max(b for _, b in spans)) if spans else None


@functools.lru_cache(maxsize=1 << 16)  # every TIME name is renamed again on every attempt of its document
def _moved(tokens: tuple[str, ...], step: int, weekdays: int, eras: bool = True) -> tuple[str, ...] | None:
    folded = [t.casefold() for t in tokens]
    index = _spellings()
    if not any(w in index for w in folded):
        return None
    out: list[str] = []
    found = False
    i = 0
    while i < len(tokens):
        hit = _match(folded, i)
        if hit is None:
            out.append(tokens[i])
            i += 1
            continue
        n, ladder, rung, variant = hit
        found = True
        size = len(ladder.rungs)
        if ladder.years and not eras:
            out.extend(tokens[i:i + n])
            i += n
            continue
        if ladder.cyclic:
            new = (rung + weekdays) % size
        else:
            new = rung + step
            if not 0 <= new < size:
                new = rung - step
        spellings = ladder.rungs[new]
        words = spellings[variant if variant < len(spellings) else 0].split()
        out.extend(same_case(w, tokens[i]) if k == 0 else w for k, w in enumerate(words))
        i += n
    return tuple(out) if found else None


def _match(folded: Sequence[str], i: int) -> tuple[int, Ladder, int, int] | None:
    for words, ladder, rung, variant in _spellings().get(folded[i], ()):
        n = len(words)
        if tuple(folded[i:i + n]) != words:
            continue
        if ladder.follow and (i + n >= len(folded) or folded[i + n] not in ladder.follow):
            continue
        return n, ladder, rung, variant
    return None
