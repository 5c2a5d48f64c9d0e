"""Wikidata JSON dump -> Parquet tables + index.duckdb + manifest.json, resumable and deterministic.

Flow: the main process decompresses and cuts the stream into chunks of ``chunk_lines`` lines;
a process pool parses chunks (partial parsing with pysimdjson) into per-chunk Parquet files in
``DIR/.staging-<key>/`` with a done-marker each (etl.runner). When every chunk is done, DuckDB
computes popularity over the staged edges, and the final tables are written sorted, with fixed
row groups, into the step's staging folder (``etl.step.Step``); only then are they renamed into
DIR, and the manifest written last. A SIGKILL at any moment leaves DIR as it was (or, during the
renames, without a manifest, which no reader accepts); rerunning the same command resumes from
the finished chunks, or from the parsed stage when only the final tables were left to write.

What an ingest refuses or leaves behind:

- An index with no item and no property is an error, not an empty index.
- Over an existing index, a new one that would *lower* it (fewer entities, or no names in a
  language the old one has: :func:`lowers`) is refused unless ``force``.
- The lock is an ``flock`` on DIR itself: no lock file. On failure the resumable stage
  ``DIR/.staging-<key>/`` is kept only when it holds finished chunks and the run was stopped
  rather than refused (Ctrl-C, a kill, a dead worker, a full disk); when the input is the
  problem it is removed, and so is a DIR that the run created and left empty.
- What an ingest makes to remove later (the stage, its RAM spool in /dev/shm, the temporary
  folder of index.duckdb) carries ``etl.step``'s staging marker from the moment it has its name
  (made and marked as ``.envbench-new-*``, then renamed: a kill before the rename leaves that, which
  a rerun removes), and is removed only with that marker: a folder of the user's with such a name,
  even empty and in the exact form the run names it, is left alone (and refused when it is the very
  stage the run needs). Memory is about 4 x workers x chunk size:
  ``--workers`` is at most MAX_WORKERS and ``--chunk-mb`` at most MAX_CHUNK_MB, and running out of
  memory is one line that says to lower them.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import gc
import hashlib
import importlib
import logging
import mmap
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from etl.io import (
    InputError,
    is_no_space,
    is_too_large,
    require_file,
    require_path,
    too_large_message,
    write_json_atomic,
)
from etl.parquet import PartWriter
from etl.readers import Chunk, DumpStream, iter_chunks, iter_records, record_of_line
from etl.runner import ShardRunner, WorkerDied, shard_name
from etl.step import (
    STAGING_MARKER,
    Step,
    claim_of,
    is_staging,
    make_marked,
    make_staging,
    read_manifest,
    remove_new_staging,
    remove_staging,
    remove_stale_claim,
)
from wikidata_index.extract import EntityParser, Malformed, Rows, Skipped, extract_entity, iter_envelope
from wikidata_index.index import INDEX_FORMAT, remember_hashes, table_files
from wikidata_index.inputs import combine as combine_inputs
from wikidata_index.inputs import expand as expand_inputs
from wikidata_index.inputs import origin
from wikidata_index.names import FORMAT_CHARACTERS, NameTokenizer, char_class, fold
from wikidata_index.provenance import dump_provenance
from wikidata_index.schema import EXTRACTED_TABLES, TABLES

log = logging.getLogger("wikidata_index.ingest")

# Bumped whenever extraction changes, so stale staged chunks are never reused. (Staged chunks
# without the files of empty tables, since version 1 too, read the same.) 2: demonyms (P1549). 3: genders (P21).
# 4: unusable names dropped (usable_names).
EXTRACT_VERSION = 4
DEFAULT_CHUNK_BYTES = 32 << 20
FAST_MAX_CHUNK = 1 << 30
# Bounds of --workers and --chunk-mb: a process (and a spool slot) per worker, and memory of about
# 4 x workers x chunk; far past these a run ends in the OS's words (no thread, no memory), not ours.
MAX_WORKERS = 256
MAX_CHUNK_MB = 1024  # the C extractor takes chunks below FAST_MAX_CHUNK (1 GiB)
# Owners named in the staging markers (etl.step.mark_staging) of what an ingest removes later.
STAGE_OWNER = "ingest-dump chunks"
SPOOL_OWNER = "ingest-dump spool"
DB_OWNER = "index.duckdb"
DB_STAGING = ".staging-index-db-"
# Final columns written without a dictionary: unique per row, or sorted so that repeats are
# adjacent (compression takes care of those); building a dictionary that is dropped as too large,
# or that saves nothing, costs a hash per value.
PLAIN_COLUMNS = {"entities": ("id", "label", "description", "enwiki"), "names": ("id",), "types": ("id",),
                 "subclasses": ("id",), "edges": ("subject",)}
# Final tables written concurrently (one DuckDB cursor and one Parquet writer each).
FINAL_TABLES_AT_ONCE = 2
# The order in which the final tables other than entities are started: largest first.
FINAL_SCHEDULE = ("edges", "names", "types", "subclasses", "property_constraints", "demonyms", "genders",
                  "properties")
ERROR_SAMPLES_PER_CHUNK = 20
MANIFEST_ERROR_SAMPLES = 100
STAGE_SCHEMAS: dict[str, pa.Schema] = {
    t: (pa.schema([f for f in TABLES[t] if f.name != "popularity"]) if t == "entities" else TABLES[t])
    for t in EXTRACTED_TABLES
}
# Names tokenised per call of NameTokenizer.tokenize (name_tokens is written in this order, sorted).
NAME_TOKENS_BATCH = 1 << 14

# entities when the dump holds no item-valued statement: popularity unknown (null) for every item
NO_POPULARITY_QUERY = "SELECT e.*, NULL::BIGINT AS popularity FROM staged_entities e"
# How each final table is made from its staged rows: (the query, its sort order, the key). Rows
# come out sorted so that, among rows with the same key, the one to keep comes first, and
# repeats of a key are dropped while writing (_drop_repeats): one sort, instead of a hash
# aggregation or a window and then a sort. Sorting is byte order on ids, which also makes
# row-group statistics prune point lookups. Keys of None mean whole rows.
FINAL_QUERIES: dict[str, tuple[str, str, list[str] | None]] = {
    # An entity that occurs twice keeps its least row, by type, label, ... (nulls last).
    "entities": ("""SELECT e.*, coalesce(p.n, 0)::BIGINT AS popularity
                    FROM staged_entities e LEFT JOIN pop p ON p.id = e.id""",
                 "id, type, label, description, sitelinks, enwiki", ["id"]),
    # A name that is both a label and an alias is a label (true sorts first with DESC); folded
    # is a function of name.
    "names": ("SELECT * FROM staged_names", "id, lang, name, is_label DESC", ["id", "lang", "name"]),
    "types": ("SELECT * FROM staged_types", "id, class, rank", None),
    "subclasses": ("SELECT * FROM staged_subclasses", "id, superclass, rank", None),
    "edges": ("SELECT * FROM staged_edges", "subject, property, object", None),
    "properties": ("SELECT * FROM staged_properties", "id, datatype, label", ["id"]),
    "property_constraints": ("SELECT * FROM staged_property_constraints",
                             "property, constraint_type, class NULLS FIRST, relation NULLS FIRST", None),
    # A demonym stated twice (in copies of an entity, or twice in one) keeps its best rank
    # (preferred sorts first); folded is a function of text.
    "genders": ("SELECT * FROM staged_genders", "id, gender, rank", None),
    "demonyms": ("SELECT * FROM staged_demonyms",
                 "id, lang, text, form NULLS FIRST, rank = 'preferred' DESC, rank", ["id", "lang", "text", "form"]),
}


@dataclass
class IngestResult:
    out: Path
    rows: dict[str, int]
    stats: dict[str, int]
    errors: list[dict[str, Any]]
    seconds: float
    resumed_chunks: int = 0
    manifest: dict[str, Any] = field(default_factory=dict)
    up_to_date: bool = False  # the same command had made this index: nothing was read or written

    def summary(self) -> str:
        rows = ", ".join(f"{t} {n:,}" for t, n in self.rows.items())
        skipped = {k: v for k, v in self.stats.items() if k.startswith(("skipped_", "malformed"))}
        extra = "".join(f", {k} {v:,}" for k, v in sorted(skipped.items()))
        unusable = self.stats.get("unusable_names", 0)
        if unusable:  # never drawn: see ingest.UNUSABLE_NAME
            extra += (f", unusable names {unusable:,} (left out: control or format characters, or more than "
                      f"{MAX_NAME_CHARS} characters)")
        resumed = f" ({self.resumed_chunks} chunks reused)" if self.resumed_chunks else ""
        head = (f"index at {self.out} is up to date (made by the same command from the same dump); pass --force to "
                "ingest it again" if self.up_to_date else f"index written to {self.out} in {self.seconds:.1f}s{resumed}")
        return (
            f"{head}\n"
            f"rows: {rows}\n"
            f"records: {self.stats.get('records', 0):,}, items {self.stats.get('kept_item', 0):,}, "
            f"properties {self.stats.get('kept_property', 0):,}{extra}"
        )


# ----------------------------------------------------------------------------- chunk worker


EXTRACTORS = ("auto", "c", "python")


@functools.lru_cache(maxsize=1)
def fast_extractor() -> Any:
    """The compiled extractor module, or None when it is not built (or built for other tables)."""
    from wikidata_index import extract

    mod = extract._fastextract
    if mod is None:
        return None
    kinds = {pa.string(): "string", pa.int32(): "int32", pa.bool_(): "bool"}
    want = {t: [(f.name, kinds.get(f.type)) for f in s] for t, s in STAGE_SCHEMAS.items()}
    got = {t: [tuple(c) for c in cols] for t, cols in mod.layout().items()}
    if got != want:  # a stale build from an older schema: rebuild with `make setup`
        log.warning("wikidata_index._fastextract was built for other tables; using the Python extraction")
        return None
    return mod


def resolve_extractor(extractor: str) -> str:
    """'c' or 'python' for a requested extractor ('auto' takes C when it is built)."""
    if extractor not in EXTRACTORS:
        raise InputError(f"--extractor must be one of {', '.join(EXTRACTORS)}, got {extractor!r}")
    if extractor == "python":
        return "python"
    if fast_extractor() is None:
        if extractor == "c":
            raise InputError(
                "the compiled extractor (wikidata_index._fastextract) is not built; reinstall with a C compiler "
                "present (`make setup`), or use --extractor python"
            )
        return "python"
    return "c"


def parse_chunk(data: bytes | mmap.mmap, offset: int, languages: Sequence[str], extractor: str = "auto",
                entity_lines: list[int] | None = None
                ) -> tuple[dict[str, pa.Table], dict[str, int], list[dict[str, Any]], int]:
    """Staged tables, stats, error samples (line numbers relative to the chunk) and the line count
    of one chunk of dump lines. ``offset`` is the chunk's byte offset in the decompressed stream.
    ``entity_lines``, when given, receives the line of each row of the entities table.

    The C extractor takes the usual records and hands every other line back to the Python path,
    which decides what it is (malformed, skipped, an envelope, or unusual but valid); both give
    the same rows for the same record.
    """
    parser = EntityParser()
    rows = Rows()
    stats: dict[str, int] = {"records": 0, "malformed": 0}
    errors: list[dict[str, Any]] = []

    def bad(line: int, offset: int, reason: str, message: str, raw: bytes) -> None:
        stats["malformed"] += 1
        stats[f"malformed_{reason}"] = stats.get(f"malformed_{reason}", 0) + 1
        if len(errors) < ERROR_SAMPLES_PER_CHUNK:
            end = 80  # cut between characters, never inside one (a cut "é" would print as U+FFFD)
            while 0 < end < len(raw) and raw[end] & 0xC0 == 0x80:
                end -= 1
            sample = raw[:end].decode("utf-8", errors="replace")
            errors.append({"line": line, "offset": offset, "reason": reason, "message": message, "sample": sample})

    fast_tables: dict[str, pa.Table] = {}
    c_lines: list[int] = []  # the line of each entity row: C rows first, then the Python path's
    py_lines: list[int] = []
    # The C columns have 32-bit Arrow offsets; no column comes near 2 GiB below a 1 GiB chunk.
    if resolve_extractor(extractor) == "c" and len(data) < FAST_MAX_CHUNK:
        columns, fast_stats, spans, n_lines = fast_extractor().extract_chunk(data, tuple(languages), fold)
        _merge_stats(stats, fast_stats)
        for line, start, stop in spans:
            rec = record_of_line(data[start:stop], 0, stop - start)
            if rec is not None:
                before = rows.count("entities")
                _handle_record(parser, line, offset + start, rec, languages, rows, stats, bad)
                py_lines += [line] * (rows.count("entities") - before)
        fast_tables = {t: _table_from_buffers(columns[t], schema) for t, schema in STAGE_SCHEMAS.items()}
        if entity_lines is not None:
            c_lines = _lines_of_ids(data, fast_tables["entities"].column("id").to_pylist())
    else:
        data = data if isinstance(data, bytes) else bytes(data)
        lines = [0]
        for line, rec_offset, raw in iter_records(Chunk(0, offset, data, size=len(data)), lines):
            before = rows.count("entities")
            _handle_record(parser, line, rec_offset, raw, languages, rows, stats, bad)
            py_lines += [line] * (rows.count("entities") - before)
        n_lines = lines[0]
    columns = rows.columns
    tables = {}
    for table, schema in STAGE_SCHEMAS.items():
        cols = columns[table]
        t = pa.Table.from_arrays([pa.array(cols[f.name], type=f.type) for f in schema], schema=schema)
        if table in fast_tables:
            t = pa.concat_tables([fast_tables[table], t]) if t.num_rows else fast_tables[table]
        tables[table] = t
    if entity_lines is not None:
        entity_lines += c_lines + py_lines
    for table, column in NAME_COLUMNS.items():
        tables[table], dropped = usable_names(tables[table], column)
        if dropped:
            stats["unusable_names"] = stats.get("unusable_names", 0) + dropped
    return tables, stats, errors, n_lines


# Names that a benchmark must never draw: control characters (NUL and the like; tab, newline and
# carriage return are whitespace, collapsed where names are compared), format characters (Unicode Cf:
# the bidi embeddings, overrides and isolates, "\u202eevil" showing as "live", and the invisible ones, a
# zero-width space or joiner, a right-to-left mark, a byte-order mark, a soft hyphen, which would come
# out inside the new names of renamed documents: names.FORMAT_CHARACTERS), or more characters than
# Wikidata allows in a label or alias (250). Dropped from names and demonyms as the chunk is staged,
# counted in the manifest's stats as unusable_names. (RE2 syntax: pyarrow's regex.)
UNUSABLE_NAME = "[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f" + char_class(FORMAT_CHARACTERS, "re2") + "]"
MAX_NAME_CHARS = 250
NAME_COLUMNS = {"names": "name", "demonyms": "text"}


def usable_names(table: pa.Table, column: str) -> tuple[pa.Table, int]:
    """``table`` without the rows whose ``column`` is not a usable name (UNUSABLE_NAME, MAX_NAME_CHARS),
    and how many went."""
    import pyarrow.compute as pc

    if not table.num_rows:
        return table, 0
    text = table.column(column)
    bad = pc.fill_null(pc.or_(pc.match_substring_regex(text, UNUSABLE_NAME),
                              pc.greater(pc.utf8_length(text), MAX_NAME_CHARS)), False)
    dropped = pc.sum(bad).as_py() or 0
    return (table.filter(pc.invert(bad)) if dropped else table), dropped


LINE_COLUMN = "line"


def _lines_of_ids(data: bytes | mmap.mmap, ids: Sequence[str]) -> list[int]:
    """The line (from 1, in ``data``) of each of ``ids``, the C extractor's entity rows, which come in
    line order: each is looked for as its "id" key from the line after the previous one's (0 when
    not found). A line that the C path handed back may name the id as a value first; then the line
    is off, which only a duplicate's warning would show."""
    out = []
    pos, line = 0, 1
    view = memoryview(data)
    try:
        for qid in ids:
            # the id as the value of an "id" key, written compactly (dumps) or with spaces ("id": "Q1")
            needle = b'"' + qid.encode() + b'"'
            at = data.find(needle, pos)
            while at >= 0 and not _is_id_key(bytes(view[max(pos, at - 32):at])):
                at = data.find(needle, at + 1)
            if at < 0:
                out.append(0)
                continue
            line += bytes(view[pos:at]).count(b"\n")
            out.append(line)
            end = data.find(b"\n", at)
            if end < 0:
                pos = len(data)
            else:
                pos, line = end + 1, line + 1
    finally:
        view.release()
    return out


def _is_id_key(before: bytes) -> bool:
    """Whether the bytes ``before`` a quoted id end in its key: ``"id":`` with any spaces around the colon."""
    head = before.rstrip()
    return head.endswith(b":") and head[:-1].rstrip().endswith(b'"id"')


def _table_from_buffers(columns: Sequence[tuple], schema: pa.Schema) -> pa.Table:
    """A table over the Arrow buffers that the C extractor filled (no per-value Python objects)."""
    arrays = []
    for (kind, n, nulls, valid, offsets, data), f in zip(columns, schema):
        validity = pa.py_buffer(valid) if valid is not None else None
        bufs = [validity, pa.py_buffer(offsets), pa.py_buffer(data)] if kind == "string" else [validity, pa.py_buffer(data)]
        arrays.append(pa.Array.from_buffers(f.type, n, bufs, null_count=nulls))
    return pa.Table.from_arrays(arrays, schema=schema)


def process_chunk(chunk: Chunk, out_dir: Path, *, languages: Sequence[str], extractor: str = "auto") -> dict[str, Any]:
    """Parse one chunk into per-table Parquet files in out_dir; return its stats and error samples."""
    data = chunk.view()  # a ring slot is mapped, not copied
    try:
        lines: list[int] = []
        tables, stats, errors, n_lines = parse_chunk(data, chunk.offset, languages, extractor, lines)
        # Staged beside the entity columns, for the warning that names the lines of a repeated QID.
        tables["entities"] = tables["entities"].append_column(LINE_COLUMN, pa.array(lines, pa.int32()))
        size = len(data)
    finally:
        if isinstance(data, mmap.mmap):
            data.close()
    for table, t in tables.items():
        if table != "entities" and not t.num_rows:
            continue  # no rows, no file: fewer files to write, read and delete (entities is always written)
        # Staged files are read once, locally: no compression, dictionary or statistics to build.
        pq.write_table(t, out_dir / f"{table}.parquet", compression="none", use_dictionary=False,
                       write_statistics=False)
    # Error line numbers are relative to the chunk; the driver makes them absolute.
    return {"stats": stats, "errors": errors, "bytes": size, "lines": n_lines}


def _handle_record(parser: EntityParser, line: int, offset: int, raw: bytes, languages: Sequence[str], rows: Rows,
                   stats: dict[str, int], bad: Any) -> None:
    # A function of its own so every pysimdjson proxy dies on return, before the next parse.
    try:
        record = parser.parse(raw)
    except ValueError:
        stats["records"] += 1
        bad(line, offset, "invalid_json", "invalid JSON", raw)
        return
    envelope = iter_envelope(record)
    for entity in envelope if envelope is not None else (record,):
        stats["records"] += 1
        try:
            etype = extract_entity(entity, languages, rows, stats)
            stats[f"kept_{etype}"] = stats.get(f"kept_{etype}", 0) + 1
        except Skipped as s:
            stats[f"skipped_{s.reason}"] = stats.get(f"skipped_{s.reason}", 0) + 1
        except Malformed as m:
            bad(line, offset, m.reason, str(m), raw)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            # a shape no check above names: say what to look at, not which Python error it raised
            eid = entity.get("id") if hasattr(entity, "get") else None
            who = f"{eid[:40]}: " if isinstance(eid, str) else ""
            bad(line, offset, "bad_structure", f"{who}unexpected structure (a field of the wrong JSON kind, such as "
                "\"claims\": null or a statement that is not an object)", raw)


# ----------------------------------------------------------------------------- driver


def _staging_key(dump: str, languages: Sequence[str], chunk_lines: int | None, chunk_bytes: int) -> str:
    if dump == "-":
        ident: dict[str, Any] = {"stdin": True}
    else:
        st = os.stat(dump)
        ident = {"path": os.path.realpath(dump), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    ident |= {"languages": list(languages), "chunk_lines": chunk_lines, "chunk_bytes": chunk_bytes, "version": EXTRACT_VERSION}
    return hashlib.sha256(orjson.dumps(ident, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


SPOOL_PREFIX = "envbench-spool-"


def make_spool(stage: Path, workers: int) -> str | None:
    """A new folder for chunk bytes on their way to workers: RAM-backed /dev/shm when there is one.

    Spools of runs that were killed (their pid is gone) are removed first, since /dev/shm is RAM;
    only those with a spool's marker (/dev/shm is shared: another program's folder of that name
    stays). With one worker chunks are parsed in-process and need no spool.
    """
    if workers == 1:
        return None
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else stage
    for old in base.glob(f"{SPOOL_PREFIX}*"):
        try:
            pid = int(old.name[len(SPOOL_PREFIX):].split("-")[0])
            os.kill(pid, 0)
        except ProcessLookupError:
            remove_staging(old, SPOOL_OWNER)
        except (ValueError, PermissionError):
            pass
    return str(make_staging(base, f"{SPOOL_PREFIX}{os.getpid()}-{stage.name}-", SPOOL_OWNER))


def _merge_stats(total: dict[str, int], part: dict[str, int]) -> None:
    for k, v in part.items():
        total[k] = total.get(k, 0) + v


def ingest_dump(
    dump: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    languages: Sequence[str] = ("en",),
    workers: int | None = None,
    max_errors: int = 1000,
    force: bool = False,
    progress: bool = True,
    chunk_lines: int | None = None,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    extractor: str = "auto",
    tokenizer: NameTokenizer | None = None,
) -> IngestResult:
    """Ingest a Wikidata JSON dump (.json/.gz/.bz2/.zst or '-') into an index at ``out``.

    ``extractor``: "c" (the compiled fast path), "python" (pysimdjson), or "auto" (C when built).
    Both give byte-identical tables. ``tokenizer`` fills ``name_tokens`` (schema.py; without it the
    table is written empty and the manifest's ``name_tokens.tokenizer`` is null). ``force`` starts
    over (finished chunks of an interrupted run are discarded) and lets the new index replace one it
    would lower (see :func:`lowers`).

    The tables, then the manifest, are published by ``etl.step.Step`` (lock, staging, old
    manifest removed first, manifest last); ``index.duckdb``, whose views must bind to the
    published files, is written after the manifest (see :func:`write_index_db`).

    ``dump`` may also be several files, or a folder of them (``wikidata_index.inputs``): their records are
    combined into one JSON Lines file beside ``out`` for the run (an interrupted run of several files starts
    over), and the manifest lists each file."""
    paths = expand_inputs(dump)
    if len(paths) == 1:
        return _ingest_one(paths[0], out, languages=languages, workers=workers, max_errors=max_errors, force=force,
                           progress=progress, chunk_lines=chunk_lines, chunk_bytes=chunk_bytes, extractor=extractor,
                           tokenizer=tokenizer)
    for p in paths:
        if not Path(p).is_file():
            raise InputError(f"no such dump file: {p}; check the path")
    require_path(out, "--out", "the index folder", "--out data/index")
    parent = Path(out).resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=".envbench-dumps-", suffix=".jsonl", dir=parent)
    os.close(fd)
    combined = Path(name)
    try:
        sources, counts = combine_inputs(paths, combined)
        return _ingest_one(str(combined), out, languages=languages, workers=workers, max_errors=max_errors,
                           force=force, progress=progress, chunk_lines=chunk_lines, chunk_bytes=chunk_bytes,
                           extractor=extractor, tokenizer=tokenizer, sources=(sources, paths, counts))
    finally:
        combined.unlink(missing_ok=True)


def _ingest_one(
    dump: str,
    out: str | os.PathLike[str],
    *,
    languages: Sequence[str],
    workers: int | None,
    max_errors: int,
    force: bool,
    progress: bool,
    chunk_lines: int | None,
    chunk_bytes: int,
    extractor: str,
    tokenizer: NameTokenizer | None,
    sources: tuple[list[dict[str, Any]], list[str], list[int]] | None = None,
) -> IngestResult:
    """One input file (or '-'); ``sources``: the files a combined input was made of (their descriptions for
    the manifest, their paths, the lines each wrote into ``dump``), so messages name them, not ``dump``."""
    t0 = time.perf_counter()
    dump = str(dump)
    require_path(out, "--out", "the index folder", "--out data/index")
    out_dir = Path(out)
    languages = tuple(dict.fromkeys(lang.strip() for lang in languages if lang.strip()))
    if not languages:
        raise InputError("--languages is empty; give at least one language code, e.g. --languages en")
    for lang in languages:  # a typo ("EN") would ingest no names at all, and say nothing
        if not LANGUAGE_CODE.fullmatch(lang):
            raise InputError(f"--languages {lang!r} is not a Wikidata language code (lower-case letters, digits "
                             "and '-', such as en, de, zh-hant); check the list")
    if workers is not None and workers > MAX_WORKERS:
        raise InputError(f"--workers {workers} is more than {MAX_WORKERS}, the most parsing processes an ingest "
                         f"starts; give at most {MAX_WORKERS} (about the number of cores, {os.cpu_count() or 1} here, "
                         "is fastest)")
    workers = max(1, workers or os.cpu_count() or 1)
    if chunk_bytes > MAX_CHUNK_MB << 20:
        raise InputError(f"--chunk-mb {_mb(chunk_bytes)} is more than {MAX_CHUNK_MB}; give at most {MAX_CHUNK_MB} "
                         f"(memory is about 4 x workers x --chunk-mb; the default, {DEFAULT_CHUNK_BYTES >> 20}, "
                         "is fastest)")
    if max_errors < 0:
        raise InputError(f"--max-errors must be 0 or more, got {max_errors}")
    extractor = resolve_extractor(extractor)
    if dump != "-":
        require_file(dump, "dump file")  # "not a regular file" for /dev/zero, as every reader says
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"--out {out_dir} is a file; give a directory")
    _refuse_dump_inside(dump, out_dir)
    db = out_dir / "index.duckdb"  # written after the step, so the step's ownership rule does not cover it
    made_by = (read_manifest(out_dir / "manifest.json")  # or the claim of a publish that was stopped
               or read_manifest(claim_of(out_dir / "manifest.json")) or {}).get("step")
    if db.exists() and not force and made_by != "ingest-dump":
        raise InputError(f"--out {out_dir}: index.duckdb is there and no ingest-dump run wrote it; move it, "
                         "or choose another --out, or pass --force to replace it")
    key = _staging_key(dump, languages, chunk_lines, chunk_bytes)
    stage = out_dir / f".staging-{key}"
    parameters = {"languages": list(languages), "chunk_lines": chunk_lines, "chunk_bytes": chunk_bytes,
                  "max_errors": max_errors, "workers": workers}
    # rerun: an ingest is never skipped as up to date (its own --force means "start over", and lets it
    # write beside another step's files, as every step's --force does).
    if not force and dump != "-":
        done = _already_made(out_dir, key, tokenizer, t0)
        if done is not None:
            return done
    step = Step("ingest-dump", root=out_dir, outputs=[f"{t}/" for t in TABLES], parameters=parameters,
                rerun=True, force=force)
    space = _SpaceUse(dump)
    if tokenizer is not None and tokenizer.warm_up is not None:
        tokenizer.warm_up()
    with _closing(tokenizer), step:
        try:
            _take_stage(stage, out_dir, fresh=force or dump == "-")
            with _gc_frozen():
                info = _build(dump, stage, languages, workers, max_errors, (chunk_lines, chunk_bytes), progress, t0,
                              extractor, {t: step.path(f"{t}/") for t in TABLES}, space, tokenizer,
                              sources=(sources[1], sources[2]) if sources is not None else None)
            old = read_manifest(out_dir / "manifest.json")
            lower = lowers(old, info["rows"], languages)
            if lower and not force:
                raise InputError(f"--out {out_dir}: the new index would have {lower} (made from "
                                 f"{_input_name(old)}); pass --force to replace it anyway, or choose another --out")
            if sources is not None:  # several files: the manifest lists them, not the combined file
                info["inputs"] = sources[0]
            step.info.update(info, index_format=INDEX_FORMAT, ingest_key=key,
                             provenance=dump_provenance(info["inputs"], sources[1] if sources else [dump]))
            _remove_other_stages(out_dir, keep=stage)
        except BaseException as exc:
            kept = _after_failure(stage, exc, resumable=dump != "-")
            if is_no_space(exc):
                raise InputError(space.message(out_dir, stage, kept)) from None
            if is_too_large(exc):
                raise InputError(_too_large_message(out_dir, kept)) from None
            if _out_of_memory(exc):
                raise InputError(_out_of_memory_message(dump, workers, chunk_bytes, kept)) from None
            raise
    manifest = step.manifest or {}
    # The step's lock is released; it is taken again for what follows the manifest, and when
    # another run took it in between, that run writes these itself.
    with _lock_if_free(out_dir) as locked:
        if locked:
            try:
                write_index_db(out_dir)
            except OSError as exc:
                if is_too_large(exc):
                    raise InputError(_too_large_message(out_dir / "index.duckdb", 0)) from None
                raise
            remember_hashes(out_dir, manifest.get("outputs", []))
            _remove_stage(stage)
            _remove_leftovers(out_dir)
            with contextlib.suppress(FileNotFoundError):
                (out_dir / ".ingest.lock").unlink()  # left by versions that locked with a file
    return IngestResult(
        out=out_dir,
        rows=manifest["rows"],
        stats=manifest["stats"],
        errors=manifest.get("errors", []),
        seconds=time.perf_counter() - t0,
        resumed_chunks=manifest.get("timings", {}).get("resumed_chunks", 0),
        manifest=manifest,
    )


def lowers(old: Mapping[str, Any] | None, rows: Mapping[str, int], languages: Sequence[str]) -> str | None:
    """What a new index would lose against the index it replaces, or None.

    "Lower" means fewer entities (items and properties) than the old index, or no names in a
    language the old index has names in. An old manifest that is missing or damaged vouches for
    nothing (``WikidataIndex`` refuses such an index), so nothing is lost by replacing it."""
    if not old:
        return None
    had = (old.get("rows") or {}).get("entities") if isinstance(old.get("rows"), dict) else None
    if isinstance(had, int) and rows.get("entities", 0) < had:
        return f"{rows.get('entities', 0):,} entities where the index there has {had:,}"
    old_langs = (old.get("parameters") or {}).get("languages") if isinstance(old.get("parameters"), dict) else None
    if isinstance(old_langs, list):
        lost = [lang for lang in old_langs if lang not in languages]
        if lost:
            return f"no names in {', '.join(map(str, lost))}, which the index there has"
    return None


def _input_name(manifest: Mapping[str, Any] | None) -> str:
    inputs = (manifest or {}).get("inputs")
    if isinstance(inputs, list) and inputs and isinstance(inputs[0], dict) and inputs[0].get("name"):
        return str(inputs[0]["name"])
    return "an earlier run"


def _refuse_dump_inside(dump: str, out_dir: Path) -> None:
    """The dump may not be a file that publishing the index replaces."""
    if dump == "-":
        return
    src = Path(dump).resolve()
    for target in [out_dir / t for t in TABLES] + [out_dir / "manifest.json", out_dir / "index.duckdb"]:
        t = target.resolve()
        if src == t or src.is_relative_to(t):
            raise InputError(f"--out {out_dir}: the dump {dump} would be overwritten by the index written there; "
                             "move the dump or choose another --out")


STAGE_NAME = re.compile(r"\.staging-[0-9a-f]{16}")
# Wikidata's term language codes: "en", "mul", "de-ch", "zh-hant", "be-tarask", "zh-min-nan"
LANGUAGE_CODE = re.compile(r"[a-z]{2,8}(-[a-z0-9]{1,8})*")
REMOVING = ".removing"


def _take_stage(stage: Path, out_dir: Path, *, fresh: bool) -> None:
    """Make the run's stage (marked as ours), or take the one a stopped run of the same command left
    (``fresh``: start over instead). Under the step's lock. A folder of that name without the marker is
    refused, empty or not: a run never leaves one (the stage has its marker before its name,
    :func:`_make_stage`), so it is somebody's, not ours to resume from, remove or write into."""
    remove_new_staging(out_dir, STAGE_OWNER)  # a stage made and marked, then killed before its rename
    if (stage.exists() or stage.is_symlink()) and not is_staging(stage, STAGE_OWNER):
        raise _not_our_stage(stage, out_dir)
    if fresh:
        _remove_stage(stage)  # renamed first: a kill while removing leaves no half stage to resume from
        remove_staging(stage, STAGE_OWNER)  # when a folder of somebody's has the name it was to get
    if not stage.exists():
        _make_stage(stage, out_dir)


def _not_our_stage(stage: Path, out_dir: Path) -> InputError:
    return InputError(f"--out {out_dir}: {stage.name} there was not made by an ingest-dump run (it has no "
                      f"{STAGING_MARKER} file); move it out of {out_dir}, or choose another --out")


def _make_stage(stage: Path, out_dir: Path) -> None:
    """Make ``stage`` new, with its marker from the moment it has that name (``etl.step.make_marked``). A
    kill leaves either a marked ``.envbench-new-*`` folder, which the next run removes (:func:`_take_stage`,
    ``_remove_leftovers``), or the marked stage, which it resumes. A folder that took the name meanwhile
    is refused as not ours."""
    try:
        make_marked(stage, STAGE_OWNER)
    except FileExistsError:
        raise _not_our_stage(stage, out_dir) from None


def _remove_stage(stage: Path) -> None:
    """Remove a finished run's stage: renamed first (one atomic step), so that a run stopped while
    removing it (SIGTERM at the end of an ingest) leaves no half stage that a rerun would resume from.
    The marker goes with it, so the next run removes what is left (``_remove_leftovers``)."""
    if not is_staging(stage, STAGE_OWNER):
        return
    gone = stage.with_name(stage.name + REMOVING)
    remove_staging(gone, STAGE_OWNER)
    if gone.exists() or gone.is_symlink():  # a folder of that name without our marker: leave both as they are
        return
    os.replace(stage, gone)
    remove_staging(gone, STAGE_OWNER)


def _remove_leftovers(out_dir: Path) -> None:
    """Remove what stopped runs leave in an index folder that nothing reads, by its marker (stages
    being removed, index.duckdb's temporary folders, the step's staging after its manifest was
    written), and a claim that a publish stopped after the manifest left. Under the lock."""
    # only by the marker: an empty folder in exactly the form this module makes is a user's (each of ours
    # has its marker before its name, and a kill before the rename leaves a marked .envbench-new-*), so it
    # stays (etl.step, contract point 4)
    for stale in out_dir.glob(f".staging-*{REMOVING}"):
        remove_staging(stale, STAGE_OWNER)
    for stale in out_dir.glob(f"{DB_STAGING}*"):
        remove_staging(stale, DB_OWNER)
    for stale in out_dir.glob(".staging-ingest-dump-*"):  # the step's own, which an up-to-date rerun never enters
        remove_staging(stale, "ingest-dump")
    for owner in (STAGE_OWNER, DB_OWNER, "ingest-dump"):  # made and marked, not yet renamed (make_staging)
        remove_new_staging(out_dir, owner)
    if (read_manifest(out_dir / "manifest.json") or {}).get("step") == "ingest-dump":
        remove_stale_claim(out_dir / "manifest.json", "ingest-dump")


def _already_made(out_dir: Path, key: str, tokenizer: NameTokenizer | None, t0: float) -> IngestResult | None:
    """The index at ``out_dir`` when the same command made it (the same dump file, size and mtime,
    languages and chunking, extraction version, code, and name tokenizer) and its table files are all
    there at their sizes; leftovers of a stopped run are removed then. None otherwise, or when another
    run holds the folder (the step reports that)."""
    from etl.manifest import code_fingerprint

    old = read_manifest(out_dir / "manifest.json")
    made = (old or {}).get("name_tokens")
    if (not old or old.get("step") != "ingest-dump" or old.get("ingest_key") != key
            or old.get("code_sha256") != code_fingerprint() or not isinstance(made, dict)
            or made.get("tokenizer") != (tokenizer.version if tokenizer else None)):
        return None
    outputs = old.get("outputs")
    if not isinstance(outputs, list) or not outputs:
        return None
    for o in outputs:
        if not isinstance(o, dict) or not isinstance(o.get("name"), str):
            return None
        f = out_dir / o["name"]
        if not f.is_file() or f.stat().st_size != o.get("bytes"):
            return None
    with _lock_if_free(out_dir) as locked:
        if not locked:
            return None
        _remove_leftovers(out_dir)
        _remove_other_stages(out_dir, keep=out_dir / ".none")
        if not (out_dir / "index.duckdb").is_file():
            write_index_db(out_dir)
    return IngestResult(out=out_dir, rows=old.get("rows", {}), stats=old.get("stats", {}),
                        errors=old.get("errors", []), seconds=time.perf_counter() - t0, manifest=old, up_to_date=True)


def _remove_other_stages(out_dir: Path, keep: Path) -> None:
    """Stages of runs with other parameters: nothing will resume them once this index is published."""
    for other in out_dir.glob(".staging-*"):
        if other != keep and STAGE_NAME.fullmatch(other.name):
            remove_staging(other, STAGE_OWNER)  # a user's folder of that name stays (no marker)


def _after_failure(stage: Path, exc: BaseException, *, resumable: bool) -> int:
    """Keep the stage for a resume, or remove it; the number of finished chunks kept.

    Kept when it holds finished chunks and the run was stopped (Ctrl-C, a kill, a dead worker,
    a full disk, any error of the machine): rerunning the same command resumes. Removed when the
    input itself is the problem (an ``InputError``: empty, not a dump, too many malformed
    entities, a truncated archive): the same input fails the same way, and a fixed or
    re-downloaded dump gets a stage of its own; removed too for stdin, which cannot be resumed.
    A folder this run created and left empty goes with it (the step removes it)."""
    finished = len(list((stage / "chunks" / "done").glob("*.json"))) if stage.is_dir() else 0
    if resumable and finished and (not isinstance(exc, InputError) or isinstance(exc, WorkerDied)):
        return finished
    remove_staging(stage, STAGE_OWNER)  # a folder refused as not ours (``_take_stage``) stays
    return 0


@contextlib.contextmanager
def _closing(tokenizer: NameTokenizer | None) -> Iterator[None]:
    """The tokenizer's close once the final tables are written, or the ingest failed."""
    try:
        yield
    finally:
        if tokenizer is not None and tokenizer.close is not None:
            tokenizer.close()


@contextlib.contextmanager
def _lock_if_free(folder: Path) -> Iterator[bool]:
    """The step's lock on ``folder`` (an flock on the folder itself), if no other run holds it."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _out_of_memory(exc: BaseException) -> bool:
    """Whether an error is memory running out: a MemoryError, ENOMEM (an mmap of a chunk's spool slot),
    or no thread that could start (each needs its stack's address space)."""
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, OSError) and exc.errno == errno.ENOMEM:
        return True
    return isinstance(exc, RuntimeError) and "can't start new thread" in str(exc)


def _mb(n: int) -> str:
    """Bytes as the --chunk-mb that gives them (the CLI passes whole MB; a library caller may not)."""
    return str(n >> 20) if n % (1 << 20) == 0 else f"{n / (1 << 20):.2f}"


def _out_of_memory_message(dump: str, workers: int, chunk_bytes: int, kept: int) -> str:
    resume = (f"; its {kept} finished chunks are kept, and a rerun with the same --chunk-mb resumes from them"
              if kept else "")
    return (f"{dump}: out of memory while ingesting with --workers {workers} and --chunk-mb {_mb(chunk_bytes)} "
            f"(memory is about 4 x workers x --chunk-mb); lower --chunk-mb or --workers, then rerun{resume}")


def _too_large_message(where: Path, kept: int) -> str:
    resume = (f", then rerun the same command: its {kept} finished chunks are kept and resume" if kept
              else ", then rerun")
    return too_large_message(where, " the index", resume)


# For the space estimate when the disk fills: staged chunk bytes per compressed dump byte, used
# before any chunk is staged (bench/ingest.py's generated dump, .gz, en names: 0.13), and what the
# final step needs beside the staged chunks, per staged byte (final tables 0.22 of it, and room
# for DuckDB's sort spills).
STAGED_PER_RAW_BYTE = 0.15
FINAL_PER_STAGED_BYTE = 0.5


class _SpaceUse:
    """What the ingest has read and staged, for an estimate of the space it needs when the disk fills."""

    def __init__(self, dump: str) -> None:
        self.raw_total = os.stat(dump).st_size if dump != "-" else None
        self.raw_read = 0

    def message(self, out_dir: Path, stage: Path, kept: int) -> str:
        free = shutil.disk_usage(out_dir if out_dir.exists() else out_dir.parent).free
        staged = sum(f.stat().st_size for f in stage.rglob("*.parquet")) if stage.is_dir() else 0
        if self.raw_total and self.raw_read and staged:
            staged_all = staged * self.raw_total / self.raw_read
        else:
            staged_all = (self.raw_total or 0) * STAGED_PER_RAW_BYTE
        need = ""
        total = staged_all * (1 + FINAL_PER_STAGED_BYTE)
        if total - staged > free:  # else the estimate is evidently too low to be worth printing
            need = f"; it needs about {_size(total)} there in all, {_size(total - staged - free)} more"
        resume = (f", then rerun the same command: its {kept} finished chunks are kept and resume" if kept
                  else ", then rerun")
        return (f"{out_dir}: no space left on the device while writing the index ({_size(free)} free{need}); "
                f"free some space or choose another --out{resume}")


def _size(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} TB"  # pragma: no cover


def _build(dump: str, stage: Path, languages: tuple[str, ...], workers: int, max_errors: int,
           chunking: tuple[int | None, int], progress: bool, t0: float, extractor: str,
           publish: Mapping[str, Path], space: _SpaceUse, tokenizer: NameTokenizer | None,
           sources: tuple[list[str], list[int]] | None = None) -> dict[str, Any]:
    """Parse (resumable) and write the final tables into ``publish``; the manifest's own fields. ``sources``:
    the files a combined ``dump`` was made of and the lines each wrote, which messages name instead of it."""
    parsed_marker = stage / "parsed.json"
    if parsed_marker.exists():  # killed during finalisation or publishing: no need to read the dump again
        parsed = orjson.loads(parsed_marker.read_bytes())
        parsed["resumed"] = parsed["chunks"]
        space.raw_read = space.raw_total or 0
    else:
        parsed = _parse_all(dump, stage, languages, workers, max_errors, chunking, progress, extractor, space)
        write_json_atomic(parsed_marker, parsed)
    chunk_dirs = ShardRunner(stage / "chunks", process_chunk).output_dirs()
    t_final = time.perf_counter()
    done = ShardRunner(stage / "chunks", process_chunk).done_results()
    lines_before, n = {}, 0
    for index in sorted(done):
        lines_before[shard_name(index)] = n
        n += done[index].get("lines", 0)
    duplicates: dict[str, Any] = {}
    rows = _finalize(stage, chunk_dirs, workers, publish, duplicates, lines_before)
    stats = dict(parsed["stats"])
    if duplicates:
        stats["duplicate_entities"] = duplicates["count"]
        # a combined input is a temporary file: name the files and records the copies came from
        where = dump if sources is None else ", ".join(sources[0])
        for qid, lines in duplicates["lines"].items():
            at = (", " if sources is None else "; ").join(
                "?" if not x else f"{x:,}" if sources is None else origin(x, *sources) for x in lines)
            log.warning("%s: %s appears %d times (%s %s); its copies are merged into one entity (one entities "
                        "row, the names, types and statements of all copies)", where, qid, len(lines),
                        "lines" if sources is None else "at", at)
        if duplicates["count"] > len(duplicates["lines"]):
            log.warning("%s: %d more QIDs appear more than once", where, duplicates["count"] - len(duplicates["lines"]))
    t_tokens = time.perf_counter()
    rows["name_tokens"] = write_name_tokens(publish["names"], publish["demonyms"], publish["name_tokens"], tokenizer,
                                            stage / "duckdb-tmp")
    t_end = time.perf_counter()
    return {
        "inputs": [parsed["input"]],
        "rows": {t: rows[t] for t in TABLES},
        "name_tokens": tokenizer.record() if tokenizer is not None else {"tokenizer": None},
        "stats": dict(sorted(stats.items())),
        "errors": parsed["errors"],
        "timings": {"parse_s": parsed["parse_s"], "finalize_s": round(t_tokens - t_final, 3),
                    "name_tokens_s": round(t_end - t_tokens, 3),
                    "total_s": round(t_end - t0, 3), "chunks": parsed["chunks"],
                    "resumed_chunks": parsed["resumed"], "extractor": parsed.get("extractor", extractor)},
    }


def _parse_all(dump: str, stage: Path, languages: tuple[str, ...], workers: int, max_errors: int,
               chunking: tuple[int | None, int], progress: bool, extractor: str, space: _SpaceUse) -> dict[str, Any]:
    """Stream the dump through the chunk workers; return stats, error samples and the input's facts."""
    from etl.progress import bar as progress_bar

    stream = DumpStream(dump, tool_threads=workers)
    total = stream.size
    bar = progress_bar(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc="ingest", enabled=progress)
    read_state = {"raw": 0, "dec": 0}

    def on_read(dec: int, raw: int) -> None:
        read_state["dec"] = dec
        if total is not None:
            bar.update(raw - read_state["raw"])
        read_state["raw"] = space.raw_read = raw

    stats: dict[str, int] = {}
    errors: list[dict[str, Any]] = []
    runner = ShardRunner(stage / "chunks", functools.partial(process_chunk, languages=languages, extractor=extractor),
                         workers=workers)
    resumed = 0
    n_chunks = 0
    lines_before = 0
    t_parse = time.perf_counter()
    chunk_lines, chunk_bytes = chunking
    spool = make_spool(stage, workers)
    preload: list[threading.Thread] = []
    # Ring slots: the runner keeps at most ``window`` chunks unfinished (see iter_chunks).
    chunks = iter_chunks(stream, chunk_lines, chunk_bytes=chunk_bytes, on_read=on_read, spool=spool,
                         skip=runner.is_done, spool_slots=runner.window + 1)
    results = runner.run(_then(chunks, lambda: _preload_duckdb(preload) if read_state["dec"] else None))
    try:
        for _index, result, was_done in results:
            n_chunks += 1
            resumed += was_done
            _merge_stats(stats, result["stats"])
            for rel in result["errors"]:
                err = dict(rel, line=rel["line"] + lines_before)
                if len(errors) < MANIFEST_ERROR_SAMPLES:
                    errors.append(err)
                if not was_done:
                    log.warning("%s: line %d (byte %d): %s: %r", dump, err["line"], err["offset"],
                                err["message"], err["sample"])
            lines_before += result["lines"]
            if stats.get("malformed", 0) > max_errors:
                first = errors[0]
                raise InputError(
                    f"{dump}: {stats['malformed']} malformed entities, more than --max-errors {max_errors} "
                    f"(first at line {first['line']}: {first['message']}); check that this is a Wikidata JSON "
                    "dump, or raise --max-errors"
                )
            elapsed = max(time.perf_counter() - t_parse, 1e-9)
            bar.set_postfix_str(
                f"{stats.get('records', 0) / elapsed:,.0f} ent/s {read_state['dec'] / elapsed / 1e6:,.0f} MB/s",
                refresh=False,
            )
        if read_state["dec"] == 0:
            raise InputError(f"{dump}: the input is empty (0 bytes after decompression); check the file")
        _require_entities(dump, stats, errors)
        sha = stream.finish() if dump != "-" else stream.raw.sha256.hexdigest()
        raw_bytes = stream.raw_pos
    finally:
        results.close()  # stops the pool at once when the loop ends early
        bar.close()
        stream.close()
        if spool is not None:
            remove_staging(Path(spool), SPOOL_OWNER)
        for thread in preload:
            # An import of DuckDB still running when the interpreter exits (after an error, say)
            # aborts the process in DuckDB's native code ("terminate called ..."): wait for it.
            thread.join()
    return {
        "stats": stats,
        "errors": errors,
        "chunks": n_chunks,
        "resumed": resumed,
        "lines": lines_before,
        "parse_s": round(time.perf_counter() - t_parse, 3),
        "extractor": extractor,
        "input": {"name": Path(dump).name if dump != "-" else "-", "bytes": raw_bytes,
                  "decompressed_bytes": read_state["dec"], "sha256": sha},
    }


def _require_entities(dump: str, stats: Mapping[str, int], errors: Sequence[Mapping[str, Any]]) -> None:
    """An index without an item or a property is a mistake (a wrong file, an empty dump), not an index."""
    if stats.get("kept_item", 0) + stats.get("kept_property", 0):
        return
    records = stats.get("records", 0)
    if stats.get("malformed", 0):
        first = errors[0]
        raise InputError(
            f"{dump}: none of its {records} records is a Wikidata entity (line {first['line']}: "
            f"{first['message']}); give a Wikidata JSON dump such as latest-all.json.gz"
        )
    if not records:
        raise InputError(f"{dump}: the dump holds no entities (an empty list); give a Wikidata JSON dump such as "
                         "latest-all.json.gz")
    skipped = ", ".join(f"{k.removeprefix('skipped_')} {v:,}" for k, v in sorted(stats.items())
                        if k.startswith("skipped_"))
    raise InputError(f"{dump}: none of its {records:,} records is an item or a property (skipped: {skipped}); an "
                     "index needs at least one: give a Wikidata JSON dump such as latest-all.json.gz")


@contextlib.contextmanager
def _gc_frozen() -> Iterator[None]:
    """The objects that exist now (the imported modules, mostly) are left out of garbage
    collection for the run: the run makes few cycles, and full collections would otherwise walk
    all of pyarrow's and DuckDB's objects over and over. It also keeps forked workers from
    touching, and so copying, the parent's pages when they collect (see gc.freeze)."""
    if gc.get_freeze_count():  # the caller froze already: leave it to them
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _then(items: Iterable[Any], fn: Any) -> Iterator[Any]:
    """The items, then a call of fn once they are exhausted."""
    yield from items
    fn()


def _preload_duckdb(threads: list[threading.Thread]) -> None:
    """Import DuckDB, which the final step needs, in a thread while the workers parse the last
    chunks: the main process is idle then. Not earlier: the workers are forked (at the first
    chunk), and forking while another thread imports is unsafe. The thread goes into
    ``threads``, for the caller to join before it returns or raises."""
    if "duckdb" in sys.modules:
        return
    thread = threading.Thread(target=importlib.import_module, args=("duckdb",), daemon=True)
    thread.start()
    threads.append(thread)


def _finalize(stage: Path, chunk_dirs: list[Path], workers: int, publish: Mapping[str, Path],
              duplicates: dict[str, Any] | None = None,
              lines_before: Mapping[str, int] | None = None) -> dict[str, int]:
    """Popularity over staged edges, then every table sorted and written with fixed row groups
    into its folder in ``publish``; the row counts. ``duplicates`` receives, when the dump holds a
    QID more than once, how many such QIDs (count) and the lines of the first DUPLICATES_NAMED
    (lines: QID -> its lines; ``lines_before``: the dump lines before each chunk, by chunk folder)."""
    import duckdb

    for folder in publish.values():
        shutil.rmtree(folder, ignore_errors=True)
    tmpdir = stage / "duckdb-tmp"
    # The memory limit keeps peak RSS under 1.5 GB on the full dump; DuckDB spills sorts to tmpdir.
    # threads beyond the cores only cost address space (a stack each) and change no byte of the tables
    threads = min(workers, os.cpu_count() or 1)
    con = duckdb.connect(config={"threads": threads, "memory_limit": "800MB", "temp_directory": str(tmpdir),
                                 "preserve_insertion_order": True})
    rows: dict[str, int] = {}
    repeated: list[tuple] = []  # the ids of entity rows dropped as repeats, once per extra copy
    try:
        # A glob, not a list: the full dump has tens of thousands of chunks. Only finished chunks
        # have a folder named by 8 digits (work in progress is in NNNNNNNN.tmpPID).
        digits = "[0-9]" * 8
        # Every finished chunk has entities.parquet; the other tables only where they have rows.
        for table, schema in STAGE_SCHEMAS.items():
            found = 0
            if chunk_dirs:
                glob = str(chunk_dirs[0].parent / digits / f"{table}.parquet").replace("'", "''")
                found = con.execute(f"SELECT count(*) FROM glob('{glob}')").fetchall()[0][0]
                if table == "entities" and found != len(chunk_dirs):  # pragma: no cover - a damaged stage
                    raise InputError(f"{stage}: {found} staged chunks, expected {len(chunk_dirs)}; rerun with --force")
            if found:
                con.execute(f"CREATE VIEW staged_{table} AS SELECT * FROM read_parquet('{glob}')")
            else:
                cols = ", ".join(f'NULL::{_duck_type(f.type)} AS "{f.name}"' for f in schema)
                con.execute(f"CREATE VIEW staged_{table} AS SELECT {cols} WHERE false")
        def write(table: str, query: str | None = None) -> int:
            schema = TABLES[table]
            default_query, order, key = FINAL_QUERIES[table]
            query = query or default_query
            sql = f"SELECT {', '.join(schema.names)} FROM ({query}) ORDER BY {order}"
            plain = PLAIN_COLUMNS.get(table, ())
            writer = PartWriter(publish[table], schema, use_dictionary=[c for c in schema.names if c not in plain])
            # A cursor per table: DuckDB sorts one table while pyarrow encodes another (both
            # release the GIL), so the final step keeps the cores busy.
            batches = con.cursor().sql(sql).to_arrow_reader(1 << 16)
            writer.write_batches(_drop_repeats(batches, key or schema.names,
                                               repeated if table == "entities" else None))
            writer.close()
            return writer.rows

        def popularity_then_entities() -> int:
            cur = con.cursor()
            cur.execute(
                """CREATE TABLE pop AS
                   SELECT id, count(*)::BIGINT AS n FROM (
                       SELECT subject AS id FROM staged_edges
                       UNION ALL SELECT object FROM staged_edges WHERE object <> subject)
                   GROUP BY id"""
            )
            # a dump without one item-valued statement (claims left out, or none an item) cannot say how
            # popular anything is: popularity is null there, not a 0 that Table 4 would read as obscure
            counted = cur.execute("SELECT count(*) FROM pop").fetchone()[0] > 0
            return write("entities", None if counted else NO_POPULARITY_QUERY)

        # Only entities wait for popularity; the other tables go meanwhile, the largest first, so
        # that no large table is left to run alone at the end.
        with ThreadPoolExecutor(max_workers=FINAL_TABLES_AT_ONCE) as pool:
            futures = {"entities": pool.submit(popularity_then_entities)}
            futures |= {t: pool.submit(write, t) for t in FINAL_SCHEDULE}
            for table in EXTRACTED_TABLES:
                rows[table] = futures[table].result()
        if repeated and duplicates is not None:
            duplicates["count"] = len({r[0] for r in repeated})
            duplicates["lines"] = _duplicate_lines(con, chunk_dirs[0].parent, [r[0] for r in repeated], lines_before)
    finally:
        con.close()
        shutil.rmtree(tmpdir, ignore_errors=True)
    return rows


DUPLICATES_NAMED = 20


def _duplicate_lines(con: Any, shards: Path, ids: Sequence[str], lines_before: Mapping[str, int] | None
                     ) -> dict[str, list[int]]:
    """The dump lines of the first DUPLICATES_NAMED of ``ids`` (repeated QIDs), read back from the
    staged entities' line column (0 where a line is unknown)."""
    named = sorted(set(ids))[:DUPLICATES_NAMED]
    glob = str(shards / ("[0-9]" * 8) / "entities.parquet").replace("'", "''")
    got = con.execute(f"""SELECT id, filename, {LINE_COLUMN} FROM read_parquet('{glob}', filename = true)
                          WHERE id IN (SELECT unnest($ids)) ORDER BY filename, {LINE_COLUMN}""",
                      {"ids": named}).fetchall()
    out: dict[str, list[int]] = {q: [] for q in named}
    for qid, filename, line in got:
        before = (lines_before or {}).get(Path(filename).parent.name, 0)
        out[qid].append(before + line if line else 0)
    return out


def write_name_tokens(names: Path, demonyms: Path | None, out: Path, tokenizer: NameTokenizer | None,
                      tmpdir: Path | None = None) -> int:
    """Write ``name_tokens`` into ``out`` from the written ``names`` and ``demonyms`` folders (None: an
    index without demonyms): each distinct English name and demonym text that ``tokenizer`` stores,
    with the tokens of its whitespace-collapsed form, in name order (an empty table without a
    tokenizer); the row count.

    The names stream out of DuckDB sorted (spilling to ``tmpdir``, so memory stays bounded on the
    full dump) in batches of NAME_TOKENS_BATCH: the table depends only on the names and the tokenizer."""
    import duckdb

    shutil.rmtree(out, ignore_errors=True)
    schema = TABLES["name_tokens"]
    writer = PartWriter(out, schema, use_dictionary=False)
    if tokenizer is not None:
        config: dict[str, Any] = {"threads": 1, "memory_limit": "800MB", "preserve_insertion_order": True}
        if tmpdir is not None:
            config["temp_directory"] = str(tmpdir)
        con = duckdb.connect(config=config)
        try:
            con.execute("SET enable_progress_bar = false")

            def texts(folder: Path, column: str) -> str:
                glob = str(folder.resolve() / "*.parquet").replace("'", "''")
                return f"SELECT {column} AS name FROM read_parquet('{glob}') WHERE lang = 'en'"

            sources = [texts(names, "name"), *([texts(demonyms, "text")] if demonyms is not None else [])]
            reader = con.sql(f"SELECT DISTINCT name FROM ({' UNION ALL '.join(sources)}) ORDER BY name"
                             ).to_arrow_reader(NAME_TOKENS_BATCH)
            for batch in reader:
                raw = batch.column(0).to_pylist()
                got = tokenizer.tokenize([" ".join(n.split()) for n in raw])
                if len(got) != len(raw):
                    raise ValueError(f"tokenizer {tokenizer.version} gave {len(got)} results for {len(raw)} names")
                kept = [(n, list(t)) for n, t in zip(raw, got) if t is not None]
                if kept:
                    writer.write_batch(pa.RecordBatch.from_arrays(
                        [pa.array([n for n, _ in kept], pa.string()),
                         pa.array([t for _, t in kept], pa.list_(pa.string()))], schema=schema))
        finally:
            con.close()
    writer.close()
    return writer.rows


def _drop_repeats(batches: Iterable[pa.RecordBatch], key: Sequence[str],
                  repeats: list[tuple] | None = None) -> Iterator[pa.RecordBatch]:
    """The rows of ``batches`` (sorted so that equal keys are adjacent) whose key differs from the
    previous row's; nulls equal nulls, as in SELECT DISTINCT. The keys of the dropped rows go into
    ``repeats`` when given (once per dropped row)."""
    import pyarrow.compute as pc

    prev: tuple | None = None
    for batch in batches:
        n = batch.num_rows
        if not n:
            continue
        cols = [batch.column(k) for k in key]
        head_repeats = prev is not None and prev == tuple(c[0].as_py() for c in cols)
        prev = tuple(c[n - 1].as_py() for c in cols)
        same = None  # row i + 1 repeats row i
        for c in cols:
            later, earlier = c.slice(1), c.slice(0, n - 1)
            eq = pc.equal(later, earlier)
            if c.null_count:
                eq = pc.if_else(pc.is_valid(eq), eq, pc.and_(pc.is_null(later), pc.is_null(earlier)))
            same = eq if same is None else pc.and_(same, eq)
        assert same is not None  # a key has columns
        if not head_repeats and not pc.any(same).as_py():
            yield batch
            continue
        keep = pa.concat_arrays([pa.array([not head_repeats]), pc.invert(same)])
        if repeats is not None:
            dropped = batch.select(list(key)).filter(pc.invert(keep))
            repeats.extend(zip(*(c.to_pylist() for c in dropped.columns)))
        yield batch.filter(keep)


def _duck_type(t: pa.DataType) -> str:
    """The DuckDB type of a staging column (strings, booleans and integers only)."""
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "VARCHAR"
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_int32(t):
        return "INTEGER"
    if pa.types.is_int64(t):
        return "BIGINT"
    raise TypeError(f"no DuckDB type for {t}")  # pragma: no cover - schema.py holds only these


def write_index_db(out_dir: Path) -> None:
    """index.duckdb with one view per table over the absolute Parquet paths (for the duckdb CLI).

    Written after the manifest: DuckDB binds a view to its files when it is created, so the
    tables must be in place first. Until it is written, the previous index.duckdb (views over the
    same paths) or none serves; ``WikidataIndex`` reads the Parquet files and never needs it."""
    import duckdb

    tables = table_files(read_manifest(out_dir / "manifest.json") or {})
    target = out_dir / "index.duckdb"
    # Made in a marked folder of its own (DuckDB writes a .wal beside the database), renamed into place:
    # what a stopped run leaves is that folder, which a rerun removes by its marker (``_remove_leftovers``).
    folder = make_staging(out_dir, DB_STAGING, DB_OWNER)
    try:
        tmp = folder / target.name
        con = duckdb.connect(str(tmp))
        try:
            for table in TABLES:
                if not any(n.startswith(f"{table}/") for n in tables):
                    continue
                glob = str((out_dir / table).resolve() / "*.parquet").replace("'", "''")
                con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{glob}')")
        finally:
            con.close()
        os.replace(tmp, target)
    finally:
        remove_staging(folder, DB_OWNER)


def write_tables(out: str | os.PathLike[str], tables: Mapping[str, pa.Table | Sequence[Mapping[str, Any]]], *,
                 step: str = "write-tables", parameters: Mapping[str, Any] | None = None) -> Path:
    """Write an index from tables in memory (hand-made indexes, tests): one Parquet file per given
    table (schema.py's columns), published with a manifest as an ingest's are, and index.duckdb.

    Tables not given are absent (``WikidataIndex.require`` names them). Rows are written in the
    order given; an ingest sorts them, so give them sorted when lookups should prune."""
    from etl.parquet import part_name, write_table_file

    out_dir = Path(out)
    unknown = sorted(set(tables) - set(TABLES))
    if unknown:
        raise ValueError(f"not index tables: {', '.join(unknown)}")
    names = [t for t in TABLES if t in tables]
    params = {"languages": ["en"], **(parameters or {})}
    with Step(step, root=out_dir, outputs=[f"{t}/" for t in names], parameters=params, force=True,
              rerun=True) as st:
        rows = {}
        for table in names:
            data = tables[table]
            schema = TABLES[table]
            t = data if isinstance(data, pa.Table) else pa.Table.from_pylist(
                [{f.name: r.get(f.name) for f in schema} for r in data], schema=schema)
            folder = st.path(f"{table}/")
            folder.mkdir(parents=True)
            write_table_file(folder / part_name(0), t.select(schema.names).cast(schema))
            rows[table] = t.num_rows
        st.info.update(rows=rows, stats={}, errors=[], index_format=INDEX_FORMAT)
    write_index_db(out_dir)
    remember_hashes(out_dir, (st.manifest or {}).get("outputs", []))
    return out_dir
