"""Batch retrieval of replacement candidates over the index: one join for every slot at once.

A slot is one (document, seed, entity) to rename. Its eligible items are those that

* have the entity's fine type among their non-deprecated P31 values (see ``fine_types``),
* have an English label and at least as many distinct English names (label + aliases) as the
  entity has distinct mention names, less its adjectival ones, which take demonyms, and in an
  entity's second slot less its short names, which follow the new full name (``short_names``;
  ``Slot.min_names``, set by ``engine.plan_runs``; items are numbered for thresholds 1..4; an entity with more
  names draws from the ">= 4" numbering and skips items with too few names),
* fall in the requested pool: ``eval`` when the last hex digit of ``md5(qid)`` is 0-7, ``train``
  otherwise; the two pools share no item, so EVRT training twins never reuse a benchmark item
  (and ``generate`` also keeps twins off any form an eval-pool item may be written in, its names,
  demonyms and adjectival labels, see :func:`names_in_pool`; and off the names of the documents a
  model trained on the twins is scored on, ``--exclude-names-from``),
* are not the entity's own item,
* with ``generate --popularity low|high``, are at or below the first quartile (at or above the third)
  of the popularity of their class's items (``core.attacks.POPULARITY_BINS``; numbered and cached apart).

The draw: the eligible items of a (fine type, pool, name count) group are numbered in the order of
``md5(qid)``; a slot starts at ``int(md5(seed US title US entity)[:16], 16) mod N`` (US = chr(31))
and reads windows of consecutive items (wrapping; 4 items, then 16, 64 and 256), each ordered by
``md5(seed US title US entity US qid)``.
The caller takes the first item of the window that passes the checks that depend on the document
(names occurring in the source document, names given to other entities of the same renamed
document, the label-preservation audit) and reads the next window when none does; after
``MAX_WINDOWS`` windows (340 items) the entity is kept with reason ``no_candidate``.

Cost: the numbering of every class is built once per index and cached (``CandidateSource``); a
window is an equi-join on (group, rank), so a run's work grows with the number of slots times the
window, not with slots times class size, and is one scan of the cached numbering. Building it is
one sort of the index's (class, item) pairs by hash, done by DuckDB (which spills to disk on a full
dump), and running counts over that stream (:func:`number_candidates`); ranking in a SQL window
instead sorted every (class, pool, threshold) partition by the 32-character hash text, about 1.5
times slower on a 1M-item index (``bench/RESULTS.md#generate``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from envbench.core.seeding import stable_hash_hex
from envbench.rename.fine_types import register_rows, register_table, sorted_unique
from etl.io import atomic_path, write_json_atomic
from wikidata_index.index import DEMONYM_LANGUAGE, Demonym
from wikidata_index.names import fold

WINDOW = 4  # size of the first window; window w has WINDOW * 4**w items
MAX_WINDOWS = 4  # at most 4 + 16 + 64 + 256 = 340 candidates are tried per slot


def window_bounds(w: int) -> tuple[int, int]:
    """[start, end) offsets of window ``w`` from the slot's start: 0-4, 4-20, 20-84, ..."""
    start = WINDOW * (4**w - 1) // 3
    return start, start + WINDOW * 4**w


POOLS = ("eval", "train")

# the last hex digit of md5(qid); the draw order uses the leading digits of the same hash
POOL_OF_HASH_SQL = "CASE WHEN substr({h}, 32, 1) < '8' THEN 'eval' ELSE 'train' END"
POOL_SQL = POOL_OF_HASH_SQL.format(h="md5({col})")


def pool_of(qid: str) -> str:
    """The name pool of an item (the same split as ``POOL_SQL``)."""
    return "eval" if stable_hash_hex(qid)[-1] < "8" else "train"


def slot_start(seed: int, title: str, entity: int) -> int:
    """Where a slot's draw starts (before ``mod N``)."""
    return int(stable_hash_hex(seed, title, entity)[:16], 16)


@dataclass(frozen=True)
class Slot:
    fine_type: str
    min_names: int
    pool: str
    qid: str  # the entity's own item, never drawn
    seed: int
    title: str  # the source title
    entity: int


class ItemNames(NamedTuple):
    """An item's English names (a named tuple: item_names makes one per drawn candidate)."""

    label: str
    aliases: tuple[str, ...]  # sorted


M_MAX = 4  # name-count thresholds numbered separately; higher counts draw from the ">= 4" numbering
CACHE_VERSION = 4  # bump whenever the numbering, its file's schema or the pool split changes


NUMBERING_COLUMNS = ("fine_type", "pool", "min_names", "rnk", "id", "n_names")
NUMBERING_BATCH = 1 << 20  # items per Arrow batch of the numbering stream: bounds its memory, not its result


# ``generate --popularity``: candidates at or below the first quartile (low) or at or above the third
# (high) of the popularity of their class's items (those with an English label, both pools), the quartiles
# interpolated as ``statistics.quantiles(method="inclusive")`` and the report's Table 4 compute them
_POPULARITY_KEEP = {"low": "e.popularity <= q.q1", "high": "e.popularity >= q.q3"}


def _items_in_draw_order_sql(restrict: bool, popularity: str | None = None) -> str:
    """Every (class, item) pair that can be drawn, in the draw order: ``md5(id)``, then ``id``.

    The hash is compared as two unsigned 64-bit halves, which orders exactly as its hex text does
    (fixed width, lower case) but sorts as integers: far cheaper than sorting 32-character strings.
    With ``popularity`` (one of ``core.attacks.POPULARITY_BINS``) only the items of that quartile of their class.
    """
    where = "AND class IN (SELECT fine_type FROM _cand_groups)" if restrict else ""
    items = f"""(SELECT id, class, md5(id) AS h
              FROM (SELECT DISTINCT id, class FROM types WHERE rank <> 'deprecated' {where})) t
        JOIN (SELECT id, count(*) AS n_names FROM names WHERE lang = 'en'  -- rows are unique per name
              GROUP BY id HAVING bool_or(is_label)) c ON c.id = t.id"""
    binned = ""
    if popularity is not None:
        binned = f"""
        JOIN entities e ON e.id = t.id
        JOIN (SELECT t.class, quantile_cont(e.popularity, 0.25) AS q1, quantile_cont(e.popularity, 0.75) AS q3
              FROM {items} JOIN entities e ON e.id = t.id GROUP BY t.class) q ON q.class = t.class
        WHERE {_POPULARITY_KEEP[popularity]}"""
    return f"""
        SELECT t.class AS fine_type, {POOL_OF_HASH_SQL.format(h="t.h")} AS pool, t.id, c.n_names
        FROM {items}{binned}
        ORDER BY ('0x' || substr(t.h, 1, 16))::UBIGINT, ('0x' || substr(t.h, 17, 16))::UBIGINT, t.id"""


def number_candidates(con: Any, restrict: bool, popularity: str | None = None) -> Iterable[Any]:
    """The eligible-item numbering as Arrow record batches of ``NUMBERING_COLUMNS``.

    An item of class C and pool P with n English names gets, for each threshold m <= min(n, M_MAX),
    the rank ``rnk`` (from 0) among the items of (C, P) with at least m names, in draw order.
    DuckDB sorts the items once (it spills to disk on a full Wikidata index); the ranks are then
    running counts per group over that stream, carried from batch to batch, so memory stays at one
    batch plus a counter per group however large the index. ``restrict``: only the classes of the
    ``_cand_groups`` table. Rows come grouped by batch and threshold; every use of them is a join.
    """
    import polars as pl

    schema = _numbering_schema()
    reader = con.sql(_items_in_draw_order_sql(restrict, popularity)).to_arrow_reader(NUMBERING_BATCH)
    seen = pl.DataFrame(schema={"fine_type": pl.String, "pool": pl.String, "min_names": pl.Int32,
                                "before": pl.Int64})  # items numbered in earlier batches, per group
    for batch in reader:
        items = pl.from_arrow(batch)
        assert isinstance(items, pl.DataFrame)
        parts = [items.filter(pl.col("n_names") >= m).with_columns(pl.lit(m, pl.Int32).alias("min_names"))
                 for m in range(1, M_MAX + 1)]
        ranked = (pl.concat(parts)
                  .with_columns(pl.int_range(pl.len(), dtype=pl.Int64).over("fine_type", "pool", "min_names")
                                .alias("rnk"))  # rank within this batch, in draw order
                  .join(seen, on=["fine_type", "pool", "min_names"], how="left")  # row order: free (joins read it)
                  .with_columns((pl.col("rnk") + pl.col("before").fill_null(0)).alias("rnk")))
        seen = (pl.concat([seen, ranked.group_by("fine_type", "pool", "min_names")
                           .agg(pl.len().cast(pl.Int64).alias("before"))])
                .group_by("fine_type", "pool", "min_names").agg(pl.col("before").sum()))
        yield from ranked.select(*NUMBERING_COLUMNS).to_arrow().cast(schema).to_batches()


def _numbering_schema() -> Any:
    import pyarrow as pa

    return pa.schema([("fine_type", pa.string()), ("pool", pa.string()), ("min_names", pa.int32()),
                      ("rnk", pa.int64()), ("id", pa.string()), ("n_names", pa.int64())])


class CandidateSource:
    """Eligible-item numbering for a set of slots, built once; windows fetched in batches.

    With ``cache_dir`` the numbering of every class is kept there as Parquet, keyed by the index
    fingerprint, so later runs on the same index only read it (the cost no longer grows with the
    index beyond one scan). Without it, or when the directory cannot be written, only the requested
    classes are numbered, in memory. Both give the same numbers.
    """

    def __init__(self, con: Any, slots: Sequence[Slot], *, cache_dir: str | os.PathLike[str] | None = None,
                 fingerprint: str | None = None, popularity: str | None = None) -> None:
        self.con = con
        self.slots = list(slots)
        self.popularity = popularity  # a core.attacks.POPULARITY_BINS bin: only its items are numbered (their own cache)
        self.cache_used: str = "memory"
        self._slots_registered = False
        groups = sorted({(s.fine_type, s.pool, min(s.min_names, M_MAX)) for s in self.slots})
        register_rows(con, "_cand_groups", groups, {"fine_type": "VARCHAR", "pool": "VARCHAR", "min_names": "INTEGER"})
        if not (cache_dir is not None and fingerprint and self._use_cache(Path(cache_dir), fingerprint)):
            import pyarrow as pa

            register_table(con, "_cand_elig",
                           pa.Table.from_batches(list(number_candidates(con, restrict=True, popularity=popularity)),
                                                 schema=_numbering_schema()))
        self.totals: dict[tuple[str, str, int], int] = {}
        self.most_names: dict[tuple[str, str, int], int] = {}
        for f, p, n, c, most in con.execute(
            """SELECT e.fine_type, e.pool, e.min_names, count(*), max(e.n_names) FROM _cand_elig e
               SEMI JOIN _cand_groups g ON g.fine_type = e.fine_type AND g.pool = e.pool
                                       AND g.min_names = e.min_names
               GROUP BY ALL"""
        ).fetchall():
            self.totals[(f, p, n)] = int(c)
            self.most_names[(f, p, n)] = int(most)

    def _use_cache(self, cache_dir: Path, fingerprint: str) -> bool:
        import duckdb

        stem = "candidates" if self.popularity is None else f"candidates-popularity-{self.popularity}"
        data, meta = cache_dir / f"{stem}.parquet", cache_dir / f"{stem}.json"
        want = {"version": CACHE_VERSION, "index": fingerprint, "m_max": M_MAX,
                **({"popularity": self.popularity} if self.popularity is not None else {})}
        try:
            fresh = meta.is_file() and data.is_file() and orjson.loads(meta.read_bytes()) == want
            if not fresh:
                import pyarrow.parquet as pq

                # LZ4: a cache of this index that is read back by DuckDB only; writes faster than zstd
                with atomic_path(data) as tmp, pq.ParquetWriter(tmp, _numbering_schema(), compression="lz4") as out:
                    for batch in number_candidates(self.con, restrict=False, popularity=self.popularity):
                        out.write_batch(batch)
                write_json_atomic(meta, want)
                self.cache_used = "built"
            else:
                self.cache_used = "read"
        except (OSError, duckdb.IOException):  # a read-only index or a full disk: number in memory instead
            return False
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW _cand_elig AS SELECT * FROM "
                         f"read_parquet('{str(data).replace(chr(39), chr(39) * 2)}')")
        return True

    def total(self, slot: Slot) -> int:
        """Number of eligible items of the slot's group (its own item included when eligible)."""
        key = (slot.fine_type, slot.pool, min(slot.min_names, M_MAX))
        if self.most_names.get(key, 0) < slot.min_names:
            return 0  # no item of the group has that many names
        return self.totals.get(key, 0)

    def _register_slots(self) -> None:
        rows = []
        for si, s in enumerate(self.slots):
            n = self.total(s)
            start = slot_start(s.seed, s.title, s.entity) % n if n else 0
            rows.append((si, s.fine_type, s.pool, min(s.min_names, M_MAX), s.min_names, s.qid, str(s.seed),
                         s.title, str(s.entity), start, n))
        register_rows(self.con, "_cand_slots", rows, {
            "slot": "BIGINT", "fine_type": "VARCHAR", "pool": "VARCHAR", "min_names": "INTEGER", "need": "INTEGER",
            "qid": "VARCHAR",
            "seed": "VARCHAR", "title": "VARCHAR", "entity": "VARCHAR", "start": "BIGINT", "total": "BIGINT"})
        self._slots_registered = True

    def windows(self, requests: Iterable[tuple[int, int]]) -> dict[tuple[int, int], list[str]]:
        """{(slot index, window number): candidate QIDs in draw order} for the requested windows.

        One query for all requests: the window positions are generated and joined in SQL, and
        the order inside a window is ``md5(seed US title US entity US qid)`` computed there too.
        """
        requests = sorted(set(requests))
        out: dict[tuple[int, int], list[str]] = {r: [] for r in requests}
        if not requests:
            return out
        if not self._slots_registered:
            self._register_slots()
        register_rows(self.con, "_cand_q", [(si, w, *window_bounds(w)) for si, w in requests],
                  {"slot": "BIGINT", "w": "BIGINT", "lo": "BIGINT", "hi": "BIGINT"})
        hits = self.con.sql(
            """WITH pos AS (
                    SELECT s.slot, q.w, s.fine_type, s.pool, s.min_names, s.need, s.qid, s.seed, s.title, s.entity,
                           (s.start + unnest(range(q.lo, least(q.hi, s.total)))) % s.total
                               AS rnk
                    FROM _cand_q q JOIN _cand_slots s ON s.slot = q.slot
                    WHERE s.total > 0)
                SELECT p.slot, p.w, e.id FROM pos p
                JOIN _cand_elig e ON e.fine_type = p.fine_type AND e.pool = p.pool
                                 AND e.min_names = p.min_names AND e.rnk = p.rnk
                WHERE e.id <> p.qid AND e.n_names >= p.need
                ORDER BY p.slot, p.w, md5(concat_ws(chr(31), p.seed, p.title, p.entity, e.id)), e.id"""
        ).to_arrow_table()
        for si, w, qid in zip(hits.column("slot").to_pylist(), hits.column("w").to_pylist(),
                              hits.column("id").to_pylist()):
            out[(si, w)].append(qid)
        return out


def item_names(con: Any, qids: Iterable[str]) -> dict[str, ItemNames]:
    """English label and sorted aliases of each item that has a label.

    The label is the item's first label row by name; the aliases are its other distinct names
    (any other label row included), sorted. DuckDB groups the rows, so Python only unpacks them.
    """
    return _item_names(con, qids, False)[0]


def item_names_and_tokens(con: Any, qids: Iterable[str]) -> tuple[dict[str, ItemNames], list[tuple[str, list[str]]]]:
    """:func:`item_names`, and the ``name_tokens`` rows of those names and of the items' English
    demonym texts: the tokens of the ones that are not plain (``envbench.core.text.remember_tokens``
    takes them). The names are matched in DuckDB, over the rows item_names read, so the many plain
    names of a batch never reach Python and ``names`` is scanned once."""
    return _item_names(con, qids, True)


def _opens_the(name: str) -> bool:
    return name[:4].casefold() == "the "


def article_twins_dropped(label: str, aliases: tuple[str, ...]) -> tuple[str, ...]:
    """``aliases`` less each one that is the label or an alias before it with or without a leading "the".

    Such twins are one name, not two: a corpus KB takes "the Brussels" from a mention that has the
    article inside its span, and a Wikidata item may carry "The Who" and "Who". Counted as two, they
    let "Dahod, Dohad" become "the Brussels, Brussels" ("the Brussels is a small city"). The label is
    kept, then the aliases in their (sorted) order. Examples: ("Brussels", ("the Brussels",)) -> ();
    ("The Who", ("Who",)) -> (); ("Paris", ("PARIS",)) -> ("PARIS",) (no article between them)."""
    if not _opens_the(label) and not any(_opens_the(a) for a in aliases):
        return aliases  # nearly every item: nothing to compare
    seen: dict[str, str] = {}  # folded name without its "the" -> folded name as written
    kept = []
    for i, name in enumerate((label, *aliases)):
        full = fold(name)
        bare = fold(name[4:]) if _opens_the(name) else full
        if bare in seen and seen[bare] != full:
            continue  # "the Brussels" after "Brussels"
        seen.setdefault(bare, full)
        if i:
            kept.append(name)
    return tuple(kept)


def _item_names(con: Any, qids: Iterable[str], tokens: bool) -> tuple[dict[str, ItemNames], list[tuple[str, list[str]]]]:
    register_rows(con, "_cand_ids", ((q,) for q in sorted_unique(qids)), {"id": "VARCHAR"})
    con.execute("""CREATE OR REPLACE TEMP TABLE _cand_names AS
                   SELECT n.id, n.name, n.is_label FROM names n SEMI JOIN _cand_ids i ON n.id = i.id
                   WHERE n.lang = 'en'""")
    got = con.sql(
        """SELECT id, min(name) FILTER (WHERE is_label) AS label, list(DISTINCT name ORDER BY name) AS names
           FROM _cand_names GROUP BY id HAVING label IS NOT NULL ORDER BY id"""
    ).to_arrow_table()
    names = {q: ItemNames(lab, article_twins_dropped(lab, tuple(n for n in names if n != lab)))
             for q, lab, names in zip(got.column("id").to_pylist(), got.column("label").to_pylist(),
                                      got.column("names").to_pylist())}
    stored: list[tuple[str, list[str]]] = []
    if tokens:
        stored = con.execute(
            """SELECT t.name, t.tokens FROM name_tokens t SEMI JOIN (
                   SELECT name FROM _cand_names
                   UNION ALL SELECT text FROM demonyms d SEMI JOIN _cand_ids i ON d.id = i.id WHERE d.lang = 'en'
               ) q ON q.name = t.name ORDER BY t.name""").fetchall()
    return names, stored


# Forms an item gives a name that are not its label or aliases: adjectival_forms strips the last word of an
# ethnic group's or a language's label ("Vili people" -> "Vili", "Kurdish language" -> "Kurdish").
DERIVED_FORM_WORDS = ("people", "language")
SPAN_WORDS = 6  # names of up to this many words give every run of their words as a form (candidate_forms)
_PUNCT = re.compile(r"\s*([^\w\s]+)\s*")


def _strip_derived(name: str) -> str | None:
    words = name.split()
    return " ".join(words[:-1]) if len(words) > 1 and words[-1].casefold() in DERIVED_FORM_WORDS else None


def candidate_forms(names: Mapping[str, ItemNames], demonyms: Mapping[str, Sequence[Demonym]]) -> set[str]:
    """Every form the items of ``names`` may be written in (:func:`names_in_pool`'s forms): their names,
    their demonyms (``demonyms``: P1549 rows by item), their names less a last "people" or "language",
    and every run of the words of a name of up to ``SPAN_WORDS`` words, which the rules write from a name
    (a surname, "Gomes" of "Estêvão Gomes"; a short name, "South Georgia" of "South Georgia Islands")."""
    forms: set[str] = set()
    for qid, item in names.items():
        for name in (item.label, *item.aliases):
            forms.add(name)
            if (stripped := _strip_derived(name)) is not None:
                forms.add(stripped)
            words = name.split()
            if 1 < len(words) <= SPAN_WORDS:
                forms.update(" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1))
        forms.update(d.text for d in demonyms.get(qid, ()))
    return forms


def folded_forms(name: str) -> tuple[str, ...]:
    """A written name as :func:`names_in_pool` compares it: folded, and folded without a leading "the"
    ("the Qataris" of a plural mention is the demonym "Qataris")."""
    f = fold(name)
    return (f, f[4:]) if f.startswith("the ") and len(f) > 4 else (f,)


def spellings(folded: str) -> tuple[str, ...]:
    """The folded names that :func:`names_in_pool` counts as one with ``folded``: itself, with a leading
    "the" ("crazy world of arthur brown", "the crazy world of arthur brown"), and with its punctuation
    between spaces or left out, as a corpus KB writes names of DocRED's tokens ("saint-malo",
    "saint - malo", "saint malo"). Not the other way: "saint malo" gives no "saint - malo" (where the
    punctuation stood is lost), which only ``--exclude-names-from`` holds back."""
    out = [folded, *(() if folded.startswith("the ") else (f"the {folded}",))]
    out.append(" ".join(_PUNCT.sub(r" \1 ", folded).split()))
    out.append(" ".join(_PUNCT.sub(" ", folded).split()))
    return tuple(dict.fromkeys(x for x in out if x))


def names_in_pool(con: Any, names: Iterable[str], pool: str) -> set[str]:
    """The folded forms among ``names`` that some item of ``pool`` may be written as: one of its English
    names (label, aliases), one of its English P1549 demonyms in any grammatical form ("Qatari",
    "Qataris"), or its label less a last "people" or "language" (the adjectival form of an ethnic group
    or a language, ``demonyms.adjectival_forms``; read from any English name, which may hold back a few
    more names than needed, never fewer); each also under its other :func:`spellings`.

    Used for the train pool: a training twin never takes a form that an eval-pool item has, so
    the names of training perturbations and of benchmarks stay disjoint even where two items
    share a name, and where the shared form is a demonym ("Qatari" of Qatar for "American": 14 names of
    Env-Re-DocRED test's and the twins of dev, most of them demonyms, when only names were compared;
    1 with every form). What no item of the pool carries (a short name the rules write, "Andover" of
    "Andover High School", that one) only the scored documents' names hold back: ``generate --twins
    --exclude-names-from``.
    """
    import duckdb

    folded = sorted({fold(n) for n in names})
    if not folded:
        return set()
    # each form and the names it may be derived from, one equi-join (an OR in the join would scan every pair)
    keys = {(key, f) for f in folded for form in spellings(f)
            for key in (form, *(f"{form} {w}" for w in DERIVED_FORM_WORDS))}
    register_rows(con, "_cand_folded", sorted(keys), {"key": "VARCHAR", "folded": "VARCHAR"})
    in_pool = POOL_SQL.format(col="n.id")
    rows = con.execute(
        f"""SELECT DISTINCT f.folded FROM _cand_folded f JOIN names n ON n.folded = f.key
            WHERE n.lang = 'en' AND {in_pool} = ?""",
        [pool],
    ).fetchall()
    try:  # the demonyms view is empty on an index without the table; a bare connection has none
        rows += con.execute(
            f"""SELECT DISTINCT f.folded FROM _cand_folded f JOIN demonyms n ON n.folded = f.key
                WHERE n.lang = ? AND {in_pool} = ?""",
            [DEMONYM_LANGUAGE, pool],
        ).fetchall()
    except duckdb.CatalogException:
        pass
    return {r[0] for r in rows}
