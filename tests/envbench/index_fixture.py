"""Tiny hand-made index directories (Parquet per table) and the sample world, for generation tests."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from wikidata_index.names import fold
from wikidata_index.schema import (
    RELATION_INSTANCE_OF,
    SUBJECT_TYPE_CONSTRAINT,
    TABLES,
    VALUE_TYPE_CONSTRAINT,
)


def write_index(root: Path, rows: dict[str, list[dict[str, Any]]], *, skip: tuple[str, ...] = ()) -> Path:
    """Write DIR/<table>/part-00000.parquet for every schema table (empty when not given), with the
    manifest that makes it an index (wikidata_index.ingest.write_tables)."""
    from wikidata_index.ingest import write_tables

    return write_tables(root, {t: rows.get(t, []) for t in TABLES if t not in skip})


def connect(root: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for table in TABLES:
        if (root / table).is_dir():
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{root / table}/*.parquet')")
    return con


class Builder:
    """Collects index rows: items with names, P31/P279 values, edges and constraints."""

    def __init__(self) -> None:
        self.rows: dict[str, list[dict[str, Any]]] = {t: [] for t in TABLES}

    def item(self, qid: str, label: str | None, *aliases: str, p31: tuple[str, ...] = (), popularity: int = 0,
             ranks: dict[str, str] | None = None) -> Builder:
        self.rows["entities"].append({"id": qid, "type": "item", "label": label, "description": None,
                                      "sitelinks": 0, "enwiki": None, "popularity": popularity})
        if label is not None:
            self.rows["names"].append({"id": qid, "lang": "en", "name": label, "is_label": True, "folded": fold(label)})
        for a in aliases:
            self.rows["names"].append({"id": qid, "lang": "en", "name": a, "is_label": False, "folded": fold(a)})
        for c in p31:
            self.rows["types"].append({"id": qid, "class": c, "rank": (ranks or {}).get(c, "normal")})
        return self

    def subclass(self, cls: str, *parents: str) -> Builder:
        for p in parents:
            self.rows["subclasses"].append({"id": cls, "superclass": p, "rank": "normal"})
        return self

    def edge(self, s: str, p: str, o: str) -> Builder:
        self.rows["edges"].append({"subject": s, "property": p, "object": o})
        return self

    def constraint(self, pid: str, role: str, *classes: str) -> Builder:
        ctype = SUBJECT_TYPE_CONSTRAINT if role == "subject" else VALUE_TYPE_CONSTRAINT
        for c in classes:
            self.rows["property_constraints"].append(
                {"property": pid, "constraint_type": ctype, "class": c, "relation": RELATION_INSTANCE_OF})
        return self

    def write(self, root: Path, *, skip: tuple[str, ...] = ()) -> Path:
        return write_index(root, self.rows, skip=skip)


def eval_qids(prefix: str, n: int, start: int = 0) -> list[str]:
    """The first ``n`` item ids ``{prefix}{k}`` (k from ``start``) of the eval name pool, the pool ``generate``
    draws a benchmark from (``candidates.pool_of``)."""
    from envbench.rename.candidates import pool_of

    out, k = [], start
    while len(out) < n:
        if pool_of(q := f"{prefix}{k}") == "eval":
            out.append(q)
        k += 1
    return out


def mention(name: str, sent_id: int, pos: list[int], type_: str) -> dict[str, Any]:
    return {"name": name, "sent_id": sent_id, "pos": pos, "type": type_}


@dataclass(frozen=True)
class SampleWorld:
    root: Path
    sample: Path
    index: Path
    links: Path
    test: Path
    train: Path


@functools.cache
def sample_world() -> SampleWorld:
    """make-sample + ingest-dump once per test process (about a second)."""
    from envbench.worlds.sample import make_sample
    from wikidata_index.ingest import ingest_dump

    root = Path(tempfile.mkdtemp(prefix="envbench-gen-tests-"))
    atexit.register(shutil.rmtree, root, True)
    res = make_sample(root / "sample")
    ingest_dump(res.dump, root / "index", progress=False)
    docs = root / "sample" / "docs"
    return SampleWorld(root, root / "sample", root / "index", res.links, docs / "test.json", docs / "train.json")


@functools.cache
def _sample_env() -> Path:
    """The sample benchmark, generated once per test process."""
    from envbench.rename.generate import generate

    w = sample_world()
    out = w.root / "env"
    generate(w.test, w.index, out, links=w.links, seeds=5, progress=False, allow_training_names=True)
    return out


def sample_env(dest: Path) -> Path:
    """The sample world's test split renamed as the demo renames it, but without the
    training documents (``generate --seeds 5 --links --allow-training-names``; the demo's own, whose new names avoid
    train.json and dev.json, is pinned in tests/envbench/rename/test_generate.py): a copy
    at ``dest`` (which must not exist yet), for the caller to write beside or read. Generated once per test
    process (the CLI tests, export, lock and generate each had generated their own)."""
    shutil.copytree(_sample_env(), dest)
    return dest


def tiny_world() -> Builder:
    """A hand-made index: 40 humans, 30 cities, 6 countries, a few odd items; see the tests."""
    b = Builder()
    b.subclass("Q5", "Q215627").subclass("Q515", "Q486972").subclass("Q486972", "Q2221906")
    b.subclass("Q6256", "Q2221906").subclass("Q4830453", "Q43229")
    for k in range(40):
        aliases = (f"P. {k}", f"Per {k}") if k % 3 == 0 else (f"P. {k}",) if k % 3 == 1 else ()
        b.item(f"Q{100 + k}", f"Person {k}", *aliases, p31=("Q5",), popularity=k)
    for k in range(30):
        b.item(f"Q{200 + k}", f"City {k}", f"C{k}", p31=("Q515",), popularity=k)
    for k in range(6):
        b.item(f"Q{300 + k}", f"Country {k}", p31=("Q6256",), popularity=100 + k)
    b.item("Q400", "Nolabel", p31=("Q515",))
    b.rows["names"] = [r for r in b.rows["names"] if r["id"] != "Q400" or not r["is_label"]]
    b.item("Q401", "Old Town", p31=("Q515", "Q486972"))  # most specific: city
    b.item("Q402", "Ex Person", p31=("Q5", "Q4830453"), ranks={"Q4830453": "preferred"})  # best rank
    b.item("Q403", "Citystate", p31=("Q6256", "Q515"))  # unrelated classes: the bigger one (city)
    b.item("Q404", "Gone", p31=("Q5",), ranks={"Q5": "deprecated"})
    b.item("Q405", "Tie", p31=("Q43229", "Q4830453"))  # org and business: business is more specific
    return b
