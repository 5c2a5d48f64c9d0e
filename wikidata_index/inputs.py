"""Several dump files, or a folder of them, as one input for ``ingest-dump``.

Wikidata entity JSON comes in more shapes than the dump: Special:EntityData answers
(``{"entities": {"Q42": {...}}}``), wbgetentities answers (the same with ``"success": 1``), bare entities,
JSON Lines and the official array dump, each possibly compressed. ``ingest-dump`` reads any one of them;
given several files, or a folder, ``combine`` writes their records as one JSON Lines file (each JSON
document on one line, where the extractor opens its envelope as it does for a single file; the lines of a
dump or a JSON Lines file as they are), in the order given and, inside a folder, by path. The manifest
then lists every file with its size and sha256, not the combined file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from etl.io import InputError, open_binary
from etl.readers import detect_shape, strip_record

SUFFIXES = (".json", ".jsonl", ".ndjson")  # each possibly followed by .gz, .bz2 or .zst
COMPRESSIONS = ("", ".gz", ".bz2", ".zst")
MAX_DOCUMENT = 1 << 30  # a single JSON document is read whole, as a single-file ingest reads it


def _is_dump_name(path: Path) -> bool:
    name = path.name.lower()
    return any(name.endswith(s + c) for s in SUFFIXES for c in COMPRESSIONS)


def expand(dumps: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[str]:
    """The files to ingest, in order: each argument, a folder standing for its entity JSON files (any depth,
    sorted by path). A folder without any, or a file given twice, is an error naming it."""
    items = [dumps] if isinstance(dumps, (str, os.PathLike)) else list(dumps)
    if not items:
        raise InputError("no dump given; pass a Wikidata JSON dump, several entity JSON files, or a folder of them")
    out: list[str] = []
    for item in items:
        p = Path(item)
        if str(item) != "-" and p.is_dir():
            found = sorted(str(f) for f in p.rglob("*") if f.is_file() and _is_dump_name(f))
            if not found:
                raise InputError(f"{p}: a folder with no entity JSON file in it (*.json, *.jsonl, *.ndjson, each "
                                 "possibly .gz, .bz2 or .zst); give the folder of the dump files")
            out.extend(found)
        else:
            out.append(str(item))
    if "-" in out and len(out) > 1:
        raise InputError("'-' (standard input) is read alone; give it without other dump files")
    seen: set[str] = set()
    for f in out:
        key = str(Path(f).resolve()) if f != "-" else f
        if key in seen:
            raise InputError(f"{f}: given twice; give each dump file once")
        seen.add(key)
    return out


class _Hashing:
    """Reads a file's raw bytes through, counting and hashing them (the manifest's size and sha256)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.sha = hashlib.sha256()
        self.bytes = 0

    def finish(self) -> dict[str, Any]:
        with open(self.path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                self.sha.update(block)
                self.bytes += len(block)
        return {"name": Path(self.path).name, "bytes": self.bytes, "sha256": self.sha.hexdigest()}


def _copy_records(src: IO[bytes], out: IO[bytes], path: str) -> int:
    """Copy one file's records to ``out`` as JSON Lines; how many lines that wrote."""
    first = src.readline()
    shape = detect_shape(first)
    if shape == "document":
        data = first + src.read(MAX_DOCUMENT + 1 - len(first))
        if len(data) > MAX_DOCUMENT:
            raise InputError(f"{path}: a single JSON document over {MAX_DOCUMENT >> 20} MiB; give it as JSON Lines "
                             "or as the official dump (one entity per line)")
        try:
            out.write(orjson.dumps(orjson.loads(data)) + b"\n")
        except orjson.JSONDecodeError as exc:
            raise InputError(f"{path}: not valid JSON ({exc}); check that this is Wikidata entity JSON") from None
        return 1
    written = 0
    for line in ([first] if shape == "lines" else []):
        out.write(strip_record(line) + b"\n")
        written += 1
    for line in src:
        record = strip_record(line)
        if record and record not in (b"[", b"]"):
            out.write(record + b"\n")
            written += 1
    return written


def combine(paths: Sequence[str], target: Path) -> tuple[list[dict[str, Any]], list[int]]:
    """Write the records of every file of ``paths`` to ``target`` (JSON Lines); each file's name, size, sha256,
    and the number of lines of ``target`` each file wrote (so a line of ``target`` names its file: :func:`origin`)."""
    described = []
    counts = []
    with open(target, "wb") as out:
        for path in paths:
            with open_binary(path) as src:
                counts.append(_copy_records(src, out, path))
            described.append(_Hashing(path).finish())
    return described, counts


def origin(line: int, paths: Sequence[str], counts: Sequence[int]) -> str:
    """Where line ``line`` (1-based) of a combined file came from: "FILE record K" (a record of a file in
    JSON Lines or a JSON array; the whole file for one JSON document); "line N" past the last file."""
    first = 1
    for path, n in zip(paths, counts, strict=True):
        if line < first + n:
            return f"{path} record {line - first + 1}"
        first += n
    return f"line {line}"


__all__ = ["combine", "expand", "origin"]
