"""Places that contain each other: "born in Solingen , Germany" never becomes "born in Groton , Azerbaijan".

A document's gold triples say that one place lies inside another (P131, "located in the administrative
territorial entity", or P17, "country"). Drawn independently, as the paper draws every entity, the two
new places are almost never so placed, and a reader who knows either one sees the contradiction (about
nine in ten "A , B" pairs of the offline lock did). The engine keeps such pairs together:

- the outer place waits for its inner one (``Containment.waits``), so the inner place is drawn from its
  own class, as any entity is, preferring an item the index places somewhere the outer one can become;
- the outer place then tries, before its windows, the items that contain the inner one's new item (its
  ``containers``: the index's P131 and P17 values) and are of the outer place's own fine type;
- a place settled after one that contains it prefers a candidate inside that one's new item.

The index answers the containers, following the chain up (``MAX_STEPS``); on the offline KB they are the corpus's own gold triples, so the rule
can only move places the corpus places. Only LOC pairs count: an organisation "located in" a city is
not a place a reader checks against a map in the same way.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from envbench.formats.docred import Doc
from envbench.rename.fine_types import register_rows, sorted_unique

CONTAINED_IN = ("P131", "P17")  # located in the administrative territorial entity; country
PLACE_TYPES = ("LOC",)


@dataclass(frozen=True)
class Containment:
    """Which places of one document contain which (from its gold triples)."""

    # inner entity -> the entities the gold triples put it in, sorted
    outers: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    # outer entity -> the entities the gold triples put in it, sorted
    inners: Mapping[int, tuple[int, ...]] = field(default_factory=dict)

    @functools.cached_property
    def placed(self) -> frozenset[int]:
        """The entities of some pair, inner or outer."""
        return frozenset(self.outers) | frozenset(self.inners)


def containment(doc: Doc, coarse: Sequence[str]) -> Containment:
    """The place pairs of ``doc`` whose gold triples put one inside the other (both ``PLACE_TYPES``); a pair
    the triples state both ways (a corpus error) is left out, since neither order could hold."""
    pairs = {(lab["h"], lab["t"]) for lab in doc.get("labels") or [] if lab.get("r") in CONTAINED_IN
             and lab["h"] != lab["t"] and 0 <= lab["h"] < len(coarse) and 0 <= lab["t"] < len(coarse)
             and coarse[lab["h"]] in PLACE_TYPES and coarse[lab["t"]] in PLACE_TYPES}
    pairs = {(a, b) for a, b in pairs if (b, a) not in pairs}
    outers: dict[int, list[int]] = {}
    inners: dict[int, list[int]] = {}
    for a, b in sorted(pairs):
        outers.setdefault(a, []).append(b)
        inners.setdefault(b, []).append(a)
    return Containment({a: tuple(v) for a, v in outers.items()}, {b: tuple(v) for b, v in inners.items()})


# steps up the P131/P17 chain: Wikidata places a town in its county, the county in its state, the state in
# its country ("Groton" -> New London County -> Connecticut -> United States), and "Groton , Connecticut"
# is a pair of the first and the third
MAX_STEPS = 4


def fetch_containers(con: Any, qids: Iterable[str]) -> dict[str, frozenset[str]]:
    """The items each of ``qids`` lies in by the index: its ``CONTAINED_IN`` values, theirs, and so on up to
    ``MAX_STEPS`` steps; items with none are absent."""
    wanted = sorted_unique(qids)
    if not wanted:
        return {}
    register_rows(con, "_pl_places", ((q,) for q in wanted), {"id": "VARCHAR"})
    props = ", ".join(f"'{p}'" for p in CONTAINED_IN)
    out: dict[str, set[str]] = {}
    for s, o in con.execute(
            f"""WITH RECURSIVE up(start, item, steps) AS (
                    SELECT e.subject, e.object, 1 FROM edges e SEMI JOIN _pl_places i ON e.subject = i.id
                    WHERE e.property IN ({props}) AND e.object IS NOT NULL
                    UNION
                    SELECT u.start, e.object, u.steps + 1 FROM up u JOIN edges e ON e.subject = u.item
                    WHERE e.property IN ({props}) AND e.object IS NOT NULL AND u.steps < {MAX_STEPS})
                SELECT DISTINCT start, item FROM up WHERE item <> start""").fetchall():
        out.setdefault(s, set()).add(o)
    return {q: frozenset(v) for q, v in out.items()}


def inside(cand: str, outer: str, containers: Mapping[str, frozenset[str]]) -> bool:
    """Whether the index places ``cand`` in ``outer`` (one step: the corpus KB states a city's country directly)."""
    return outer in containers.get(cand, frozenset())


__all__ = ["CONTAINED_IN", "MAX_STEPS", "Containment", "containment", "fetch_containers", "inside"]
