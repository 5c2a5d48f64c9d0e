"""Read-only query API over an index directory written by ``envbench ingest-dump``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from etl.io import InputError, read_json
from wikidata_index.names import fold
from wikidata_index.schema import TABLES


class WikidataIndex:
    """An in-memory DuckDB connection with one view per table over DIR/<table>/*.parquet.

    >>> with WikidataIndex("data/index") as ix:        # doctest: +SKIP
    ...     ix.names("Q42"), ix.types("Q42"), ix.find("douglas adams")
    """

    def __init__(self, path: str | os.PathLike[str], *, threads: int | None = None) -> None:
        import duckdb

        self.path = Path(path)
        present = [t for t in TABLES if any((self.path / t).glob("*.parquet"))] if self.path.is_dir() else []
        if not present and not (self.path / "manifest.json").is_file():
            raise InputError(f"no index at {self.path}; run `envbench ingest-dump DUMP --out {self.path}` first")
        config: dict[str, Any] = {}
        if threads:
            config["threads"] = threads
        self.con = duckdb.connect(":memory:", config=config)
        self._tables = present
        self._materialized: set[str] = set()
        for table in present:
            self.con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{self._glob(table)}')")

    # ------------------------------------------------------------------ plumbing
    def _glob(self, table: str) -> str:
        """The table's Parquet files as a quoted-for-SQL glob."""
        return str(self.path.resolve() / table / "*.parquet").replace("'", "''")

    def tables(self) -> list[str]:
        return list(self._tables)

    def require(self, *tables: str) -> None:
        for table in tables:
            if table not in self._tables:
                raise InputError(
                    f"index at {self.path} has no table '{table}'; "
                    f"rerun `envbench ingest-dump DUMP --out {self.path} --force`"
                )

    def materialize(self, *tables: str) -> None:
        """Load tables (default: all) into memory, replacing their views: for many small lookups
        on an index that fits in RAM (each view query otherwise rescans Parquet footers)."""
        for table in tables or tuple(self._tables):
            self.require(table)
            if table in self._materialized:
                continue
            self.con.execute(f"DROP VIEW IF EXISTS {table}")
            self.con.execute(f"CREATE TABLE {table} AS SELECT * FROM read_parquet('{self._glob(table)}')")
            self._materialized.add(table)

    def manifest(self) -> dict[str, Any]:
        p = self.path / "manifest.json"
        return read_json(p, what="index manifest") if p.is_file() else {}

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> WikidataIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _col(self, sql: str, params: list[Any]) -> list[Any]:
        return [r[0] for r in self.con.execute(sql, params).fetchall()]

    # ------------------------------------------------------------------ lookups
    def entity(self, qid: str) -> dict[str, Any] | None:
        """The entities row of ``qid`` as a dict, or None."""
        self.require("entities")
        cur = self.con.execute("SELECT * FROM entities WHERE id = ? LIMIT 1", [qid])
        row = cur.fetchone()
        if row is None:
            return None
        return dict(zip([d[0] for d in cur.description], row))

    def names(self, qid: str, lang: str = "en") -> list[str]:
        """Label first, then the aliases sorted."""
        self.require("names")
        return self._col(
            "SELECT name FROM names WHERE id = ? AND lang = ? ORDER BY is_label DESC, name", [qid, lang]
        )

    def types(self, qid: str) -> list[str]:
        """Non-deprecated P31 classes, sorted."""
        self.require("types")
        return self._col(
            "SELECT DISTINCT class FROM types WHERE id = ? AND rank <> 'deprecated' ORDER BY class", [qid]
        )

    def superclasses(self, qid: str) -> list[str]:
        """Transitive P279 closure of ``qid`` over non-deprecated statements, sorted."""
        self.require("subclasses")
        return self._col(
            """WITH RECURSIVE up(cls) AS (
                   SELECT superclass FROM subclasses WHERE id = ? AND rank <> 'deprecated'
                   UNION
                   SELECT s.superclass FROM subclasses s JOIN up ON s.id = up.cls
                   WHERE s.rank <> 'deprecated')
               SELECT cls FROM up ORDER BY cls""",
            [qid],
        )

    def find(self, name: str, lang: str = "en") -> list[str]:
        """Ids named exactly ``name``, then those matching case- and diacritic-folded; each group by
        popularity (descending), then id."""
        self.require("names", "entities")
        return self._col(
            """WITH hits AS (
                   SELECT id, min(CASE WHEN name = ? THEN 0 ELSE 1 END) AS tier
                   FROM names WHERE lang = ? AND (name = ? OR folded = ?) GROUP BY id)
               SELECT h.id FROM hits h LEFT JOIN entities e ON e.id = h.id
               ORDER BY h.tier, coalesce(e.popularity, 0) DESC, h.id""",
            [name, lang, name, fold(name)],
        )

    def popularity(self, qid: str) -> int:
        """Item-valued statements with ``qid`` as subject or object (0 when unknown)."""
        self.require("entities")
        row = self.con.execute("SELECT popularity FROM entities WHERE id = ?", [qid]).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def constraints(self, pid: str) -> list[dict[str, Any]]:
        """P2302 constraints of a property: [{constraint_type, class, relation}], sorted."""
        self.require("property_constraints")
        cur = self.con.execute(
            """SELECT constraint_type, class, relation FROM property_constraints WHERE property = ?
               ORDER BY constraint_type, class NULLS FIRST, relation NULLS FIRST""",
            [pid],
        )
        return [dict(zip(("constraint_type", "class", "relation"), r)) for r in cur.fetchall()]

    def counts(self) -> dict[str, int]:
        """Row count per table (reads Parquet footers only)."""
        return {t: int(self.con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in self._tables}
