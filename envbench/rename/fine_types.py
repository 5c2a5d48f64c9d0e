"""Fine-grained entity types from an item's P31 values, and the matching rule for candidates.

Typing rule (:func:`fine_types`), per (item, DocRED coarse type) pair:

1. The item's P31 values, deprecated ones dropped. When some are ranked "preferred", only those
   count (Wikidata's best-rank rule), so a former type marked normal does not compete.
2. Consistent with the coarse type: the classes that fit the entity's coarse type (the class or a
   P279 ancestor is in ``COARSE_ROOTS[coarse]``; MISC, and a type without roots, take any class)
   are kept when at least one fits; when none fits, all are kept (the rule before this step), so
   a gold link to an oddly typed item still gets a type.
   Then a catch-all class (``envbench.core.types.CATCH_ALL_CLASSES``: entity, territorial entity,
   geographic location, organization, group of humans, ...) is dropped while another kept class
   remains; an item with catch-alls only keeps them, and its entity is kept (``generic_type``).
3. Most specific: a kept class is dropped when another kept class is its subclass (through the
   P279 closure); "city" wins over "human settlement" when an item has both.
4. Most frequent: among what remains the fine type is the class with the most instances in the
   index (so the entity gets the largest pool of same-type candidates); ties go to the smaller
   numeric QID, so the choice never depends on row order.

The fine type thus depends on the pair: an item linked as LOC in one document and as MISC in
another may get two fine types. Example, with the real P31 values of Germany (Q183) in the
Wikidata Toolkit sample dump (../shared/data/wikidata-samples) over a hand-made P279 fragment and
class sizes (``tests/envbench/rename/test_fine_types.py``): sovereign state (Q3624078), country
(Q6256), state (Q7275), member state of the United Nations (Q160016) and six more. Where "member
state of the United Nations" reaches no LOC root and has the most instances, steps 1, 3 and 4
alone type a LOC mention of Germany by UN membership, and a candidate needs to share only that
class. Step 2 drops it with the other non-geographic classes, "country" and "state" give way to
their subclass "sovereign state", and (Q183, LOC) is typed "sovereign state". As MISC nothing is
dropped in step 2, and (Q183, MISC) keeps "member state of the United Nations".

Matching rule: a candidate matches when its non-deprecated P31 values include the entity's fine
type. An item without P31 values has no fine type and is kept (reason ``"no_type"``).

Coarse compatibility (used by linking and by step 2): an item fits a DocRED coarse type when one
of its P31 classes, or a P279 ancestor of one, is in ``COARSE_ROOTS[type]``. MISC accepts any
typed item.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from envbench.core.errors import EnvbenchError
from envbench.core.types import CATCH_ALL_CLASSES

# Root classes per DocRED coarse type (real Wikidata QIDs; the sample world uses the first ones).
COARSE_ROOTS: dict[str, tuple[str, ...]] = {
    "PER": ("Q215627", "Q5", "Q95074", "Q15632617"),  # person, human, fictional character, fictional human
    "ORG": ("Q43229", "Q4830453", "Q2385804", "Q215380", "Q476028", "Q15911314"),
    # organization, business, educational institution, musical group, football club, association
    "LOC": ("Q2221906", "Q17334923", "Q618123", "Q56061", "Q486972", "Q82794", "Q1048835", "Q6256"),
    # geographic location, location, geographical feature, admin. territorial entity, human settlement,
    # region, political territorial entity, country
    "MISC": (),  # anything typed
}


def sorted_unique(items: Iterable[str]) -> list[str]:
    """``sorted(set(items))``, or ``items`` itself when it is a list in strictly increasing order
    already: a batch of 100,000 drawn QIDs is passed from lookup to lookup (names, types, closures),
    and re-sorting it each time from a set cost more than the lookups' Python side."""
    if isinstance(items, list) and all(a < b for a, b in zip(items, items[1:])):
        return items
    return sorted(set(items))


def register_rows(con: Any, name: str, rows: Iterable[tuple[Any, ...]], columns: Mapping[str, str]) -> None:
    """Load Python rows into a DuckDB temp table ``name`` (through Arrow, so large lists load fast)."""
    import pyarrow as pa

    data = list(rows)
    cols = list(columns)
    arrays = {c: [r[i] for r in data] for i, c in enumerate(cols)}
    types = {"VARCHAR": pa.string(), "BIGINT": pa.int64(), "INTEGER": pa.int32(), "UBIGINT": pa.uint64(),
             "BOOLEAN": pa.bool_()}
    register_table(con, name, pa.table({c: pa.array(arrays[c], type=types[columns[c]]) for c in cols}))


def register_table(con: Any, name: str, table: Any) -> None:
    """Copy an Arrow table into a DuckDB temp table ``name`` (replacing one of that name)."""
    con.register(f"_{name}_arrow", table)
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM _{name}_arrow")
    con.unregister(f"_{name}_arrow")


def item_types(con: Any, qids: Iterable[str]) -> dict[str, list[str]]:
    """Best-rank, non-deprecated P31 classes of each item (sorted); items without any are absent."""
    register_rows(con, "_ft_items", ((q,) for q in sorted_unique(qids)), {"id": "VARCHAR"})
    rows = con.execute(
        """SELECT t.id, t.class FROM types t SEMI JOIN _ft_items i ON t.id = i.id
           WHERE t.rank <> 'deprecated'
           QUALIFY (t.rank = 'preferred')::INT >= max((t.rank = 'preferred')::INT) OVER (PARTITION BY t.id)
           ORDER BY t.id, t.class"""
    ).fetchall()
    out: dict[str, list[str]] = {}
    for qid, cls in rows:
        lst = out.setdefault(qid, [])
        if not lst or lst[-1] != cls:
            lst.append(cls)
    return out


def all_types(con: Any, qids: Iterable[str]) -> dict[str, set[str]]:
    """All non-deprecated P31 classes of each item (for constraint checks, every value counts)."""
    register_rows(con, "_ft_all", ((q,) for q in sorted_unique(qids)), {"id": "VARCHAR"})
    out: dict[str, set[str]] = {}
    got = con.sql(
        "SELECT t.id, t.class FROM types t SEMI JOIN _ft_all i ON t.id = i.id WHERE t.rank <> 'deprecated'"
    ).to_arrow_table()  # column lists: quicker than fetchall's row tuples
    for qid, cls in zip(got.column("id").to_pylist(), got.column("class").to_pylist()):
        out.setdefault(qid, set()).add(cls)
    return out


def ancestors(con: Any, classes: Iterable[str]) -> dict[str, frozenset[str]]:
    """Each class with its transitive non-deprecated P279 superclasses (the class itself included)."""
    start = sorted(set(classes))
    if not start:
        return {}
    register_rows(con, "_ft_start", ((c,) for c in start), {"cls": "VARCHAR"})
    rows = con.sql(
        """WITH RECURSIVE up(start, cls) AS (
               SELECT cls, cls FROM _ft_start
               UNION
               SELECT up.start, s.superclass FROM up JOIN subclasses s ON s.id = up.cls
               WHERE s.rank <> 'deprecated')
           SELECT start, cls FROM up"""
    ).to_arrow_table()
    acc: dict[str, set[str]] = {c: {c} for c in start}
    for s, c in zip(rows.column("start").to_pylist(), rows.column("cls").to_pylist()):
        acc[s].add(c)
    return {k: frozenset(v) for k, v in acc.items()}


def with_superclasses(con: Any, ids: Iterable[str]) -> set[str]:
    """The ones among ``ids`` that have a non-deprecated P279 (subclass of) statement."""
    register_rows(con, "_ft_sub", ((q,) for q in sorted_unique(ids)), {"id": "VARCHAR"})
    return {r[0] for r in con.execute(
        "SELECT DISTINCT s.id FROM subclasses s SEMI JOIN _ft_sub i ON s.id = i.id WHERE s.rank <> 'deprecated'"
    ).fetchall()}


def class_sizes(con: Any, classes: Iterable[str]) -> dict[str, int]:
    """Number of non-deprecated P31 statements with each class as value (= its instances, up to
    the rare item that states one class twice; counting rows avoids a distinct-count over millions)."""
    register_rows(con, "_ft_cls", ((c,) for c in sorted(set(classes))), {"cls": "VARCHAR"})
    return dict(
        con.execute(
            """SELECT t.class, count(*) FROM types t SEMI JOIN _ft_cls c ON t.class = c.cls
               WHERE t.rank <> 'deprecated' GROUP BY t.class"""
        ).fetchall()
    )


def qid_number(qid: str) -> tuple[int, str]:
    digits = qid[1:]
    return (int(digits) if digits.isdigit() else 1 << 62, qid)


def choose_fine_type(classes: list[str], anc: Mapping[str, frozenset[str]], sizes: Mapping[str, int],
                     coarse: str | None = None) -> str:
    """The typing rule of the module docstring, for one item's best-rank classes; ``coarse=None``
    skips step 2 (no coarse type known)."""
    if not classes:
        raise EnvbenchError("choose_fine_type needs at least one class")
    kept = list(classes)
    if coarse is not None:
        # No class fits only for a link read from a file (linking itself picks fitting items):
        # the entity still gets a type, as before this step, rather than being kept.
        kept = [c for c in classes if fits_coarse(coarse, [c], anc)] or kept
    # a catch-all class ("entity", "organization") never decides a draw while another class is there;
    # an item with catch-alls only gets one, and generate keeps its entity (``generic_type``)
    kept = [c for c in kept if c not in CATCH_ALL_CLASSES] or kept
    specific = [c for c in kept if not any(o != c and c in anc.get(o, frozenset()) for o in kept)]
    specific = specific or kept  # a P279 cycle among the kept classes: keep all
    return min(specific, key=lambda c: (-sizes.get(c, 0), qid_number(c)))


def fine_types(con: Any, pairs: Iterable[tuple[str, str]],
               misfits: list[tuple[str, str]] | None = None) -> dict[tuple[str, str], str]:
    """The fine type of each (qid, coarse type) pair whose item has P31 values; pairs of an item
    without any are absent. ``misfits``, when given, receives the pairs whose item has no class that
    fits the coarse type (step 2 kept all its classes: a film linked to a country, or a mistyped entity)."""
    wanted = sorted(set(pairs))
    types = item_types(con, (q for q, _ in wanted))
    classes = {c for cs in types.values() for c in cs}
    anc = ancestors(con, classes)
    sizes = class_sizes(con, classes)
    if misfits is not None:
        misfits.extend((q, coarse) for q, coarse in wanted if q in types and not fits_coarse(coarse, types[q], anc))
    return {(q, coarse): choose_fine_type(types[q], anc, sizes, coarse) for q, coarse in wanted if q in types}


def is_catch_all(fine_type: str | None) -> bool:
    """Whether a fine type is a catch-all class (the item had no other class: its entity is kept)."""
    return fine_type in CATCH_ALL_CLASSES


def fits_coarse(coarse: str, classes: Iterable[str], anc: Mapping[str, frozenset[str]]) -> bool:
    """Whether an item with these P31 classes may carry the DocRED coarse type."""
    classes = list(classes)
    if not classes:
        return False
    roots = COARSE_ROOTS.get(coarse, ())
    if not roots:
        return True
    return any(r in anc.get(c, frozenset({c})) for c in classes for r in roots)


def p31_jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard overlap of two items' (non-deprecated) P31 sets: |A & B| / |A | B|, 0.0 for two empty sets.

    Sets are used as given (``by_p31_overlap`` calls this for every candidate of every window)."""
    sa = a if isinstance(a, (set, frozenset)) else set(a)
    sb = b if isinstance(b, (set, frozenset)) else set(b)
    shared = len(sa & sb)
    union = len(sa) + len(sb) - shared
    return shared / union if union else 0.0


KIND_MIN_ITEMS = 2  # a class label names a kind when at least this many items are of the class


def class_kinds(con: Any) -> dict[str, str]:
    """The kind word of each class of the index with at least ``KIND_MIN_ITEMS`` items: the head noun
    (``core.heads.label_head``) of its label ("river", "record label" -> label, "city of France" -> city,
    "council (head noun)" -> council). A name's head noun is a type signal only when it is the kind word
    of some class: "Supreme Court of Ohio" (court), not "South Africa" (africa). A bare connection: {}."""
    import duckdb

    from envbench.core.heads import label_head

    try:
        rows = con.execute(
            """SELECT c.class, e.label FROM (SELECT class FROM types WHERE rank IS DISTINCT FROM 'deprecated'
                                             GROUP BY class HAVING count(DISTINCT id) >= ?) c
               JOIN entities e ON e.id = c.class WHERE e.label IS NOT NULL ORDER BY c.class""",
            [KIND_MIN_ITEMS]).fetchall()
    except duckdb.CatalogException:
        return {}
    return {q: h for q, label in rows if (h := label_head(label)) is not None}


def by_p31_overlap(window: Sequence[str], own: Iterable[str], types: Mapping[str, Iterable[str]]) -> list[str]:
    """A draw window reordered so candidates sharing more P31 classes with the entity come first.

    The order is the P31 Jaccard (:func:`p31_jaccard`) with the entity, highest first; the draw
    order breaks ties (a stable sort), so with no type data the window is unchanged. Example: for
    "California" (state of the United States, constituent state), a window ["Hymnody", "Texas"]
    with Texas sharing both classes and Hymnody one is tried as ["Texas", "Hymnody"].
    """
    mine = own if isinstance(own, (set, frozenset)) else set(own)
    if not mine or len(window) < 2:
        return list(window)
    theirs = [types.get(c, ()) for c in window]
    if all(t is theirs[0] for t in theirs):  # one (interned) P31 set for the whole window: equal scores
        return list(window)
    scores = [p31_jaccard(mine, t) for t in theirs]
    if all(x == scores[0] for x in scores):  # the common case: nothing to reorder
        return list(window)
    order = sorted(range(len(window)), key=lambda i: -scores[i])  # stable: the draw order breaks ties
    return [window[i] for i in order]
