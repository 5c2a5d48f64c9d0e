"""Demonym-aware pairing: an adjectival mention ("American") becomes an adjectival name ("Danish").

DocRED annotates demonyms as mentions of the country ("the debut album by American rock musician"),
so pairing them with the new item's noun names gives "by Denmark rock musician". The rule
(:func:`pair_item_names`), over the P1549 (demonym) statements of the index:

* a mention name whose folded form (``wikidata_index.names.fold``) is an English demonym of the
  entity's own item, in any grammatical form, is a *demonym name*;
* the demonym names pair (``substitute.pair_names``) with the new item's usable demonyms
  (:func:`usable_demonyms`: English, plural forms (Q146786) left out, preferred rank first, one per
  folded form), the first of them in the place of the label; a new item with too few is not a
  candidate for that entity (:data:`NO_DEMONYM`), and when no candidate of the entity's draws had
  one the entity is kept with ``KeptReason.NO_DEMONYM``;
* every other name pairs with the new item's label and aliases, leaving out its demonyms, so a noun
  mention ("United States") never becomes an adjective ("Danish"); when the new item's label is one
  of its demonyms, its first noun alias (aliases are sorted) stands in for the label, and an item
  with no noun name cannot take noun names (not a candidate).

Examples: the entity {"United States", "American"} of Q30 and the candidate Q35 (label "Denmark",
aliases "Danmark", "Danish"; demonym "Danish") pair as "United States" -> "Denmark" and "American"
-> "Danish". The same entity and a candidate without a P1549 statement: not a candidate. The entity
{"Italy"} and a candidate whose alias "Italian" is a demonym: "Italy" -> the label, never "Italian".

An index without a ``demonyms`` table (older than P1549) knows no demonyms: no name is a demonym
name and every candidate pairs as before.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from envbench.rename.substitute import NewName, pair_names
from wikidata_index.index import DEMONYM_LANGUAGE, Demonym, demonyms_of
from wikidata_index.names import fold

PLURAL = "Q146786"  # P518 "plural": "Americans" is not an adjective


class _NoDemonym:
    """The answer of :func:`pair_item_names` when the candidate lacks the demonyms the entity needs."""

    def __repr__(self) -> str:
        return "NO_DEMONYM"


NO_DEMONYM = _NoDemonym()

_fold = functools.lru_cache(maxsize=1 << 16)(fold)


def usable_demonyms(rows: Sequence[Demonym]) -> tuple[str, ...]:
    """The demonym texts a mention may take, in preference order: plural forms left out, preferred
    rank first (then the order given, which ``demonyms_of`` sorts by text), one per folded form."""
    seen: set[str] = set()
    out: list[str] = []
    for d in sorted(rows, key=lambda d: d.rank != "preferred"):  # stable: keeps the given order within a rank
        if d.form == PLURAL or d.folded in seen or not d.text.strip():
            continue
        seen.add(d.folded)
        out.append(d.text)
    return tuple(out)


def fetch_demonyms(con: Any, qids: Iterable[str]) -> dict[str, tuple[Demonym, ...]]:
    """English P1549 rows of each of ``qids`` that has any (an index without the table: {})."""
    import duckdb

    try:
        return {q: tuple(rows) for q, rows in demonyms_of(con, qids).items()}
    except duckdb.CatalogException:  # a bare connection without the index's views knows no demonyms
        return {}


def knows_demonyms(con: Any) -> bool:
    """Whether the index has any English P1549 row (an index built before P1549, or from a KB
    without demonyms, has none: then no draw needs to ask)."""
    import duckdb

    try:
        rows = con.execute("SELECT EXISTS (SELECT 1 FROM demonyms WHERE lang = ?)", [DEMONYM_LANGUAGE]).fetchall()
        return bool(rows[0][0])  # fetchall: a result left unfinished would block the connection
    except duckdb.CatalogException:
        return False


def demonym_names(originals: Sequence[str], own: Sequence[Demonym]) -> list[str]:
    """The mention names that are demonyms (any form) of the entity's own item, in the given order."""
    if not own:
        return []
    folded = {d.folded for d in own}
    return [nm for nm in originals if _fold(nm) in folded]


def pair_item_names(originals: Sequence[str], own: Sequence[Demonym], label: str, aliases: Sequence[str],
                    demonyms: Sequence[Demonym],
                    tokens: Mapping[str, Sequence[str]] | None = None) -> dict[str, NewName] | _NoDemonym | None:
    """Each original name's new name under the rule of the module docstring.

    ``own`` are the P1549 rows of the entity's item, ``demonyms`` those of the candidate. Returns
    :data:`NO_DEMONYM` when the entity has demonym names the candidate cannot serve, None when the
    candidate has too few other names (as ``pair_names``). ``tokens``: the original names' document
    tokens, as ``pair_names`` takes them.
    """
    if not own and not demonyms:  # most entities and candidates: plain alias-wise pairing
        return pair_names(originals, label, aliases, tokens)
    adjectival = demonym_names(originals, own)
    nouns = [nm for nm in originals if nm not in set(adjectival)]
    cand_folded = {d.folded for d in demonyms}
    out: dict[str, NewName] = {}
    if adjectival:
        usable = usable_demonyms(demonyms)
        if len(usable) < len(adjectival):
            return NO_DEMONYM
        paired = pair_names(adjectival, usable[0], usable[1:], tokens)
        if paired is None:
            return NO_DEMONYM
        out.update(paired)
    if nouns:
        kept = [a for a in aliases if _fold(a) not in cand_folded] if cand_folded else list(aliases)
        if cand_folded and _fold(label) in cand_folded:  # its label is an adjective ("Danish")
            if not kept:
                return None  # no noun name to give
            label, kept = kept[0], kept[1:]  # its first noun alias stands in for the label
        paired = pair_names(nouns, label, kept, tokens)
        if paired is None:
            return None
        out.update(paired)
    return out


__all__ = ["NO_DEMONYM", "PLURAL", "demonym_names", "fetch_demonyms", "knows_demonyms", "pair_item_names",
           "usable_demonyms"]
