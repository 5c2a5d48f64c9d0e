"""Read-only query API over an index directory written by ``envbench ingest-dump``.

An index is trusted only as far as its ``manifest.json`` vouches for it. Opening one checks
that the manifest is there and is an index manifest of a format this code reads, that every
table file it lists is present with its recorded size, that no table folder holds a file it does
not list, and that every file's sha256 is the one the manifest records. Hashing is cheap after
the first time: hashes are remembered per file (name, size, mtime, ctime, inode; a rename, an
edit or a copy changes one of them) in ``DIR/.file-hashes.json`` (or, for an index folder this
user cannot write, in ``~/.cache/envbench/file-hashes/``), and an ingest records them as it
publishes. ``index info --verify`` hashes every file again regardless. DuckDB's errors on a
damaged file become one line naming the table and saying to re-ingest.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from etl.io import (
    InputError,
    dumps_json,
    require_path,
    require_text,
    sha256_bytes,
    sha256_file,
    shorten,
    write_json_atomic,
)
from etl.manifest import package_version
from etl.step import claim_of
from wikidata_index.names import fold
from wikidata_index.schema import DEMONYM_LANGUAGE, OPTIONAL_TABLES, TABLES

log = logging.getLogger("wikidata_index")

MANIFEST = "manifest.json"
# The layout of the tables (schema.py) and of the folder. Indexes written before the manifest
# recorded it have format 1. A table that older indexes lack (schema.OPTIONAL_TABLES: demonyms)
# is not a new format: they are read with that table empty, and older readers ignore it.
INDEX_FORMAT = 1
HASH_CACHE = ".file-hashes.json"
_warned_versions: set[str] = set()


def reingest_hint(path: str | os.PathLike[str]) -> str:
    return f"re-ingest: envbench ingest-dump DUMP --out {path} --force"


# ----------------------------------------------------------------------------- the manifest


# How long opening an index waits for a publish under way (a handful of renames and the manifest).
PUBLISH_WAIT_S = 10.0
_ENTITY_ID = re.compile(r"[QPLqpl][1-9][0-9]*")


def entity_id(text: str) -> str:
    """An entity id as the index stores it: ``" q42 "`` -> ``"Q42"`` (Wikidata writes the Q, P and L of item,
    property and lexeme ids in capitals; a lower-case one had been "not in the index"). Other text is
    returned as given, to be reported as not found."""
    stripped = text.strip()
    return stripped[0].upper() + stripped[1:] if _ENTITY_ID.fullmatch(stripped) else text


def _wait_for_publish(root: Path, man: Path) -> None:
    """Wait while a publish is under way (its claim is there, the manifest is not yet); refuse when
    no manifest came within PUBLISH_WAIT_S."""
    deadline = time.monotonic() + PUBLISH_WAIT_S
    while time.monotonic() < deadline:
        if man.is_file() or not claim_of(man).is_file():
            return
        time.sleep(0.02)
    if man.is_file():  # pragma: no cover - it came as the wait ended
        return
    raise InputError(f"index at {root} is being published (its {claim_of(man).name} is there) and no {MANIFEST} came "
                     f"within {PUBLISH_WAIT_S:g} s: an ingest-dump is writing it, or was stopped while publishing; "
                     "open it again once that run ends, or rerun the ingest-dump command that wrote it")


def read_index_manifest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of the index at ``path``, after the checks that need no table file.

    Refused: no folder, no manifest (an ingest killed while publishing leaves that state), a
    manifest that is not a JSON object or lists no table files, and an index format other than
    :data:`INDEX_FORMAT`. Another package version with the same format is accepted with a warning.
    """
    require_path(path, "the index path", "the folder `envbench ingest-dump --out` wrote", "data/index")
    root = Path(path)
    man = root / MANIFEST
    if root.exists() and not root.is_dir():
        raise InputError(f"{root} is a file, not an index; give the folder `envbench ingest-dump --out` wrote")
    if not man.is_file() and claim_of(man).is_file():
        _wait_for_publish(root, man)
    if not man.is_file():
        if root.is_dir() and (any((root / t).is_dir() for t in TABLES) or any(root.glob(".staging-*"))):
            raise InputError(f"index at {root} is incomplete: it has no {MANIFEST} (an ingest was stopped while "
                             "publishing, or the file was removed); rerun the ingest-dump command that wrote it, "
                             f"or {reingest_hint(root)}")
        if re.fullmatch(r"[QPL][1-9][0-9]{0,17}", str(root)) and not root.exists():
            # "envbench index get Q5 data/index": the id where the index goes
            raise InputError(f"no index at {root}, a Wikidata id, not a folder; give the folder `envbench "
                             "ingest-dump --out` wrote (`envbench index get DIR ID`: the folder first)")
        raise InputError(f"no index at {root}; run `envbench ingest-dump DUMP --out {root}` first")
    try:
        data = orjson.loads(man.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{man}: not a valid index manifest ({exc}); {reingest_hint(root)}") from None
    if not isinstance(data, dict):
        raise InputError(f"{man}: not a valid index manifest (a JSON {type(data).__name__}, not an object); "
                         f"{reingest_hint(root)}")
    outputs = data.get("outputs")
    if not isinstance(outputs, list) or not all(
            isinstance(o, dict) and isinstance(o.get("name"), str) and isinstance(o.get("sha256"), str)
            and isinstance(o.get("bytes"), int) for o in outputs):
        raise InputError(f"{man}: not a valid index manifest (no list of files with name, bytes and sha256); "
                         f"{reingest_hint(root)}")
    if not table_files(data):
        raise InputError(f"{man}: not an index manifest (it lists no table files; step {data.get('step')!r}); "
                         "give the folder that `envbench ingest-dump` wrote")
    fmt = data.get("index_format", INDEX_FORMAT)
    made_by = data.get("package_version")
    if fmt != INDEX_FORMAT:
        raise InputError(f"index at {root} has format {fmt!r} (made by envbench {made_by or '?'}); envbench "
                         f"{package_version()} reads format {INDEX_FORMAT}; {reingest_hint(root)}")
    if isinstance(made_by, str) and made_by != package_version() and str(root) not in _warned_versions:
        _warned_versions.add(str(root))
        log.warning("index at %s was made by envbench %s; this is envbench %s (the same index format %d, so it "
                    "is read as it is)", root, made_by, package_version(), INDEX_FORMAT)
    return data


def table_files(manifest: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The manifest's table files by name (``<table>/<file>.parquet``), in name order."""
    out = {}
    for o in manifest.get("outputs") or []:
        table, _, rest = str(o.get("name", "")).partition("/")
        if table in TABLES and rest.endswith(".parquet") and "/" not in rest:
            out[o["name"]] = o
    return dict(sorted(out.items()))


def _table_of(name: str) -> str:
    return name.split("/", 1)[0]


def check_files(path: str | os.PathLike[str], manifest: Mapping[str, Any]) -> None:
    """Every listed table file present with its recorded size, and no unlisted file beside them."""
    root = Path(path)
    listed = table_files(manifest)
    problems: list[str] = []
    missing_tables = sorted({_table_of(n) for n in listed} - {t for t in TABLES if (root / t).is_dir()})
    if missing_tables:  # the words of WikidataIndex.require, which names a table the index never had
        raise InputError(f"index at {root} has no table '{missing_tables[0]}'; "
                         f"rerun `envbench ingest-dump DUMP --out {root} --force`")
    for name, entry in listed.items():
        if _table_of(name) in missing_tables:
            continue
        try:
            size = (root / name).stat().st_size
        except FileNotFoundError:
            problems.append(f"table '{_table_of(name)}' is damaged ({name} is missing)")
            continue
        if size != entry["bytes"]:
            problems.append(f"table '{_table_of(name)}' is damaged ({name} has {size:,} bytes, "
                            f"manifest.json says {entry['bytes']:,})")
    for table in sorted({_table_of(n) for n in listed}):
        for f in sorted((root / table).glob("*.parquet")) if (root / table).is_dir() else []:
            name = f"{table}/{f.name}"
            if name not in listed:
                problems.append(f"table '{table}' has a file that manifest.json does not list ({name})")
    if problems:
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise InputError(f"index at {root}: {problems[0]}{more}; {reingest_hint(root)}")


# ----------------------------------------------------------------------------- file hashes


def _stat_key(p: Path) -> list[int]:
    st = p.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _cache_file(root: Path) -> Path:
    """Where the hashes of the index at ``root`` are remembered: in it, or per user when it is read-only."""
    if os.access(root, os.W_OK):
        return root / HASH_CACHE
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    key = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    return base / "envbench" / "file-hashes" / f"{key}.json"


def _load_cache(root: Path) -> dict[str, list[Any]]:
    try:
        data = orjson.loads(_cache_file(root).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    return files if isinstance(files, dict) else {}


def _save_cache(root: Path, files: Mapping[str, list[Any]]) -> None:
    try:
        write_json_atomic(_cache_file(root), {"path": str(root.resolve()), "files": dict(files)})
    except OSError:  # nowhere to write: hashing again next time is the only cost
        pass


def remember_hashes(path: str | os.PathLike[str], outputs: Iterable[Mapping[str, Any]]) -> None:
    """Record the sha256s of files just written (the ingest's manifest entries) in the hash cache."""
    root = Path(path)
    files = {}
    for o in outputs:
        p = root / o["name"]
        if p.is_file() and p.stat().st_size == o["bytes"]:
            files[o["name"]] = [*_stat_key(p), o["sha256"]]
    _save_cache(root, files)


def file_hashes(path: str | os.PathLike[str], names: Iterable[str], *, use_cache: bool = True) -> dict[str, str]:
    """sha256 of each named file under ``path``; with ``use_cache``, unchanged files are not read."""
    root = Path(path)
    cache = _load_cache(root) if use_cache else {}
    out: dict[str, str] = {}
    fresh: dict[str, list[Any]] = {}
    for name in names:
        p = root / name
        key = _stat_key(p)
        hit = cache.get(name)
        if isinstance(hit, list) and len(hit) == 5 and hit[:4] == key and isinstance(hit[4], str):
            out[name] = hit[4]
        else:
            out[name] = sha256_file(p)
            if _stat_key(p) != key:  # written while it was read: not safe to remember
                continue
        fresh[name] = [*key, out[name]]
    if fresh != {n: cache.get(n) for n in fresh}:
        _save_cache(root, fresh)
    return out


def damaged_files(path: str | os.PathLike[str], manifest: Mapping[str, Any], *, use_cache: bool = True
                  ) -> list[str]:
    """The listed table files whose sha256 differs from the manifest's (after :func:`check_files`)."""
    listed = table_files(manifest)
    got = file_hashes(path, listed, use_cache=use_cache)
    return [n for n, entry in listed.items() if got[n] != entry["sha256"]]


def _damaged_error(root: Path, bad: list[str]) -> InputError:
    more = f" and {len(bad) - 1} more files" if len(bad) > 1 else ""
    tables = sorted({_table_of(n) for n in bad})
    what = f"table '{tables[0]}' is" if len(tables) == 1 else "tables " + ", ".join(f"'{t}'" for t in tables) + " are"
    match = "do not match their sha256s" if more else "does not match its sha256"
    return InputError(f"index at {root}: {what} damaged ({bad[0]}{more} {match} in manifest.json); "
                      f"{reingest_hint(root)}")


def index_fingerprint(path: str | os.PathLike[str]) -> str:
    """sha256 over the index's table files, from the files themselves (hashes remembered per file).

    A file that differs from the manifest (swapped, edited, damaged) is an error naming its table,
    so the fingerprint of an index that passes always equals the one its manifest implies: two
    ingests of one dump give the same fingerprint (the manifest itself, with its timings, is not hashed).
    """
    root = Path(path)
    manifest = read_index_manifest(root)
    check_files(root, manifest)
    listed = table_files(manifest)
    got = file_hashes(root, listed)
    bad = [n for n, entry in listed.items() if got[n] != entry["sha256"]]
    if bad:
        raise _damaged_error(root, bad)
    return sha256_bytes(dumps_json(sorted((n, got[n]) for n in listed)))


# ----------------------------------------------------------------------------- the index


class WikidataIndex:
    """An in-memory DuckDB connection with one view per table over DIR/<table>/*.parquet.

    Opening checks the manifest and the files (see the module docstring); ``verify`` hashes every
    file again instead of trusting the remembered hashes of unchanged files. A DuckDB error on a damaged file, in a method or anywhere
    in a ``with WikidataIndex(...)`` block (``ix.con`` included), becomes an ``InputError`` that
    names the table and says to re-ingest.

    >>> with WikidataIndex("data/index") as ix:        # doctest: +SKIP
    ...     ix.names("Q42"), ix.types("Q42"), ix.find("douglas adams")
    """

    def __init__(self, path: str | os.PathLike[str], *, threads: int | None = None, verify: bool = False) -> None:
        import duckdb

        self._manifest = read_index_manifest(path)  # before Path(path): Path("") is the current folder
        self.path = Path(path)
        check_files(self.path, self._manifest)
        self.verify(use_cache=not verify)
        listed = table_files(self._manifest)
        present = [t for t in TABLES if any(_table_of(n) == t for n in listed)]
        config: dict[str, Any] = {}
        if threads:
            config["threads"] = threads
        self.con = duckdb.connect(":memory:", config=config)
        self._tables = present
        self._materialized: set[str] = set()
        try:
            for table in present:
                self.con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{self._glob(table)}')")
        except Exception as exc:
            self._raise_if_damaged(exc)
            raise
        for table in OPTIONAL_TABLES:
            if table not in present:  # written before the table existed: queries over it find nothing
                self.con.execute(f"CREATE VIEW {table} AS {_empty_select(table)}")

    # ------------------------------------------------------------------ plumbing
    def _glob(self, table: str) -> str:
        """The table's Parquet files as a quoted-for-SQL glob."""
        return str(self.path.resolve() / table / "*.parquet").replace("'", "''")

    def tables(self) -> list[str]:
        """The tables the index was written with (an optional table it lacks is not listed)."""
        return list(self._tables)

    def has(self, table: str) -> bool:
        """Whether the index was written with ``table``. An index made before demonyms existed has
        no ``demonyms`` table: its view is empty, and this is how to tell "none known" from "none"."""
        return table in self._tables

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
            if table in OPTIONAL_TABLES and table not in self._tables:
                continue  # an empty view already
            self.require(table)
            if table in self._materialized:
                continue
            self._execute(f"DROP VIEW IF EXISTS {table}")
            self._execute(f"CREATE TABLE {table} AS SELECT * FROM read_parquet('{self._glob(table)}')")
            self._materialized.add(table)

    def manifest(self) -> dict[str, Any]:
        return dict(self._manifest)

    def verify(self, *, use_cache: bool = False) -> int:
        """Check every table file's sha256 against the manifest; the number of files checked.

        Without ``use_cache`` every file is read (``index info --verify``)."""
        bad = damaged_files(self.path, self._manifest, use_cache=use_cache)
        if bad:
            raise _damaged_error(self.path, bad)
        return len(table_files(self._manifest))

    def fingerprint(self) -> str:
        """See :func:`index_fingerprint`."""
        return index_fingerprint(self.path)

    def close(self) -> None:
        if hasattr(self, "con"):
            self.con.close()

    def __enter__(self) -> WikidataIndex:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        try:
            if exc is not None:
                self._raise_if_damaged(exc)
        finally:
            self.close()

    def _raise_if_damaged(self, exc: BaseException) -> None:
        """Replace a DuckDB error that a damaged table file explains by one line naming the table.

        Any DuckDB error but an interrupt or running out of memory is checked: a damaged schema
        can look like a query's mistake (a column not found). The hashes are remembered, so the
        check costs a stat per file unless a file changed."""
        import duckdb

        if not isinstance(exc, duckdb.Error) or isinstance(exc, (duckdb.InterruptException,
                                                                  duckdb.OutOfMemoryException)):
            return
        try:
            check_files(self.path, self._manifest)
            bad = damaged_files(self.path, self._manifest)
        except InputError as damaged:  # a file is missing or has another size
            raise InputError(str(damaged)) from None
        except OSError:
            return  # the original error says more than a failed check would
        if bad:
            raise _damaged_error(self.path, bad) from None

    def _execute(self, sql: str, params: list[Any] | None = None) -> Any:
        try:
            return self.con.execute(sql, params) if params is not None else self.con.execute(sql)
        except Exception as exc:
            self._raise_if_damaged(exc)
            raise

    def _col(self, sql: str, params: list[Any]) -> list[Any]:
        return [r[0] for r in self._execute(sql, params).fetchall()]

    # ------------------------------------------------------------------ lookups
    def entity(self, qid: str) -> dict[str, Any] | None:
        """The entities row of ``qid`` as a dict, or None."""
        self.require("entities")
        cur = self._execute("SELECT * FROM entities WHERE id = ? LIMIT 1", [qid])
        row = cur.fetchone()
        if row is None:
            return None
        return dict(zip([d[0] for d in cur.description], row))

    def labels_of(self, qids: Iterable[str]) -> dict[str, str]:
        """The English label of each id that has one (one query for many ids)."""
        self.require("entities")
        ids = sorted(set(qids))
        if not ids:
            return {}
        rows = self._execute("SELECT id, label FROM entities WHERE id IN (SELECT unnest(?)) AND label IS NOT NULL",
                             [ids]).fetchall()
        return dict(sorted(rows))

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
        row = self._execute("SELECT popularity FROM entities WHERE id = ?", [qid]).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def constraints(self, pid: str) -> list[dict[str, Any]]:
        """P2302 constraints of a property: [{constraint_type, class, relation}], sorted."""
        self.require("property_constraints")
        cur = self._execute(
            """SELECT constraint_type, class, relation FROM property_constraints WHERE property = ?
               ORDER BY constraint_type, class NULLS FIRST, relation NULLS FIRST""",
            [pid],
        )
        return [dict(zip(("constraint_type", "class", "relation"), r)) for r in cur.fetchall()]

    def demonyms(self, qid: str, lang: str = DEMONYM_LANGUAGE) -> list[str]:
        """P1549 demonyms of ``qid`` in ``lang`` ("Portuguese" for Q45): preferred rank first, then
        by text, each text once. Empty when none is known, also on an index without the table."""
        return list(dict.fromkeys(d.text for d in self.demonyms_of([qid], lang).get(qid, [])))

    def demonyms_of(self, qids: Iterable[str], lang: str = DEMONYM_LANGUAGE) -> dict[str, list[Demonym]]:
        """See :func:`demonyms_of` (one query for many ids)."""
        try:
            return demonyms_of(self.con, qids, lang)
        except Exception as exc:
            self._raise_if_damaged(exc)
            raise

    def name_tokenizer(self) -> str | None:
        """The tokenizer whose tokens the ``name_tokens`` table holds (``NameTokenizer.version``), or
        None when the index has none stored (made before the table, or ingested without a tokenizer)."""
        return self.name_tokenizer_facts().get("tokenizer")

    def name_tokenizer_facts(self) -> dict[str, Any]:
        """The manifest's record of the ``name_tokens`` tokenizer: its ``tokenizer`` (version) and the
        facts it gave (``NameTokenizer.facts``); {} when the index has none stored."""
        made = self._manifest.get("name_tokens")
        return dict(made) if self.has("name_tokens") and isinstance(made, dict) and made.get("tokenizer") else {}

    def find_demonym(self, name: str, lang: str = DEMONYM_LANGUAGE) -> list[str]:
        """Ids with a demonym ``name`` ("American" -> Q30, ...): exact matches first, then case- and
        diacritic-folded ones; each group by popularity (descending), then id."""
        self.require("entities")
        return self._col(
            """WITH hits AS (
                   SELECT id, min(CASE WHEN text = ? THEN 0 ELSE 1 END) AS tier
                   FROM demonyms WHERE lang = ? AND (text = ? OR folded = ?) GROUP BY id)
               SELECT h.id FROM hits h LEFT JOIN entities e ON e.id = h.id
               ORDER BY h.tier, coalesce(e.popularity, 0) DESC, h.id""",
            [name, lang, name, fold(name)],
        )

    def counts(self) -> dict[str, int]:
        """Row count per table (reads Parquet footers only)."""
        return {t: int(self._execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in self._tables}

    # ------------------------------------------------------------------ what `envbench index` shows
    def check_language(self, lang: str, names_only: bool = False) -> None:
        """Refuse a language whose names the index does not hold (ingest-dump's ``--languages``; for a
        card also English, whose labels and demonyms are always read, but not for a search, which reads
        names only): asked for, it would show no alias and find nothing, as if the entities had none. An
        index whose manifest does not list its languages accepts any."""
        params = self._manifest.get("parameters")
        langs = params.get("languages") if isinstance(params, dict) else None
        if isinstance(langs, list) and langs and lang not in langs and (names_only or lang != "en"):
            add = lang if shorten(lang) == lang else "<the language>"  # a pasteable option, or none
            raise InputError(f"{self.path} holds names in {', '.join(map(str, langs))} only, not "
                             f"{shorten(repr(lang))}; pass --lang {langs[0]}, or ingest the dump again with "
                             f"--languages {','.join(map(str, langs))},{add}")

    def card(self, qid: str, lang: str = "en") -> dict[str, Any]:
        """One entity as `envbench index get` shows it: label, description, aliases (the names
        other than the label, sorted), demonyms (in ``lang``; :meth:`demonyms`), P21 (sex or gender)
        rows as [value, rank] (empty for most items, and on an index without the table), types,
        sitelinks, enwiki, popularity."""
        qid = entity_id(require_text(qid, "the id"))
        self.check_language(require_text(lang, "the language"))
        ent = self.entity(qid)
        if ent is None:
            raise InputError(f"{shorten(repr(qid))} is not in the index at {self.path}; check the id (e.g. Q42)")
        names = self.names(qid, lang)
        label = ent["label"]
        aliases = [n for n in names if n != label] if names and names[0] == label else names
        return {
            "id": ent["id"],
            "type": ent["type"],
            "label": label,
            "description": ent["description"],
            "aliases": aliases,
            "demonyms": self.demonyms(qid, lang),
            "p21": [list(r) for r in genders_of(self.con, [qid]).get(qid, [])],
            "types": self.types(qid),
            "sitelinks": ent["sitelinks"],
            "enwiki": ent["enwiki"],
            "popularity": ent["popularity"],
        }

    def search(self, name: str, lang: str = "en", limit: int | None = None) -> list[dict[str, Any]]:
        """The entities :meth:`find` returns, at most ``limit``, as {id, label, description, popularity}."""
        require_text(name, "the name")
        self.check_language(require_text(lang, "the language"), names_only=True)
        rows = []
        for qid in self.find(name, lang)[:limit]:
            ent = self.entity(qid) or {}
            rows.append({"id": qid, "label": ent.get("label"), "description": ent.get("description"),
                         "popularity": ent.get("popularity", 0)})
        return rows


@dataclass(frozen=True)
class Demonym:
    """One row of the demonyms table, for one item and language."""

    text: str  # "Portuguese"
    rank: str  # not "deprecated" (those are not ingested): "preferred" or "normal"
    form: str | None  # the P518 item (Q499327 masculine, Q1775415 feminine, Q146786 plural), or None
    folded: str  # wikidata_index.names.fold(text), as names.folded


def demonyms_of(con: Any, qids: Iterable[str], lang: str = DEMONYM_LANGUAGE) -> dict[str, list[Demonym]]:
    """P1549 demonyms of each of ``qids`` in ``lang``, over a DuckDB connection with a ``demonyms``
    view (``WikidataIndex.con``: on an index without the table the view is empty, so the answer is
    {}, "no demonyms known"). Ids without one are left out; each list has the preferred rank
    first, then text, then form (None first)."""
    ids: Sequence[str] = sorted(set(qids))
    if not ids:
        return {}
    rows = con.execute(
        """SELECT d.id, d.text, d.rank, d.form, d.folded
           FROM demonyms d JOIN (SELECT unnest(?::VARCHAR[]) AS id) q ON q.id = d.id
           WHERE d.lang = ?
           ORDER BY d.id, d.rank = 'preferred' DESC, d.text, d.form NULLS FIRST, d.rank""",
        [list(ids), lang],
    ).fetchall()
    out: dict[str, list[Demonym]] = {}
    for qid, text, rank, form, folded in rows:
        out.setdefault(qid, []).append(Demonym(text, rank, form, folded))
    return out


def genders_of(con: Any, qids: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    """P21 (sex or gender) rows of each of ``qids`` as (value, rank), over a connection with a
    ``genders`` view (on an index without the table the view is empty: {}). Ids without one are left
    out; each list is sorted by value, then rank."""
    ids: Sequence[str] = sorted(set(qids))
    if not ids:
        return {}
    rows = con.execute(
        """SELECT g.id, g.gender, g.rank FROM genders g JOIN (SELECT unnest(?::VARCHAR[]) AS id) q ON q.id = g.id
           ORDER BY g.id, g.gender, g.rank""", [list(ids)]).fetchall()
    out: dict[str, list[tuple[str, str]]] = {}
    for qid, gender, rank in rows:
        out.setdefault(qid, []).append((gender, rank))
    return out


def name_tokens_of(con: Any, names: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The stored tokens of each of ``names`` (whitespace collapsed, as the table keys them) that the
    ``name_tokens`` table holds, over a connection with its view (``WikidataIndex.con``). Whether the
    table can be trusted is :meth:`WikidataIndex.name_tokenizer`'s answer, not this one's."""
    wanted = sorted(set(names))
    if not wanted:
        return {}
    rows = con.execute("""SELECT t.name, t.tokens FROM name_tokens t
                          SEMI JOIN (SELECT unnest(?::VARCHAR[]) AS name) q ON q.name = t.name""",
                       [wanted]).fetchall()
    return {name: tuple(tokens) for name, tokens in rows}


def _empty_select(table: str) -> str:
    """A SELECT with the table's columns (strings and lists of strings, the optional tables' types) and no rows."""
    cols = ", ".join(f'NULL::{"VARCHAR[]" if hasattr(f.type, "value_type") else "VARCHAR"} AS "{f.name}"'
                     for f in TABLES[table])
    return f"SELECT {cols} WHERE false"


@dataclass
class IndexInfo:
    """What `envbench index info` shows: the manifest, row counts, and how many files were verified."""

    path: Path
    rows: dict[str, int]
    manifest: dict[str, Any]
    verified_files: int | None = None  # None: not verified
    notes: list[str] = field(default_factory=list)


def index_info(path: str | os.PathLike[str], *, verify: bool = False) -> IndexInfo:
    """Row counts and manifest of the index at ``path``; with ``verify`` every file is hashed again."""
    with WikidataIndex(path, verify=verify) as ix:
        verified = len(table_files(ix.manifest())) if verify else None
        rows = ix.counts()
        manifest = ix.manifest()
    notes = []
    made_by = manifest.get("package_version")
    if isinstance(made_by, str) and made_by != package_version():
        notes.append(f"made by envbench {made_by}; this is envbench {package_version()} (same index format)")
    for table in OPTIONAL_TABLES:
        if table not in rows:
            notes.append(f"no {table} table (the index was made before it existed); {reingest_hint(path)} "
                         f"to add it")
    return IndexInfo(Path(path), rows, manifest, verified, notes)


__all__ = ["HASH_CACHE", "INDEX_FORMAT", "Demonym", "IndexInfo", "WikidataIndex", "check_files", "damaged_files",
           "demonyms_of", "file_hashes", "genders_of", "index_fingerprint", "index_info", "name_tokens_of", "read_index_manifest",
           "remember_hashes", "table_files"]
