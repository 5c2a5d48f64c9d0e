"""A Hugging Face ``datasets`` folder of documents: Parquet splits with DocRED's features, read back here.

``envbench export ENV_DIR --out DIR`` (:mod:`envbench.formats.hf_export`) writes

    DIR/README.md                                      the dataset card (YAML header, then the body)
    DIR/data/original-00000-of-00001.parquet           the source documents the Env split renames
    DIR/data/test_env-00000-of-00001.parquet           the Env split, named after test_env.json
    DIR/substitutions/test_env-00000-of-00001.parquet  config ``substitutions``: substitutions.parquet's rows
    DIR/manifest.json

and ``datasets.load_dataset(DIR)`` loads it with no code of ours. The document features are those of
Hugging Face's DocRED (``datasets/docred/docred.py``), checked field by field:

| feature | type | from the JSON |
| --- | --- | --- |
| title | string | title |
| sents | list of list of string | sents |
| vertexSet | list of list of {name string, sent_id int32, pos list of int32, type string} | vertexSet |
| labels | {head, tail: list of int32; relation_id, relation_text: list of string; evidence: list of list of int32} | labels h, t, r (its DocRED name), evidence |
| source_title | string | not in DocRED: the title the document was renamed from (its own title in ``original``) |
| seed | int32 | not in DocRED: the seed of the renamed copy (1..K); 0 in ``original`` |

``labels`` is a *dict of lists* (one list per field, parallel), as ``Sequence({...})`` stores it on
the Hub, not a list of dicts; code written for the Hub's DocRED reads it unchanged. What the JSON has
and these features do not carry is left out: mention fields beyond the four (Re-DocRED's
``global_pos`` and ``index``), label fields beyond the four (DocRED-HWE's ``keywords``), and other
document fields; a document without ``labels`` gets empty lists, as the Hub's DocRED test split has.

:func:`read_dataset_docs` is the reader of such Parquet files; :func:`envbench.formats.docred.read_docred`
hands it any folder or ``.parquet`` path, so every command that reads DocRED documents reads these
too (evaluate, train, predict, ...), and each file read is held against the sha256 that the folder's
manifest lists (:func:`check_exported`). A folder stands for its one split other than ``original`` (the Env split); a Parquet file names
its split (all shards of a sharded one are read).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from envbench.core.errors import DataError
from envbench.core.relations import RELATIONS

ORIGINAL_SPLIT = "original"
DATA_DIR = "data"
SUBSTITUTIONS_DIR = "substitutions"
SUBSTITUTIONS_CONFIG = "substitutions"
ORIGINAL_SEED = 0  # the seed column of the original documents (renamed copies have 1..K)
_SHARD = re.compile(r"^(?P<split>\w+)-(?P<index>\d{5})-of-(?P<count>\d{5})\.parquet$")
DOCRED_COLUMNS = ("title", "sents", "vertexSet", "labels")
MENTION_FIELDS = ("name", "sent_id", "pos", "type")
LABEL_FIELDS = ("head", "tail", "relation_id", "relation_text", "evidence")

# The features as a dataset card's YAML writes them (``dataset_info.features``): the DocRED ones in
# the published card's own notation (``sequence`` for sents, pos, evidence and labels; ``list`` for
# vertexSet), then the two columns of ours.
FEATURES_YAML: list[dict[str, Any]] = [
    {"name": "title", "dtype": "string"},
    {"name": "sents", "sequence": {"sequence": "string"}},
    {"name": "vertexSet", "list": {"list": [
        {"name": "name", "dtype": "string"},
        {"name": "sent_id", "dtype": "int32"},
        {"name": "pos", "sequence": "int32"},
        {"name": "type", "dtype": "string"},
    ]}},
    {"name": "labels", "sequence": [
        {"name": "head", "dtype": "int32"},
        {"name": "tail", "dtype": "int32"},
        {"name": "relation_id", "dtype": "string"},
        {"name": "relation_text", "dtype": "string"},
        {"name": "evidence", "sequence": "int32"},
    ]},
    {"name": "source_title", "dtype": "string"},
    {"name": "seed", "dtype": "int32"},
]


def document_schema() -> Any:
    """The pyarrow schema of a document split (the Arrow storage of ``FEATURES_YAML``)."""
    import pyarrow as pa

    mention = pa.struct([("name", pa.string()), ("sent_id", pa.int32()), ("pos", pa.list_(pa.int32())),
                         ("type", pa.string())])
    labels = pa.struct([("head", pa.list_(pa.int32())), ("tail", pa.list_(pa.int32())),
                        ("relation_id", pa.list_(pa.string())), ("relation_text", pa.list_(pa.string())),
                        ("evidence", pa.list_(pa.list_(pa.int32())))])
    return pa.schema([("title", pa.string()), ("sents", pa.list_(pa.list_(pa.string()))),
                      ("vertexSet", pa.list_(pa.list_(mention))), ("labels", labels),
                      ("source_title", pa.string()), ("seed", pa.int32())])


def to_row(doc: Mapping[str, Any], *, source_title: str, seed: int) -> dict[str, Any]:
    """One document as a row of ``document_schema()`` (see the module docstring for what is left out)."""
    labels = doc.get("labels") or []
    return {
        "title": doc["title"],
        "sents": doc["sents"],
        "vertexSet": [[{k: m.get(k) for k in MENTION_FIELDS} for m in entity] for entity in doc["vertexSet"]],
        "labels": {
            "head": [lab["h"] for lab in labels],
            "tail": [lab["t"] for lab in labels],
            "relation_id": [lab["r"] for lab in labels],
            "relation_text": [RELATIONS.get(lab["r"]) for lab in labels],
            "evidence": [list(lab.get("evidence") or []) for lab in labels],
        },
        "source_title": source_title,
        "seed": seed,
    }


def from_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A DocRED document from a row: labels back to ``[{h, t, r, evidence}]``; other columns dropped.

    Also reads labels written as a list of ``{head, tail, relation_id, evidence}`` records.
    """
    labels = row.get("labels")
    if isinstance(labels, Mapping):
        n = len(labels.get("head") or [])
        records = [{k: (labels.get(k) or [None] * n)[i] for k in LABEL_FIELDS} for i in range(n)]
    else:
        records = list(labels or [])
    return {
        "title": row["title"],
        "sents": row["sents"],
        "vertexSet": [[{k: v for k, v in m.items() if v is not None} for m in entity]
                      for entity in row["vertexSet"] or []],
        "labels": [{"h": r.get("head"), "t": r.get("tail"), "r": r.get("relation_id"),
                    "evidence": list(r.get("evidence") or [])} for r in records],
    }


def shard_name(split: str, index: int = 0, count: int = 1) -> str:
    """``test_env-00000-of-00001.parquet``: the Hub's name of a split's shard."""
    return f"{split}-{index:05d}-of-{count:05d}.parquet"


def split_name(file_name: str) -> str:
    """A split name (``[A-Za-z0-9_]``) from an output file's stem: ``test_env.json`` -> ``test_env``."""
    stem = file_name.removesuffix(".json")
    return re.sub(r"\W", "_", stem) or "documents"


def write_split(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> Any:
    """Write rows of ``document_schema()`` as one zstd Parquet file; returns the Arrow table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(list(rows), schema=document_schema())
    pq.write_table(table, path, compression="zstd")
    return table


# --------------------------------------------------------------------------- reading back
def is_dataset_path(path: str | os.PathLike[str]) -> bool:
    """A path the Parquet reader takes: a folder, or a ``.parquet`` file."""
    p = Path(path)
    return p.is_dir() or p.suffix == ".parquet"


def _not_a_dataset(path: Path, why: str) -> DataError:
    return DataError(f"{path}: a folder but not a dataset folder from `envbench export` ({why}); pass a DocRED "
                     "JSON file, a folder that `envbench export` wrote, or one of its data/*.parquet files")


def folder_splits(folder: str | os.PathLike[str]) -> dict[str, list[Path]]:
    """``{split: its Parquet files}`` of a dataset folder's ``data/`` (split = the name before the first ``-``)."""
    data = Path(folder) / DATA_DIR
    splits: dict[str, list[Path]] = {}
    for f in sorted(data.glob("*.parquet")) if data.is_dir() else []:
        splits.setdefault(f.name.split("-", 1)[0].removesuffix(".parquet"), []).append(f)
    return splits


def _missing_data_files(folder: Path) -> list[str]:
    """The data files an export manifest in ``folder`` lists that are not there (none without one)."""
    from etl.step import read_manifest

    manifest = read_manifest(folder / "manifest.json") or {}
    if manifest.get("step") != "export" or not isinstance(manifest.get("outputs"), list):
        return []
    names = [o["name"] for o in manifest["outputs"] if isinstance(o, dict) and isinstance(o.get("name"), str)]
    return [n for n in names if n.startswith(f"{DATA_DIR}/") and not (folder / n).is_file()]


def check_exported(path: str | os.PathLike[str]) -> None:
    """Refuse a file of a folder that `envbench export` wrote (``DIR/data/*.parquet``, ``DIR/substitutions/
    *.parquet``) whose bytes are not those ``DIR/manifest.json`` lists, naming it: an edited split had been
    scored as if it were the benchmark. A file outside such a folder (no export manifest two levels up) is
    not checked; nor is one whose sha256 was checked before with the same size and modification time."""
    from etl.io import sha256_file
    from etl.step import read_manifest

    f = Path(path)
    folder = f.parent.parent
    manifest = read_manifest(folder / "manifest.json")
    if not manifest or manifest.get("step") != "export" or not isinstance(manifest.get("outputs"), list):
        return
    listed = {o["name"]: o.get("sha256") for o in manifest["outputs"]
              if isinstance(o, dict) and isinstance(o.get("name"), str)}
    name = f"{f.parent.name}/{f.name}"
    if name not in listed:
        raise DataError(f"{f}: not a file that `envbench export` wrote ({folder / 'manifest.json'} does not list "
                        "it); remove it, or run `envbench export` again")
    stat = f.stat()
    key = (str(f.resolve()), stat.st_size, stat.st_mtime_ns)
    if _CHECKED.get(key) == listed[name]:
        return
    if sha256_file(f) != listed[name]:
        raise DataError(f"{f}: changed since `envbench export` wrote it (its sha256 is not the one "
                        f"{folder / 'manifest.json'} lists); run `envbench export` again, or copy the whole folder "
                        "again")
    _CHECKED[key] = listed[name]


# (path, size, mtime) -> the sha256 it was found to have: readers list and read a split several times
_CHECKED: dict[tuple[str, int, int], str] = {}


def document_files(path: str | os.PathLike[str]) -> list[Path]:
    """The files a documents path reads: a JSON file itself; a dataset folder's Env split shards; a
    Parquet file with the other shards of its split. Errors name a folder that is not a dataset."""
    p = Path(path)
    if p.is_dir():
        missing = _missing_data_files(p)
        if missing:  # a split deleted by hand would otherwise be taken for the folder's only split
            raise DataError(f"{p}: {missing[0]} is missing, though the folder's manifest lists it; copy the whole "
                            "folder again, or rerun `envbench export`")
        splits = folder_splits(p)
        if not splits:
            raise _not_a_dataset(p, f"no {DATA_DIR}/*.parquet")
        renamed = [s for s in splits if s != ORIGINAL_SPLIT]
        if len(splits) == 1:
            return splits[next(iter(splits))]
        if len(renamed) == 1:
            return splits[renamed[0]]
        first = splits[renamed[0]][0]
        raise DataError(f"{p}: holds splits {', '.join(sorted(splits))}, so the folder does not say which to read; "
                        f"name the split by its Parquet file, such as {first}")
    if p.suffix != ".parquet":
        return [p]
    m = _SHARD.match(p.name)
    if m is None or m["count"] == "00001":
        return [p]
    shards = sorted(p.parent.glob(f"{m['split']}-?????-of-{m['count']}.parquet"))
    if len(shards) != int(m["count"]):
        raise DataError(f"{p}: is one of {int(m['count'])} shards of split {m['split']}, but {len(shards)} are in "
                        f"{p.parent}; copy the whole split")
    return shards


def read_dataset_docs(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The DocRED documents of a dataset folder or Parquet file (see the module docstring), in file order."""
    import pyarrow.parquet as pq

    docs: list[dict[str, Any]] = []
    for f in document_files(path):
        if not f.is_file():
            raise DataError(f"{f}: no such file; pass a DocRED JSON file or a folder that `envbench export` wrote")
        check_exported(f)
        try:
            table = pq.read_table(f)
        except Exception as exc:  # pyarrow raises several types for a damaged or foreign file
            raise DataError(f"{f}: not a readable Parquet file ({exc}); pass a data/*.parquet file that "
                            "`envbench export` wrote, or a DocRED JSON file") from None
        missing = [c for c in DOCRED_COLUMNS if c not in table.column_names]
        if missing:
            raise DataError(f"{f}: lacks the DocRED column{'s' if len(missing) > 1 else ''} {', '.join(missing)}; "
                            "pass a split of documents (title, sents, vertexSet, labels), not the substitutions")
        docs.extend(from_row(row) for row in table.select(list(DOCRED_COLUMNS)).to_pylist())
    return docs


def default_substitutions(gold: str | os.PathLike[str]) -> Path:
    """Where the substitutions of a gold path are by default: ``substitutions.parquet`` beside a JSON
    file; for a dataset, its ``substitutions`` config's file of the same split (a folder that is no
    dataset is the reader's error)."""
    p = Path(gold)
    if not is_dataset_path(p):
        return p.parent / "substitutions.parquet"
    first = document_files(p)[0]
    split = first.name.split("-", 1)[0].removesuffix(".parquet")
    folder = first.parent.parent / SUBSTITUTIONS_DIR
    found = sorted(folder.glob(f"{split}-*.parquet"))
    return found[0] if len(found) == 1 else folder / shard_name(split)


__all__ = ["DATA_DIR", "FEATURES_YAML", "ORIGINAL_SEED", "ORIGINAL_SPLIT", "SUBSTITUTIONS_CONFIG", "SUBSTITUTIONS_DIR",
           "check_exported", "default_substitutions", "document_files", "document_schema", "folder_splits", "from_row",
           "is_dataset_path", "read_dataset_docs", "shard_name", "split_name", "to_row", "write_split"]
