"""An adjective and the place it names: "an American writer ... in the United States" names one country.

Re-DocRED often annotates a country's adjective and its name in one document as two entities ("American"
and "United States"), and the offline KB (``kb-from-corpus``) links them to two items: the place, and a
KB-made item of the class "demonym of a country". Drawn apart, as the paper draws every entity, the two
named two countries: "an American writer ... in the United States" became "a Nepalese writer ... in the State
of Qatar" in 590 of the 630 such pairs of the lock (2,500 renamed documents of Re-DocRED test; 109 with
the rule: `bench/adjectives.py`).

The rule (:func:`adjectives_of` finds the pairs; ``engine.settle_linked`` draws them):

* an entity every name of which is a demonym (P1549) of the item of another entity of its document, or the
  regular plural of one ("Americans"), is that entity's *adjective*; the place must have a name that is no
  such form, and be the only entity of the document whose item's demonyms give every name;
* the adjective waits for its place, and the place draws for both: it prefers a candidate that gives each of
  the adjective's names an adjectival form (as the main path gives an adjectival mention of a country one),
  the adjective takes those forms (``derived``, its place in ``built_on``);
* where the place keeps its names, so does the adjective (``referent``: the two still agree); where no
  candidate of the place's windows gives the forms, the place takes its first fit and the adjective draws
  its own, as before.

On the main path the two are mostly linked to one item, and the same-item rule joins them already; this rule
joins them where the links differ.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from envbench.rename.demonyms import adjectival_names
from wikidata_index.index import Demonym

# the coarse types whose entities can be a place's adjective (a person's name is never a demonym)
ADJECTIVE_TYPES = frozenset({"LOC", "ORG", "MISC"})


def adjectives_of(names: Sequence[Sequence[str]], coarse: Sequence[str], qids: Sequence[str | None],
                  own: Mapping[str, Sequence[Demonym]], skip: Collection[int] = ()) -> dict[int, int]:
    """Adjective entity -> its place entity, for one document: ``names`` and ``coarse`` per entity, ``qids``
    their items, ``own`` the P1549 rows of those items, ``skip`` the entities other rules already pair (the
    overlap policy's, "the X" around "X", the entities of one item, the names built on names)."""
    places: dict[int, list[int]] = {}
    for j, q in enumerate(qids):
        if q is None or j in skip or coarse[j] not in ADJECTIVE_TYPES or not own.get(q):
            continue
        forms = own[q]
        if len(adjectival_names(names[j], forms)) == len(names[j]):
            continue  # no name of it is a noun: an adjective itself, whose place is another
        for a, qa in enumerate(qids):
            if (a == j or qa is None or qa == q or a in skip or coarse[a] not in ADJECTIVE_TYPES or not names[a]
                    or set(names[a]) & set(names[j])):
                continue
            if len(adjectival_names(names[a], forms)) == len(names[a]):
                places.setdefault(a, []).append(j)
    return {a: js[0] for a, js in sorted(places.items()) if len(js) == 1}


def adjectives_by_place(adjective_of: Mapping[int, int]) -> dict[int, tuple[int, ...]]:
    """Place entity -> its adjectives, in entity order."""
    out: dict[int, list[int]] = {}
    for a, j in sorted(adjective_of.items()):
        out.setdefault(j, []).append(a)
    return {j: tuple(a) for j, a in out.items()}


__all__ = ["ADJECTIVE_TYPES", "adjectives_by_place", "adjectives_of"]
