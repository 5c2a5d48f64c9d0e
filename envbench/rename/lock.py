"""Locks of a published Env benchmark, and their verification by regeneration.

``build_lock(OUT, index)`` derives ``*.lock.json`` from what ``generate`` left in OUT (its
``manifest.json`` and the outputs); ``verify(lock, docs, index)`` checks the inputs against the
lock, regenerates into a temporary folder (removed afterwards, also on failure) and compares.

A lock holds (docs/verify.md has the reasoning):

- ``format`` (``LOCK_FORMAT``), the package version and the library versions (``versions()``);
- the sha256 of every input (the source documents, the link file);
- the generate parameters;
- the index identity (``index_identity``), which does not depend on Parquet writer bytes: the
  sha256 of the dump the index was ingested from, the ingest parameters that change its content
  (the languages) and the index format. The dump is the file users publish and fetch; the same
  dump ingested with any pyarrow or DuckDB version has the same identity. An index written from
  tables in memory (no dump) is identified by a hash of its rows in a canonical order instead.
- per output: name, bytes, sha256; for a JSON list of documents a 16-hex hash per document
  (``[title, hash]`` in file order), for another JSON object one per top-level key, so that a
  mismatch names the first differing document even without the published files; for Parquet a
  content hash (``rows_sha256``: each row's canonical JSON, in order), the byte sha256 being
  information only (other pyarrow versions write other bytes for the same rows).

The verdict rests on the outputs: a differing index identity or library version is reported, not
failed on.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

from envbench.core.checks import MAX_SEEDS
from envbench.core.errors import EnvbenchError, shorten
from envbench.rename.candidates import POOLS
from etl.io import dumps_json, plain_file_name, sha256_file, write_bytes_atomic
from etl.manifest import package_version
from etl.progress import Stages
from etl.step import MANIFEST, read_manifest

LOCK_FORMAT = "envbench-lock/1"
LOCK_SUFFIX = ".lock.json"
DOC_HASH_HEX = 16  # per-document hashes: 64 bits name a document; the file's sha256 is the proof
LIBRARIES = ("duckdb", "pyarrow", "orjson", "spacy")  # spacy only where installed
# Parameters verify passes to generate; the others (window, max_windows) are the code's constants.
GENERATE_ARGUMENTS = ("seeds", "pool", "twins", "skip_invalid", "allow_training_names")
CODE_PARAMETERS = ("window", "max_windows")
# a hand-edited lock asking for 10**9 seeds would regenerate for ever: the bound generate checks
MAX_LOCK_SEEDS = MAX_SEEDS


# ----------------------------------------------------------------------------- small pieces


def versions() -> dict[str, str]:
    """Python and the libraries whose versions may change output bytes (absent ones left out)."""
    out = {"python": platform.python_version()}
    for lib in LIBRARIES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[lib] = metadata.version(lib)
    return out


def canonical(obj: Any) -> bytes:
    """The canonical JSON of a value: ``dumps_json`` (sorted keys, UTF-8), less its newline."""
    return dumps_json(obj)[:-1]


def short_hash(obj: Any) -> str:
    return hashlib.sha256(canonical(obj)).hexdigest()[:DOC_HASH_HEX]


def _describe(path: Path) -> dict[str, Any]:
    return {"name": path.name, "bytes": path.stat().st_size, "sha256": sha256_file(path)}


def parquet_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of a Parquet file in order, as dicts (batch by batch: memory stays bounded)."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as pf:
        for batch in pf.iter_batches(batch_size=8192):
            yield from batch.to_pylist()


def parquet_content(path: Path) -> tuple[int, str]:
    """(rows, sha256 over each row's canonical JSON in order): the same rows written by any
    pyarrow version give the same hash."""
    h, n = hashlib.sha256(), 0
    for row in parquet_rows(path):
        h.update(canonical(row))
        h.update(b"\n")
        n += 1
    return n, h.hexdigest()


# ----------------------------------------------------------------------------- index identity


def index_identity(index: str | os.PathLike[str]) -> dict[str, Any]:
    """What the index was made from, independent of the bytes its Parquet writer chose.

    An ingested index: the dump's name and sha256, the languages and the index format (the other
    ingest parameters, chunking, workers and the error budget, never change the rows). An index
    written from tables in memory: a sha256 over its rows, each table's rows sorted canonically.
    """
    from wikidata_index.index import INDEX_FORMAT, read_index_manifest

    root = Path(index)
    manifest = read_index_manifest(root)
    params = manifest.get("parameters") if isinstance(manifest.get("parameters"), dict) else {}
    fmt = manifest.get("index_format", INDEX_FORMAT)
    inputs = [i for i in manifest.get("inputs") or [] if isinstance(i, dict) and i.get("sha256")]
    if len(inputs) == 1:
        return {"dump": inputs[0].get("name"), "dump_sha256": inputs[0]["sha256"],
                "languages": params.get("languages"), "index_format": fmt}
    return {"rows_sha256": _index_rows_sha256(root, manifest), "languages": params.get("languages"),
            "index_format": fmt}


def _index_rows_sha256(root: Path, manifest: Mapping[str, Any]) -> str:
    from wikidata_index.index import table_files

    by_table: dict[str, list[Path]] = {}
    for name in table_files(manifest):
        by_table.setdefault(name.split("/", 1)[0], []).append(root / name)
    h = hashlib.sha256()
    for table in sorted(by_table):
        rows = sorted(canonical(r) for p in by_table[table] for r in parquet_rows(p))
        h.update(canonical([table, len(rows)]))
        for r in rows:
            h.update(r)
            h.update(b"\n")
    return h.hexdigest()


# ----------------------------------------------------------------------------- describing outputs


def describe_output(path: Path) -> dict[str, Any]:
    """An output's lock entry (see the module docstring)."""
    entry = _describe(path)
    if path.suffix == ".parquet":
        rows, content = parquet_content(path)
        return {**entry, "kind": "parquet", "rows": rows, "rows_sha256": content}
    if path.suffix == ".json":
        data = orjson.loads(path.read_bytes())
        if isinstance(data, list) and all(isinstance(d, dict) and isinstance(d.get("title"), str) for d in data):
            return {**entry, "kind": "documents", "documents": [[d["title"], short_hash(d)] for d in data]}
        if isinstance(data, dict):
            return {**entry, "kind": "json", "keys": {k: short_hash(v) for k, v in data.items()}}
        return {**entry, "kind": "json"}
    return {**entry, "kind": "file"}


# ----------------------------------------------------------------------------- building a lock


def default_lock_path(out: str | os.PathLike[str]) -> Path:
    """OUT/<main output's stem>.lock.json (``test_revised_env.lock.json``)."""
    manifest = _generate_manifest(Path(out))
    main = _main_output(manifest, Path(out))
    return Path(out) / (Path(main).stem + LOCK_SUFFIX)


def _generate_manifest(out: Path) -> dict[str, Any]:
    manifest = read_manifest(out / MANIFEST)
    if manifest is None:
        raise EnvbenchError(f"{out}: no readable {MANIFEST}; run `envbench generate ... --out {out}` first")
    step = manifest.get("step")
    if step != "generate":
        by = f"written by step {step!r}" if isinstance(step, str) else "not a manifest an envbench step wrote"
        raise EnvbenchError(f"{out / MANIFEST}: {by}, not generate; give the output folder of `envbench generate`")
    return manifest


def _main_output(manifest: Mapping[str, Any], where: Path) -> str:
    names = [o["name"] for o in manifest.get("outputs") or [] if isinstance(o, dict)
             and str(o.get("name", "")).endswith(("_env.json", "_twins.json"))]
    if len(names) != 1:
        raise EnvbenchError(f"{where}: the manifest lists no single <stem>_env.json or <stem>_twins.json output; "
                            "regenerate it with `envbench generate --force`")
    return str(names[0])


def build_lock(out: str | os.PathLike[str], index: str | os.PathLike[str]) -> dict[str, Any]:
    """The lock of generate's output folder ``out``, made with the index ``index``.

    The outputs must be the files generate wrote (sha256 as in the manifest), and the index the one
    it used (the manifest's fingerprint), so a lock never vouches for hand-edited files.
    """
    from wikidata_index.index import index_fingerprint

    out = Path(out)
    manifest = _generate_manifest(out)
    listed = [o for o in manifest.get("outputs") or [] if isinstance(o, dict) and isinstance(o.get("name"), str)]
    for o in listed:
        p = out / o["name"]
        if not p.is_file() or sha256_file(p) != o.get("sha256"):
            raise EnvbenchError(f"{p}: not the file generate wrote (missing, or sha256 differs from {MANIFEST}); "
                                f"regenerate with `envbench generate ... --out {out} --force`, then lock")
    recorded = ((manifest.get("identity") or {}).get("index") or {}).get("tables_sha256")
    if recorded is not None and index_fingerprint(index) != recorded:
        raise EnvbenchError(f"--index {index}: not the index {out} was generated from (its fingerprint differs "
                            f"from {MANIFEST}'s); pass that index, or regenerate with this one")
    params = dict(manifest.get("parameters") or {})
    ins = [i for i in manifest.get("inputs") or [] if isinstance(i, dict)]
    roles = ["docs", "links"] if params.get("links") == "file" else ["docs"]
    excluded = list(params.get("exclude_names_from") or [])  # generate's later inputs, in its order
    if len(ins) != len(roles) + len(excluded):
        raise EnvbenchError(f"{out / MANIFEST}: lists {len(ins)} inputs, expected {len(roles) + len(excluded)} "
                            f"({', '.join(roles + excluded)}); regenerate with `envbench generate --force`")
    described = [{k: i.get(k) for k in ("name", "bytes", "sha256")} for i in ins]
    return {
        "format": LOCK_FORMAT,
        "package_version": manifest.get("package_version", package_version()),
        "versions": {**versions(), "python": manifest.get("python", platform.python_version())},
        "inputs": {**dict(zip(roles, described)),
                   **({"exclude_names_from": described[len(roles):]} if excluded else {})},
        "parameters": params,
        "index": index_identity(index),
        "outputs": [describe_output(out / o["name"]) for o in sorted(listed, key=lambda o: o["name"])],
    }


def dumps_lock(lock: Mapping[str, Any]) -> bytes:
    """The lock as indented JSON with sorted keys, one line per document hash (short diffs in git)."""
    blocks: dict[str, list[Any]] = {}
    outputs = []
    for entry in lock.get("outputs", []):
        if isinstance(entry.get("documents"), list):
            token = f"@documents-{len(blocks)}@"
            blocks[token] = entry["documents"]
            entry = {**entry, "documents": token}
        outputs.append(entry)
    text = dumps_json({**lock, "outputs": outputs}, indent=True).decode()
    for token, pairs in blocks.items():
        at = text.index(f'"{token}"')
        indent = " " * (at - text.rindex("\n", 0, at) - 1 - len('"documents": '))
        body = ",\n".join(f"{indent}  {canonical(p).decode()}" for p in pairs)
        text = text.replace(f'"{token}"', f"[\n{body}\n{indent}]" if pairs else "[]")
    return text.encode()


def write_lock(out: str | os.PathLike[str], index: str | os.PathLike[str],
               lock_path: str | os.PathLike[str] | None = None, *, progress: bool = False) -> Path:
    """Build the lock of ``out`` and write it (default: ``default_lock_path(out)``). ``progress``: a line on
    stderr while the outputs and the index are hashed (``etl.progress.Stages``, on a terminal only)."""
    with Stages("lock", 1, enabled=progress) as stage:
        stage("hash the outputs and the index")
        lock = build_lock(out, index)
    target = Path(lock_path) if lock_path is not None else default_lock_path(out)
    if target.is_dir():
        raise EnvbenchError(f"--out {target}: a folder has that name; give the lock's file path (*.lock.json)")
    taken = [Path(out) / MANIFEST, *(Path(out) / e["name"] for e in lock["outputs"])]
    for path in taken:  # the lock must never replace what it pins, nor generate's manifest
        if target.resolve() == path.resolve():
            raise EnvbenchError(f"--out {target}: that is {'the manifest' if path.name == MANIFEST else 'an output'} "
                                f"of {out} the lock describes; write the lock elsewhere (default: "
                                f"{default_lock_path(out)})")
    if target.exists() and not _is_lock(target):  # the documents, the index's manifest, /dev/null, ...
        raise EnvbenchError(f"--out {target}: that file is there and is not a lock ({LOCK_FORMAT}); write the lock "
                            f"to a new path (default: {default_lock_path(out)}), or move that file")
    if target.resolve().is_relative_to(Path(index).resolve()):
        raise EnvbenchError(f"--out {target}: inside the index {index}, which the lock describes; write the lock "
                            f"elsewhere (default: {default_lock_path(out)})")
    write_bytes_atomic(target, dumps_lock(lock))
    return target


def _is_lock(path: Path) -> bool:
    """Whether ``path`` is a regular file holding a lock (one a rerun of ``lock`` may replace)."""
    if not path.is_file():
        return False
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("format") == LOCK_FORMAT


def read_lock(path: str | os.PathLike[str]) -> dict[str, Any]:
    p = Path(path)
    try:
        lock = orjson.loads(p.read_bytes())
    except OSError as exc:
        raise EnvbenchError(f"{p}: cannot read the lock ({exc.strerror or exc}); check the path") from None
    except orjson.JSONDecodeError as exc:
        raise EnvbenchError(f"{p}: not valid JSON ({exc}); restore the lock file, or rebuild it with "
                            "`envbench lock OUT --index DIR`") from None
    if not isinstance(lock, dict) or lock.get("format") != LOCK_FORMAT:
        got = lock.get("format") if isinstance(lock, dict) else None
        raise EnvbenchError(f"{p}: not an envbench lock (format {got!r}, expected {LOCK_FORMAT!r}); "
                            "give a file written by `envbench lock`")
    fix = "restore it, or rebuild it with `envbench lock OUT --index DIR`"
    for key in ("inputs", "parameters", "index", "outputs"):
        if key not in lock:
            raise EnvbenchError(f"{p}: the lock has no {key!r}; rebuild it with `envbench lock OUT --index DIR`")
        want = list if key == "outputs" else dict
        if not isinstance(lock[key], want):
            raise EnvbenchError(f"{p}: {key!r} should be {'a list' if want is list else 'an object'}, not "
                                f"{type(lock[key]).__name__}; {fix}")
    for role, entry in lock["inputs"].items():
        for j, e in enumerate(entry if role == "exclude_names_from" and isinstance(entry, list) else [entry]):
            where = f"inputs.{role}" + (f"[{j}]" if role == "exclude_names_from" else "")
            if not _file_entry(e):
                raise EnvbenchError(f"{p}: {where} is not an input entry (an object with a name and a sha256); {fix}")
    for i, entry in enumerate(lock["outputs"]):
        if not isinstance(entry, dict) or not plain_file_name(entry.get("name")):
            raise EnvbenchError(f"{p}: outputs[{i}] is not an output entry with a plain file name; {fix}")
        if not _file_entry(entry) or not _kind_fits(entry["name"], entry.get("kind")):
            raise EnvbenchError(f"{p}: outputs[{i}] ({entry['name']}) is not an output entry of the kind its file "
                                f"name has, with a sha256; {fix}")
        shape = {"parquet": ("rows", int), "documents": ("documents", list), "json": ("keys", dict)}.get(entry["kind"])
        if shape is not None and shape[0] in entry and not isinstance(entry[shape[0]], shape[1]):
            raise EnvbenchError(f"{p}: outputs[{i}].{shape[0]} is {_show(entry[shape[0]])}, not "
                                f"{'a count' if shape[1] is int else 'a list' if shape[1] is list else 'an object'}; {fix}")
        if entry["kind"] == "documents" and not all(
                isinstance(d, list) and len(d) == 2 and all(isinstance(x, str) for x in d) for d in entry["documents"]):
            raise EnvbenchError(f"{p}: outputs[{i}].documents holds entries other than [title, hash]; {fix}")
    pool = lock["parameters"].get("pool")
    if pool is not None and pool not in POOLS:
        pools = " or ".join(f'"{x}"' for x in POOLS)
        raise EnvbenchError(f"{p}: parameters.pool is {_show(pool)}, not {pools}; {fix}")
    for flag in ("twins", "skip_invalid", "allow_training_names"):
        if lock["parameters"].get(flag) not in (None, True, False):
            raise EnvbenchError(f"{p}: parameters.{flag} is {_show(lock['parameters'][flag])}, not true or false; {fix}")
    seeds = lock["parameters"].get("seeds")
    if seeds is not None and (type(seeds) is not int or not 1 <= seeds <= MAX_LOCK_SEEDS):
        raise EnvbenchError(f"{p}: parameters.seeds is {_show(seeds)}, not a count from 1 to {MAX_LOCK_SEEDS}; {fix}")
    for key in CODE_PARAMETERS:  # the code's constants: a value no version could have run is an edit, not a change
        value = lock["parameters"].get(key)
        if value is not None and (type(value) is not int or value < 1):
            raise EnvbenchError(f"{p}: parameters.{key} is {_show(value)}, not a count of at least 1; {fix}")
    params = lock["parameters"]
    if params.get("twins") is True and (params.get("seeds") != 1 or params.get("pool") != "train"):
        # generate refuses these together (its message names its options, which verify has not)
        raise EnvbenchError(f"{p}: the lock's parameters are inconsistent: twins true needs seeds 1 and pool "
                            f'"train", but the lock has seeds {_show(params.get("seeds"))} and pool '
                            f"{_show(params.get('pool'))}; {fix}")
    return lock


def _file_entry(entry: Any) -> bool:
    """An input or output entry of a lock: an object naming a file and its sha256 (``_describe``)."""
    return isinstance(entry, dict) and isinstance(entry.get("name"), str) and isinstance(entry.get("sha256"), str)


def _kind_fits(name: str, kind: Any) -> bool:
    """Whether an output of that name can be of that kind (``describe_output``): a ".json" entry edited to
    "parquet" would be read as Parquet and fail deep in pyarrow."""
    return kind in {".parquet": ("parquet",), ".json": ("documents", "json")}.get(Path(name).suffix, ("file",))


# ----------------------------------------------------------------------------- describing a difference


def _show(v: Any) -> str:
    return shorten(repr(v) if isinstance(v, str) else canonical(v).decode(), 80)


# What a reader looks at first: the entities (a renaming changes their names first, then the tokens).
FIRST_KEYS = ("title", "vertexSet", "name", "sents", "labels")


def first_difference(a: Any, b: Any, path: tuple[Any, ...] = ()) -> tuple[tuple[Any, ...], Any, Any] | None:
    """The first place (path, value in a, value in b) where two JSON values differ: lists in order,
    object keys in ``FIRST_KEYS`` order, then sorted."""
    if type(a) is not type(b):
        return (path, a, b) if a != b else None
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b), key=lambda k: (FIRST_KEYS.index(k) if k in FIRST_KEYS else len(FIRST_KEYS),
                                                        str(k))):
            if k not in a or k not in b:
                return (*path, k), a.get(k, "<absent>"), b.get(k, "<absent>")
            d = first_difference(a[k], b[k], (*path, k))
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, (*path, i))
            if d:
                return d
        if len(a) != len(b):
            return (*path, "length"), len(a), len(b)
        return None
    return None if a == b else (path, a, b)


def describe_path(path: Sequence[Any]) -> tuple[str, str]:
    """(where, field) of a path in a document: ``('vertexSet', 4, 0, 'name')`` -> ``('entity 4 mention 0',
    'name')``, ``('sents', 3, 5)`` -> ``('sentence 3 token 5', '')``, ``('labels', 2, 'r')`` -> ``('label 2', 'r')``."""
    p = list(path)
    words = {"vertexSet": ["entity", "mention"], "sents": ["sentence", "token"], "labels": ["label"]}.get(
        p[0] if p else None)
    if words is None:
        return "", ".".join(map(str, p))
    parts, rest = [], p[1:]
    while rest and isinstance(rest[0], int) and len(parts) < len(words):
        parts.append(f"{words[len(parts)]} {rest.pop(0)}")
    where = " ".join(parts) or str(p[0])
    return where, "".join(f"[{x}]" if isinstance(x, int) else (f".{x}" if i else str(x)) for i, x in enumerate(rest))


def document_message(name: str, title: str, old: Mapping[str, Any], new: Mapping[str, Any],
                     old_label: str = "in the lock's run", new_label: str = "now") -> str:
    """``NAME: 'TITLE' entity 4 mention 0: name 'X' OLD_LABEL, 'Y' NEW_LABEL``: the first difference."""
    d = first_difference(old, new)
    if d is None:  # canonical JSON makes equal values equal bytes; say so all the same
        return f"{name}: {title!r}: same content, other bytes"
    path, a, b = d
    where, field_name = describe_path(path)
    head = f"{name}: {title!r}" + (f" {where}" if where else "")
    return f"{head}: {field_name + ' ' if field_name else ''}{_show(a)} {old_label}, {_show(b)} {new_label}"


# ----------------------------------------------------------------------------- verify


@dataclass
class VerifyResult:
    lock: Path
    ok: bool
    problems: list[str] = field(default_factory=list)  # why it fails, the first (most precise) first
    notes: list[str] = field(default_factory=list)  # reported, never failed on
    outputs: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def report(self) -> str:
        if self.ok:
            head = (f"OK: {self.lock}: regenerated {', '.join(self.outputs)} identical to the lock "
                    f"in {self.seconds:.1f} s")
        else:
            head = f"FAIL: {self.lock}: the regenerated benchmark differs from the lock"
        return "\n".join([head, *self.problems, *self.notes])


def check_inputs(lock: Mapping[str, Any], docs: Path, links: Path | None, excludes: Sequence[Path] = ()) -> None:
    """Every input's sha256 as the lock has it; a mismatch is an error naming the input."""
    locked = dict(lock["inputs"])
    if links is not None and "links" not in locked:
        raise EnvbenchError(f"--links {links}: the lock was made without a link file (entities linked by "
                            "`envbench link`); leave --links out")
    wanted = list(locked.pop("exclude_names_from", []))
    if len(excludes) != len(wanted):
        names = ", ".join(str(e.get("name")) for e in wanted) or "none"
        raise EnvbenchError(f"--exclude-names-from: the lock was made with {len(wanted)} such files ({names}), "
                            f"{len(excludes)} given; pass the same files in the same order")
    given: list[tuple[str, Path | None, Mapping[str, Any]]] = [
        (f"--{role}", {"docs": docs, "links": links}.get(role), entry) for role, entry in locked.items()]
    given += [("--exclude-names-from", p, e) for p, e in zip(excludes, wanted)]
    for option, path, entry in given:
        if path is None:
            raise EnvbenchError(f"the lock was made with {option} {entry.get('name')} "
                                f"(sha256 {str(entry.get('sha256'))[:12]}...); pass {option} FILE")
        if not path.is_file():
            raise EnvbenchError(f"{option} {path}: no such file; check the path")
        got = sha256_file(path)
        if got != entry.get("sha256"):
            raise EnvbenchError(f"{option} {path}: sha256 {got[:12]}... differs from the lock's "
                                f"({entry.get('name')}, {str(entry.get('sha256'))[:12]}...); pass the file the "
                                "lock was made from")


def _version_notes(lock: Mapping[str, Any]) -> list[str]:
    then = {"envbench": lock.get("package_version"), **(lock.get("versions") or {})}
    now = {"envbench": package_version(), **versions()}
    diff = [f"{k} {then.get(k) or 'absent'} in the lock, {now.get(k) or 'absent'} now"
            for k in sorted(set(then) | set(now)) if then.get(k) != now.get(k)]
    return [f"versions that differ from the lock's: {'; '.join(diff)}"] if diff else []


def _parameter_notes(lock: Mapping[str, Any], new_manifest: Mapping[str, Any]) -> list[str]:
    then, now = lock.get("parameters") or {}, new_manifest.get("parameters") or {}
    diff = [f"{k} {_show(then.get(k))} in the lock, {_show(now.get(k))} now"
            for k in sorted(set(then) | set(now)) if then.get(k) != now.get(k)]
    return [f"parameters that differ from the lock's: {'; '.join(diff)}"] if diff else []


@contextlib.contextmanager
def _scratch(index: Path) -> Iterator[Path]:
    """A temporary output folder, removed afterwards (also on failure), and the index left as found:
    generate's candidate cache is removed again when this run created it."""
    from envbench.rename.generate import DERIVED_DIR

    derived = index / DERIVED_DIR
    had_cache = derived.exists()
    tmp = Path(tempfile.mkdtemp(prefix="envbench-verify-"))
    try:
        yield tmp / "out"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if not had_cache:
            shutil.rmtree(derived, ignore_errors=True)


def _load_documents(path: Path) -> list[dict[str, Any]]:
    data = orjson.loads(path.read_bytes())
    return data if isinstance(data, list) else []


def _compare_documents(name: str, entry: Mapping[str, Any], new_path: Path, published: Path | None) -> str:
    """The message for a documents output whose bytes differ from the lock's."""
    new_docs = _load_documents(new_path)
    locked = [tuple(p) for p in entry.get("documents") or []]
    new = [(d.get("title"), short_hash(d)) for d in new_docs]
    for i, (old_item, new_item) in enumerate(zip(locked, new)):
        if old_item == new_item:
            continue
        title = old_item[0]
        if old_item[0] != new_item[0]:
            return f"{name}: document {i} is {old_item[0]!r} in the lock's run, {new_item[0]!r} now"
        if published is not None and (published / name).is_file():
            pub = _load_documents(published / name)
            if i < len(pub) and pub[i].get("title") == title:
                label = "in the lock's run" if short_hash(pub[i]) == old_item[1] else "in the published file"
                return document_message(name, title, pub[i], new_docs[i], label)
        return (f"{name}: {title!r} (document {i}) differs: hash {old_item[1]} in the lock, {new_item[1]} now; "
                "pass --published DIR with the published files to see the field")
    if len(locked) != len(new):
        return f"{name}: {len(locked)} documents in the lock's run, {len(new)} now"
    return f"{name}: same documents, other bytes (sha256 differs)"


def _compare_json(name: str, entry: Mapping[str, Any], new_path: Path, published: Path | None) -> str:
    new = orjson.loads(new_path.read_bytes())
    keys = entry.get("keys")
    if isinstance(keys, dict) and isinstance(new, dict):
        for k in sorted(set(keys) | set(new)):
            if k not in new or k not in keys or short_hash(new[k]) != keys[k]:
                if published is not None and (published / name).is_file():
                    old = orjson.loads((published / name).read_bytes())
                    if isinstance(old, dict):
                        d = first_difference(old.get(k), new.get(k), (k,))
                        if d:
                            return (f"{name}: {'.'.join(map(str, d[0]))}: {_show(d[1])} in the lock's run, "
                                    f"{_show(d[2])} now")
                return (f"{name}: key {k!r} differs from the lock's run; pass --published DIR with the published "
                        "files to see the value")
    return f"{name}: sha256 differs from the lock's"


def _compare_parquet(name: str, entry: Mapping[str, Any], new_path: Path, published: Path | None,
                     notes: list[str]) -> str | None:
    rows, content = parquet_content(new_path)
    if content == entry.get("rows_sha256"):
        if sha256_file(new_path) != entry.get("sha256"):
            notes.append(f"note: {name}: the same {rows} rows in other bytes (the Parquet writer's; not a difference)")
        return None
    if published is not None and (published / name).is_file():
        for i, (a, b) in enumerate(zip(parquet_rows(published / name), parquet_rows(new_path))):
            if a != b:
                col = next(c for c in a if a.get(c) != b.get(c)) if set(a) == set(b) else "(columns)"
                key = ", ".join(f"{k} {_show(a[k])}" for k in ("title", "entity") if k in a)
                return (f"{name}: row {i} ({key}): {col} {_show(a.get(col))} in the lock's run, "
                        f"{_show(b.get(col))} now")
    if rows != entry.get("rows"):
        return f"{name}: {entry.get('rows')} rows in the lock's run, {rows} now"
    return (f"{name}: the rows differ from the lock's run ({rows} rows in both); pass --published DIR with "
            "the published files to see the first differing row")


def _edited_lock(name: str, entry: Mapping[str, Any], new_path: Path) -> str | None:
    """A lock entry whose per-document (or per-key) hashes disagree with its own sha256: the file
    that sha256 names is at hand (the regeneration matched it), so the hashes were edited."""
    fix = "the lock was edited; restore it, or rebuild it with `envbench lock OUT --index DIR`"
    if entry.get("kind") == "documents":
        locked = [tuple(x) if isinstance(x, list) else x for x in entry.get("documents") or []]
        actual = [(d.get("title"), short_hash(d)) for d in _load_documents(new_path)]
        for i, (old, new) in enumerate(zip(locked, actual)):
            if old != new:
                return (f"lock: {name}: document {i} ({new[0]!r}) is {_show(list(old))} in the lock, but the "
                        f"file with the lock's sha256 gives {_show(list(new))}; {fix}")
        if len(locked) != len(actual):
            return f"lock: {name}: {len(locked)} documents in the lock, {len(actual)} in the file with its sha256; {fix}"
    keys = entry.get("keys")
    if isinstance(keys, dict):
        data = orjson.loads(new_path.read_bytes())
        actual_keys = {k: short_hash(v) for k, v in data.items()} if isinstance(data, dict) else {}
        for k in sorted(set(keys) | set(actual_keys)):
            if keys.get(k) != actual_keys.get(k):
                return (f"lock: {name}: key {k!r} is {_show(keys.get(k))} in the lock, but the file with the lock's "
                        f"sha256 gives {_show(actual_keys.get(k))}; {fix}")
    return None


def compare_outputs(lock: Mapping[str, Any], new_out: Path, published: Path | None) -> tuple[list[str], list[str]]:
    """(problems, notes) of the regenerated folder against the lock; documents outputs first."""
    problems, notes = [], []
    entries = sorted(lock["outputs"], key=lambda e: (e.get("kind") != "documents", e["name"]))
    for entry in entries:
        name, new_path = entry["name"], new_out / entry["name"]
        if not new_path.is_file():
            problems.append(f"{name}: in the lock's run, not written now")
            continue
        kind = entry.get("kind")
        if kind == "parquet":
            msg = _compare_parquet(name, entry, new_path, published, notes)
        elif sha256_file(new_path) == entry.get("sha256"):
            msg = _edited_lock(name, entry, new_path)
        elif kind == "documents":
            msg = _compare_documents(name, entry, new_path, published)
        else:
            msg = _compare_json(name, entry, new_path, published)
        if msg:
            problems.append(msg)
    locked = {e["name"] for e in lock["outputs"]}
    for extra in sorted(p.name for p in new_out.iterdir() if p.is_file() and p.name != MANIFEST):
        if extra not in locked:
            problems.append(f"{extra}: written now, not in the lock")
    return problems, notes


def check_published(lock: Mapping[str, Any], published: Path, new_out: Path) -> list[str]:
    """Published files that differ from the lock (each named, with its first differing document)."""
    problems = []
    for entry in lock["outputs"]:
        name, pub = entry["name"], published / entry["name"]
        if not pub.is_file() or entry.get("kind") == "parquet":
            if pub.is_file() and parquet_content(pub)[1] != entry.get("rows_sha256"):
                problems.append(f"published {pub}: its rows differ from the lock's")
            continue
        if sha256_file(pub) == entry.get("sha256"):
            continue
        if entry.get("kind") == "documents":
            docs = _load_documents(pub)
            regenerated = new_out / name
            if regenerated.is_file() and sha256_file(regenerated) == entry.get("sha256"):
                # The regeneration is the lock's file itself: compare with it, document by document,
                # so that the document named is the one that really differs (not one whose hash in
                # the lock was edited).
                problems.append(_published_against(pub, name, docs, _load_documents(regenerated)))
                continue
            for i, (locked, d) in enumerate(zip(entry.get("documents") or [], docs)):
                if (d.get("title"), short_hash(d)) != tuple(locked):
                    new_docs = _load_documents(new_out / name) if (new_out / name).is_file() else []
                    if i < len(new_docs) and short_hash(new_docs[i]) == locked[1]:
                        problems.append("published " + document_message(
                            name, locked[0], d, new_docs[i], "in the published file", "in the lock's run"))
                    else:
                        problems.append(f"published {pub}: {locked[0]!r} (document {i}) differs from the lock's")
                    break
            else:
                problems.append(f"published {pub}: sha256 differs from the lock's")
        else:
            problems.append(f"published {pub}: sha256 differs from the lock's")
    return problems


def _published_against(pub: Path, name: str, docs: Sequence[Any], truth: Sequence[Any]) -> str:
    """The first published document that differs from the lock's own file, with its field."""
    for d, t in zip(docs, truth):
        if d != t:
            title = t.get("title") if isinstance(t, dict) else None
            return "published " + document_message(name, str(title), d, t, "in the published file",
                                                   "in the lock's run")
    if len(docs) != len(truth):
        return f"published {pub}: {len(docs)} documents, {len(truth)} in the lock's run"
    return f"published {pub}: the same documents in other bytes (sha256 differs from the lock's)"


def _unreadable(lock: Mapping[str, Any], published: Path, explicit: bool) -> list[str]:
    """Published files that cannot be compared: missing from a folder given as ``--published``, or not
    readable as what the lock says they are (a truncated JSON file, a damaged Parquet file)."""
    problems = []
    for entry in lock["outputs"]:
        pub = published / entry["name"]
        if not pub.is_file():
            if explicit:
                problems.append(f"published {pub}: not there, though the lock lists it; give the folder that "
                                "holds the published outputs")
            continue
        try:
            if entry.get("kind") == "parquet":
                parquet_content(pub)
            else:
                orjson.loads(pub.read_bytes())
        except Exception as exc:  # noqa: BLE001 - pyarrow and orjson raise their own kinds; each is one line here
            problems.append(f"published {pub}: cannot be read ({type(exc).__name__}: {str(exc)[:80]}); restore it "
                            "from the lock's run")
    return problems


def verify(lock_path: str | os.PathLike[str], docs: str | os.PathLike[str], index: str | os.PathLike[str], *,
           links: str | os.PathLike[str] | None = None, published: str | os.PathLike[str] | None = None,
           exclude_names_from: Sequence[str | os.PathLike[str]] = (), progress: bool = False) -> VerifyResult:
    """Regenerate the benchmark a lock describes and compare; see the module docstring.

    ``published`` (default: the lock's folder when the locked outputs are there) gives the field of
    a differing document, and is itself checked against the lock. ``progress``: generate's bar and the
    comparison's stage on stderr (on a terminal only).
    """
    from envbench.rename.generate import generate

    t0 = time.perf_counter()
    lock_path, docs, index = Path(lock_path), Path(docs), Path(index)
    lock = read_lock(lock_path)
    excludes = [Path(p) for p in exclude_names_from]
    check_inputs(lock, docs, Path(links) if links is not None else None, excludes)
    explicit = published is not None
    if published is None:
        names = [e["name"] for e in lock["outputs"]]
        published = lock_path.parent if all((lock_path.parent / n).is_file() for n in names) else None
    elif not Path(published).is_dir():
        raise EnvbenchError(f"--published {published}: no such folder; give the folder of the published outputs")
    published = Path(published) if published is not None else None
    unreadable = _unreadable(lock, published, explicit) if published is not None else []
    if unreadable:
        published = None  # the comparisons below read the published files; these cannot be read
    if not (index / MANIFEST).is_file():
        raise EnvbenchError(f"--index {index}: no index there; run `envbench ingest-dump DUMP --out {index}` first")
    notes = []
    identity = index_identity(index)
    if identity != lock["index"]:
        notes.append(f"note: the index identity differs from the lock's ({_show(lock['index'])} in the lock, "
                     f"{_show(identity)} now); the verdict rests on the outputs")
    params = lock["parameters"]
    args: dict[str, Any] = {k: params[k] for k in GENERATE_ARGUMENTS if k in params}
    if isinstance(attack := params.get("attack"), dict):  # a locked attack folder (generate --attack, --rate, ...)
        args.update(attack=attack.get("name", "rename"), rate=attack.get("rate", 1.0),
                    popularity=attack.get("popularity"))
    if excludes:
        args["exclude_names_from"] = excludes
    elif "allow_training_names" not in params:
        # a lock made before generate asked for the training documents: regenerate as it was made (the
        # parameters then differ from the lock's, which the verdict names)
        args["allow_training_names"] = True
    with _scratch(index) as tmp:
        generate(docs, index, tmp, links=links, progress=progress, **args)
        with Stages("verify", 1, enabled=progress) as stage:
            stage("compare the outputs with the lock")
            problems, output_notes = compare_outputs(lock, tmp, published)
            problems += unreadable
            if published is not None:
                problems += check_published(lock, published, tmp)
        # a regeneration under other parameters (a hand-edited window, a key this version does not know)
        # verifies nothing, even where its outputs happen to match
        problems += _parameter_notes(lock, read_manifest(tmp / MANIFEST) or {})
    notes = output_notes + notes
    if problems:
        notes = _version_notes(lock) + notes
    outputs = [e["name"] for e in lock["outputs"]]
    return VerifyResult(lock_path, not problems, problems, notes, outputs, time.perf_counter() - t0)


__all__ = ["LOCK_FORMAT", "VerifyResult", "build_lock", "default_lock_path", "describe_output", "dumps_lock",
           "first_difference", "index_identity", "read_lock", "verify", "versions", "write_lock"]

