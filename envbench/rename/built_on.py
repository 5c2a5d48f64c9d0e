"""Names built on other names: "USS Lyndon B. Johnson" beside "Lyndon B. Johnson" follows it.

A *builder* is an entity a name of which holds a name of another entity of the document (its
*leader*) as a shorter run of whole tokens: "USS Lyndon B. Johnson" holds "Lyndon B. Johnson", "The
Avery Fisher Career Grant" holds "Avery Fisher", "Lee Hall" holds "Lee", "Royal Canadian Air Force"
holds "Canadian". Renamed one without the other, the document falls apart: "The Avery Fisher Career
Grant , established by Lino S. Cayetano", "the first shōgun of the Ashikaga Shogunate , Tokugawa
Ieyasu". So a builder draws no item of its own; it *follows* its leaders (:func:`derive`): each run
takes the new name its leader's name took ("USS Comte de Boulainvilliers", "Smith Hall", "Royal Qatari
Air Force"), and the builder's other names stay as written (a derived entity, ``kind`` "derived" in
``substitutions.parquet``, with its leaders in ``built_on``). When no run changes (every leader kept its
names), the builder keeps its names too (``built_on``): both are kept, as the original has them.

What counts as a run (:func:`embedded_names`), on the document's tokens of each name, case as written:

* the builder and the leader are different entities of different items (two entities of one item
  follow the same-item rule instead), neither NUM nor TIME (numbers and dates follow their own rules),
  and the builder is none of the entities other rules already pair (the overlap policy's, the "the X"
  around "X" pairs, the same-item entities: ``skip``);
* a one-word name of a leader that is no person counts only where it is capitalised and is not the
  head noun of a longer name of its own entity ("Games" of "Commonwealth Games", "House" of "Texas House
  of Representatives", "Palace" of "Tokyo Imperial Palace" are kind words, not names: "British House of
  Commons" holds no "House"), nor where it is the builder's own head noun before "of" ("Shire of Murray"
  holds no "Shire", which Re-DocRED annotates as a place of its own in "The Shire is centred on Pinjarra");
* inside a person's name, only a surname or a full name at its end counts (before a generational
  suffix: "Paul Desmarais Jr."): another person's full name, or its surname (a one-word name of that
  person that ends a longer one, "Puskás" of "Ferenc Puskás" in "Zoltán Puskás"), or a place after "of"
  ("Philip V of Spain"); never a given name ("Ferdinand" in "Ferdinand I") nor a place that is a name
  ("Washington" in "George Washington");
* the longest runs win and do not overlap; a run that names two entities (two people called "Puskás")
  names neither;
* a builder's name that is a whole name of an entity it follows is that name too: "Villanova" of
  "Villanova Preparatory School" beside the place "Villanova" follows the place.

A builder may lead another builder ("Avery Fisher Hall Orchestra" holds "Avery Fisher Hall", which holds
"Avery Fisher"): builders are settled after every other entity, each after its leaders
(:func:`builder_order`); a circle of builders (rare: each holds a shorter name of the other) is broken by
leaving out the runs whose leader has not settled.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from envbench.core.heads import name_head
from envbench.core.kind_nouns import FUNCTION_WORDS
from envbench.rename.substitute import PARTICLES, NewName

RULE_TYPES = frozenset({"NUM", "TIME"})
# words that may follow a person's surname or full name inside a longer person's name ("Paul Desmarais Jr.")
_SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"})
_ARTICLES = frozenset({"the", "The"})
# first words that make a name of its own of the name after them (``embedded_names``)
_NEW_OR_PART = frozenset({"New", "Nova", "Novo", "Nueva", "Nuevo", "Nouvelle", "Nouveau", "Neu", "Nieuw", "North",
                          "South", "East", "West", "Northern", "Southern", "Eastern", "Western", "Central", "Upper",
                          "Lower", "Greater", "Old", "Middle", "Ancient", "Classical", "Modern"})
# the head of a polity's or a town's formal name, before "of" ("State of Qatar", "City of Baltimore"): a
# builder that writes more words beside the run takes the name after "of" ("Qatar Supreme Court"), and the
# words that may come before that head ("Democratic Republic of the Congo", "United Kingdom of ...")
_POLITY_HEADS = frozenset({"State", "Republic", "Kingdom", "Commonwealth", "Federation", "Principality", "Sultanate",
                           "Emirate", "Empire", "Duchy", "City", "Town", "Municipality", "Borough",
                           "County", "Province"})
_POLITY_WORDS = _POLITY_HEADS | {"Democratic", "People's", "Islamic", "Federal", "Socialist", "United", "Grand",
                                 "Free", "Independent", "Arab", "Plurinational", "Bolivarian", "Hashemite", "The",
                                 "the"}


@dataclass(frozen=True)
class Embedded:
    """One run of a builder's name: tokens ``start``..``end`` of the name are the ``leader``'s name ``name``."""

    start: int
    end: int
    leader: int
    name: str


# builder -> {its name -> the runs in it, in token order}
BuiltOn = dict[int, dict[str, tuple[Embedded, ...]]]


def _surname_of(name: str, names: Sequence[str]) -> bool:
    """Whether a one-word person's name ends a longer name of the same person ("Puskás" of "Ferenc Puskás")."""
    return any(len(o.split()) > 1 and o.split()[-1] == name for o in names if o != name)


def _is_kind_word(name: str, names: Sequence[str]) -> bool:
    """Whether a one-word name is the head noun of a longer name of its own entity ("Games" of
    "Commonwealth Games"): a kind word, not a name."""
    low = name.casefold()
    return any(o != name and name_head(o) in (low, low.rstrip("s")) for o in names)


def embedded_names(names: Sequence[Sequence[str]], tokens: Sequence[Mapping[str, Sequence[str]]],
                   coarse: Sequence[str], qids: Sequence[str | None], skip: Iterable[int]) -> BuiltOn:
    """The builders of a document and the runs in their names (the module docstring's rule).

    ``names`` are each entity's distinct names, ``tokens`` each name's tokens in the document, ``coarse``
    the entities' DocRED types, ``qids`` their items (None: unlinked); ``skip`` the entities that are no
    builder (paired by another rule)."""
    leaders: dict[tuple[str, ...], set[tuple[int, str]]] = {}
    for b, own in enumerate(names):
        if coarse[b] in RULE_TYPES:
            continue
        for y in own:
            ty = tuple(tokens[b][y])
            if not ty or not any(ch.isalnum() for t in ty for ch in t):
                continue
            if len(ty) == 1 and coarse[b] != "PER" and (not ty[0][:1].isupper() or _is_kind_word(y, own)):
                continue
            leaders.setdefault(ty, set()).add((b, y))
    if not leaders:
        return {}
    longest = max(len(k) for k in leaders)
    skipped = frozenset(skip)
    out: BuiltOn = {}
    for a, own in enumerate(names):
        if a in skipped or coarse[a] in RULE_TYPES:
            continue
        found: dict[str, tuple[Embedded, ...]] = {}
        for x in own:
            tx = tuple(tokens[a][x])
            runs = _runs(a, tx, leaders, longest, names, coarse, qids)
            # the head noun before "of" is the builder's kind word, no name it holds: "The Shire is centred on
            # Pinjarra" beside "Shire of Murray" had read "The South Gaya" and "South Gaya of Murray", and "Texas
            # House of Representatives" beside "House" "Kansas Seventy - ninth Congress of Representatives"
            runs = tuple(r for r in runs if not (r.end - r.start == 1 and tx[r.end:r.end + 1] == ("of",)
                                                 and name_head(x) == tx[r.start].casefold()))
            if runs and tx[0] in _NEW_OR_PART and runs[0].start == 1 and runs[0].end == len(tx):
                # "New England", "Nova Scotia", "East Germany", "South Korean", "Classical Chinese": a place, a
                # people or a language named by a word and another name is one of its own; beside "England" renamed
                # "Italian Social Republic" it had read "the New Italian Social Republic", and "a South Andorran
                # talk show", "rather than in Classical Andorran"
                runs = runs[1:]
            if runs:
                found[x] = runs
        if found:
            # a name of the builder that is a name of one it follows is that name ("Villanova" of "Villanova
            # Preparatory School", beside the place "Villanova")
            followed = {r.leader for runs in found.values() for r in runs}
            for x in own:
                tx = tuple(tokens[a][x])
                same = {(b, y) for b in followed for y in names[b] if x not in found and tuple(tokens[b][y]) == tx}
                if len({b for b, _ in same}) == 1:
                    (b, y), = same if len(same) == 1 else sorted(same)[:1]
                    found[x] = (Embedded(0, len(tx), b, y),)
            out[a] = found
    return out


def _runs(a: int, tx: tuple[str, ...], leaders: Mapping[tuple[str, ...], set[tuple[int, str]]], longest: int,
          names: Sequence[Sequence[str]], coarse: Sequence[str], qids: Sequence[str | None]) -> tuple[Embedded, ...]:
    """The runs of builder ``a``'s name ``tx``: longest first, not overlapping, each naming one entity."""
    taken = [False] * len(tx)
    runs: list[Embedded] = []
    for size in range(min(longest, len(tx) - 1), 0, -1):
        for i in range(len(tx) - size + 1):
            if any(taken[i:i + size]):
                continue
            hits = {(b, y) for b, y in leaders.get(tx[i:i + size], ()) if b != a and (qids[a] is None or qids[a] != qids[b])}
            if len({b for b, _ in hits}) != 1:
                continue  # no leader, or two entities of one name: it names neither
            (b, y), = sorted(hits)[:1]
            if coarse[a] == "PER" and not _fits_person(tx, i, i + size, b, y, names, coarse):
                continue
            runs.append(Embedded(i, i + size, b, y))
            taken[i:i + size] = [True] * size
    return tuple(sorted(runs, key=lambda r: r.start))


def _fits_person(tx: tuple[str, ...], i: int, j: int, b: int, y: str, names: Sequence[Sequence[str]],
                 coarse: Sequence[str]) -> bool:
    """Whether run ``i``..``j`` of a person's name may follow entity ``b``'s name ``y``: a person's full
    name or surname at the end of the name (a suffix after it aside), or a place after "of"."""
    if coarse[b] != "PER":
        return i > 0 and tx[i - 1] == "of"
    if any(t.casefold() not in _SUFFIXES for t in tx[j:]):
        return False  # a given name ("Ferdinand" of "Ferdinand I") or a name in the middle
    return j - i > 1 or (i > 0 and _surname_of(y, names[b]))


def builder_order(built_on: Mapping[int, Mapping[str, Sequence[Embedded]]]) -> list[int]:
    """The builders in the order they are settled: each after the builders it follows (by entity index
    among those ready); the members of a circle last, in index order."""
    needs = {a: {r.leader for runs in by_name.values() for r in runs if r.leader in built_on and r.leader != a}
             for a, by_name in built_on.items()}
    order: list[int] = []
    done: set[int] = set()
    while len(order) < len(needs):
        ready = sorted(a for a, n in needs.items() if a not in done and n <= done)
        if not ready:  # a circle: the rest in index order
            ready = sorted(a for a in needs if a not in done)
        for a in ready:
            order.append(a)
            done.add(a)
    return order


def _offsets(name: str, tokens: Sequence[str]) -> list[tuple[int, int]] | None:
    """Each token's character span in ``name``, or None when the name does not spell its tokens in order."""
    out: list[tuple[int, int]] = []
    pos = 0
    for t in tokens:
        at = name.find(t, pos)
        if at < 0 or name[pos:at].strip():
            return None
        out.append((at, at + len(t)))
        pos = at + len(t)
    return out if not name[pos:].strip() else None


# words that make a place's name the name of one regime of that place ("Nazi Germany", "Vichy France",
# "Soviet Russia", "Imperial Russian"): no other place takes them, so such a name follows no new name of its
# place ("from Nazi Germany" had read "from Nazi French Guiana"), and both keep theirs
REGIME_WORDS = frozenset({"Nazi", "Fascist", "Francoist", "Vichy", "Tsarist", "Soviet", "Imperial"})


def derive(name: str, tokens: Sequence[str], runs: Sequence[Embedded],
           plans: Mapping[int, Mapping[str, NewName]], person: bool = False) -> tuple[NewName, tuple[int, ...]] | None:
    """A builder's name ``name`` (document tokens ``tokens``) with each run written as its leader's new
    name (``plans``: entity -> {old name: new name}), and the leaders whose names changed; None when no
    run changes. The text keeps the old name's spacing around the runs; a new name that opens with "The"
    is written "the" inside the name after a lowercase word ("Anything For You in the Netherlands") and left out after a capitalised one
    ("The Great Escape" beside "Escape" renamed "The Black Cauldron": "The Great Black Cauldron"). In a ``person``'s name a
    one-word run is a surname, and takes the last word of a longer new name, with its particle ("Zoltán
    Puskás" beside "Puskás" renamed "Anna Smith": "Zoltán Smith"). The words a new name ends in that the
    builder writes right after the run, or opens with right before it, are written once ("Sire Records"
    beside "Sire" renamed "Warp Records": "Warp Records"; "River Kenn" beside "Kenn" renamed "River Clyst":
    "River Clyst"), and so is a word the builder writes on one side of the run that the new name has at its
    other end ("River Brosna" beside "Brosna" renamed "Hudson River": "Hudson River"). A run right after a
    word of ``REGIME_WORDS`` takes no new name: None ("Nazi Germany")."""
    if any(r.start > 0 and tokens[r.start - 1] in REGIME_WORDS for r in runs):
        return None
    offsets = _offsets(name, tokens)
    new_tokens: list[str] = []
    text: list[str] = []
    used: list[int] = []
    cursor = 0  # token
    at = 0  # character
    for r in runs:
        nn = plans.get(r.leader, {}).get(r.name)
        if nn is None or tuple(tokens[r.start:r.end]) == nn.tokens:
            continue
        toks = nn.tokens
        written = nn.name
        if person and r.end - r.start == 1 and len(toks) > 1:
            toks = toks[-2:] if len(toks) > 2 and toks[-2] in PARTICLES else toks[-1:]
            written = " ".join(toks)
        if r.start > 0 and toks and toks[0] in _ARTICLES and len(toks) > 1:
            if tokens[r.start - 1][:1].islower():  # after a word of the sentence's own: "in the Netherlands"
                toks = ("the", *toks[1:])
                written = "the" + written[3:] if written.startswith("The") else written
            else:  # inside a title: "The Great Escape" with "Escape" renamed "The Black Cauldron"
                toks = toks[1:]
                written = written.split(" ", 1)[1] if " " in written else written
        # only a doubling the new name makes, never one the builder writes itself ("Birch Alder Alder")
        k = _doubled(toks, tokens[r.end:]) if r.end >= len(tokens) or tokens[r.end - 1] != tokens[r.end] else 0
        if k:  # "Sire Records" beside "Sire" renamed "Warp Records": "Warp Records", never "Warp Records Records"
            toks = toks[:-k]
            words = written.split(" ")
            written = " ".join(words[:-k]) if len(words) > k else " ".join(toks)
        k = _doubled(toks[::-1], tokens[:r.start][::-1]) if r.start == 0 or tokens[r.start - 1] != tokens[r.start] \
            else 0
        if k:  # "River Kenn" beside "Kenn" renamed "River Clyst": "River Clyst", never "River River Clyst"
            toks = toks[k:]
            words = written.split(" ")
            written = " ".join(words[k:]) if len(words) > k else " ".join(toks)
        # a kind word the builder writes on the other side of the run, which the new name has at its far end,
        # is written once as well: "River Brosna" beside "Brosna" renamed "Hudson River" reads "Hudson River",
        # never "River Hudson River"; "Oxford University" beside "Oxford" renamed "University of Wyoming" reads
        # "University of Wyoming", "County Laois" beside "Laois" renamed "Westchester County" "Westchester County"
        start, end = r.start, r.end
        if len(toks) > 1 and start - 1 >= cursor and toks[-1].casefold() == tokens[start - 1].casefold():
            start -= 1
        elif len(toks) > 1 and end < len(tokens) and toks[0].casefold() == tokens[end].casefold():
            end += 1
        if _words_beside(tokens, start, end) and "of" in toks and "of" not in tokens[r.start:r.end]:
            # "United States Supreme Court" beside "United States" renamed "State of Qatar" reads "Qatar Supreme
            # Court", never "State of Qatar Supreme Court"; a name with "of" that is no polity's has no form
            # to write there ("Secretariat of the Lok Sabha discriminatory laws"): this run is not taken, and
            # its leader keeps its name with the builder (``engine.settle_built_on``)
            short = _after_polity_head(toks, written)
            if short is None:
                continue
            toks, written = short
        new_tokens += [*tokens[cursor:start], *toks]
        if offsets is not None:
            text.append(name[at:offsets[start][0]] + written)
            at = offsets[end - 1][1]
        cursor = end
        used.append(r.leader)
    if not used:
        return None
    new_tokens += tokens[cursor:]
    written_name = "".join(text) + name[at:] if offsets is not None else " ".join(new_tokens)
    return NewName(written_name, tuple(new_tokens)), tuple(sorted(set(used)))


def _words_beside(tokens: Sequence[str], start: int, end: int) -> bool:
    """Whether the builder writes a word right beside the run (tokens ``start``..``end``), which the run's name then modifies or is
    modified by ("Nazi Germany", "United States Supreme Court", "Jim Crow discriminatory laws"); a dash, a
    slash or a small word ("IBM Research – Brazil", "Microserfs for the Google generation") leaves the run a
    name of its own."""
    beside = [tokens[i] for i in (start - 1, end) if 0 <= i < len(tokens)]
    return any(any(c.isalnum() for c in t) and t.casefold() not in FUNCTION_WORDS for t in beside)


def _after_polity_head(toks: Sequence[str], written: str) -> tuple[tuple[str, ...], str] | None:
    """A polity's or town's formal name less its head and "of" ("State of Qatar" -> "Qatar", "Democratic
    Republic of the Congo" -> "Congo"), as tokens and text; None for any other name ("University of Warsaw")."""
    k = list(toks).index("of")
    head = toks[:k]
    if not head or head[-1] not in _POLITY_HEADS or any(w not in _POLITY_WORDS for w in head):
        return None
    rest = tuple(toks[k + 1:])
    rest = rest[1:] if rest[:1] in (("the",), ("The",)) else rest
    text = written.split(" of ", 1)[1] if " of " in written else " ".join(rest)
    text = text[4:] if text.startswith(("the ", "The ")) else text
    return (rest, text) if rest and text else None


def _doubled(new: Sequence[str], after: Sequence[str]) -> int:
    """How many last words of a leader's new name the builder's name writes again right after the run
    (case aside), the new name keeping one word at least: 1 for "Warp Records" before "Records" (and, both
    reversed, the first words it writes right before the run: "River" of "River Clyst" after "River")."""
    for k in range(min(len(new) - 1, len(after)), 0, -1):
        if [w.casefold() for w in new[-k:]] == [w.casefold() for w in after[:k]]:
            return k
    return 0


@functools.lru_cache(maxsize=1 << 12)
def _holds(outer: tuple[str, ...], inner: tuple[str, ...]) -> bool:
    n = len(inner)
    return 0 < n < len(outer) and any(outer[i:i + n] == inner for i in range(len(outer) - n + 1))


def holds(outer: Sequence[str], inner: Sequence[str]) -> bool:
    """Whether the tokens ``outer`` hold ``inner`` as a shorter run of whole tokens ("Lee Hall" holds "Lee")."""
    return _holds(tuple(outer), tuple(inner))


__all__ = ["RULE_TYPES", "BuiltOn", "Embedded", "builder_order", "derive", "embedded_names", "holds"]
