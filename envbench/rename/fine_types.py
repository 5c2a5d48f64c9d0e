"""Fine-grained entity types from an item's P31 values, and the matching rule for candidates.

Typing rule (:func:`fine_types`):

1. The item's P31 values, deprecated ones dropped. When some are ranked "preferred", only those
   count (Wikidata's best-rank rule), so a former type marked normal does not compete.
2. Most specific: a class is dropped when another of the item's classes is its subclass
   (through the P279 closure); "city" wins over "human settlement" when an item has both.
3. Most frequent: among what remains the fine type is the class with the most instances in the
   index (so the entity gets the largest pool of same-type candidates); ties go to the smaller
   numeric QID, so the choice never depends on row order.

Matching rule: a candidate matches when its non-deprecated P31 values include the entity's fine
type. An item without P31 values has no fine type and is kept (reason ``"no_type"``).

Coarse compatibility (used by linking): an item fits a DocRED coarse type when one of its P31
classes, or a P279 ancestor of one, is in ``COARSE_ROOTS[type]``. MISC accepts any typed item.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from envbench.core.errors import EnvbenchError

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


def register_rows(con: Any, name: str, rows: Iterable[tuple[Any, ...]], columns: Mapping[str, str]) -> None:
    """Load Python rows into a DuckDB temp table ``name`` (through Arrow, so large lists load fast)."""
    import pyarrow as pa

    data = list(rows)
    cols = list(columns)
    arrays = {c: [r[i] for r in data] for i, c in enumerate(cols)}
    types = {"VARCHAR": pa.string(), "BIGINT": pa.int64(), "INTEGER": pa.int32(), "UBIGINT": pa.uint64(),
             "BOOLEAN": pa.bool_()}
    tbl = pa.table({c: pa.array(arrays[c], type=types[columns[c]]) for c in cols})
    con.register(f"_{name}_arrow", tbl)
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM _{name}_arrow")
    con.unregister(f"_{name}_arrow")


def item_types(con: Any, qids: Iterable[str]) -> dict[str, list[str]]:
    """Best-rank, non-deprecated P31 classes of each item (sorted); items without any are absent."""
    register_rows(con, "_ft_items", ((q,) for q in sorted(set(qids))), {"id": "VARCHAR"})
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
    register_rows(con, "_ft_all", ((q,) for q in sorted(set(qids))), {"id": "VARCHAR"})
    out: dict[str, set[str]] = {}
    for qid, cls in con.execute(
        "SELECT t.id, t.class FROM types t SEMI JOIN _ft_all i ON t.id = i.id WHERE t.rank <> 'deprecated'"
    ).fetchall():
        out.setdefault(qid, set()).add(cls)
    return out


def ancestors(con: Any, classes: Iterable[str]) -> dict[str, frozenset[str]]:
    """Each class with its transitive non-deprecated P279 superclasses (the class itself included)."""
    start = sorted(set(classes))
    if not start:
        return {}
    register_rows(con, "_ft_start", ((c,) for c in start), {"cls": "VARCHAR"})
    rows = con.execute(
        """WITH RECURSIVE up(start, cls) AS (
               SELECT cls, cls FROM _ft_start
               UNION
               SELECT up.start, s.superclass FROM up JOIN subclasses s ON s.id = up.cls
               WHERE s.rank <> 'deprecated')
           SELECT start, cls FROM up"""
    ).fetchall()
    acc: dict[str, set[str]] = {c: {c} for c in start}
    for s, c in rows:
        acc[s].add(c)
    return {k: frozenset(v) for k, v in acc.items()}


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


def choose_fine_type(classes: list[str], anc: Mapping[str, frozenset[str]], sizes: Mapping[str, int]) -> str:
    """The typing rule of the module docstring, for one item's best-rank classes."""
    if not classes:
        raise EnvbenchError("choose_fine_type needs at least one class")
    specific = [c for c in classes if not any(o != c and c in anc.get(o, frozenset()) for o in classes)]
    specific = specific or list(classes)  # a P279 cycle among the item's classes: keep all
    return min(specific, key=lambda c: (-sizes.get(c, 0), qid_number(c)))


def fine_types(con: Any, qids: Iterable[str]) -> dict[str, str]:
    """The fine type of each item that has P31 values."""
    types = item_types(con, qids)
    classes = {c for cs in types.values() for c in cs}
    anc = ancestors(con, classes)
    sizes = class_sizes(con, classes)
    return {q: choose_fine_type(cs, anc, sizes) for q, cs in types.items()}


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
    """Jaccard overlap of two items' (non-deprecated) P31 sets: |A & B| / |A | B|, 0.0 for two empty sets."""
    sa, sb = set(a), set(b)
    union = len(sa | sb)
    return len(sa & sb) / union if union else 0.0


def by_p31_overlap(window: Sequence[str], own: Iterable[str], types: Mapping[str, Iterable[str]]) -> list[str]:
    """A draw window reordered so candidates sharing more P31 classes with the entity come first.

    The order is the P31 Jaccard (:func:`p31_jaccard`) with the entity, highest first; the draw
    order breaks ties (a stable sort), so with no type data the window is unchanged. Example: for
    "California" (state of the United States, constituent state), a window ["Hymnody", "Texas"]
    with Texas sharing both classes and Hymnody one is tried as ["Texas", "Hymnody"].
    """
    mine = set(own)
    if not mine:
        return list(window)
    return sorted(window, key=lambda c: -p31_jaccard(mine, types.get(c, ())))
