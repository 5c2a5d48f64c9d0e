"""``substitutions.parquet``: one row per (output document, entity) of a generate run.

The schema and its readers live together so the writer (``envbench.rename.generate``) and the
readers (``evaluate``, ``report``) cannot drift apart.

| column | meaning |
| --- | --- |
| title, source_title, seed | the output document, its source and the seed (1..K; 1 for twins) |
| entity | vertexSet index (the same in the source and the output) |
| coarse_type | DocRED type of the entity's first mention |
| kind | linked (renamed through a Wikidata item), num, time (renamed by rule), derived (its names written from other entities' new names: a name that holds another entity's name follows it, ``rename.built_on``) or kept |
| reason | why a kept entity kept its names (``envbench.core.reasons.KeptReason``), else null |
| qid, fine_type, new_qid | the entity's item, its fine type, the item whose names it took |
| old_names, new_names | distinct mention names, paired by position (a mention may carry its new name with "the" written into it, or with a capital where it opens a sentence: "De Glendonwyn" for "de Glendonwyn") |
| drawn_by | the classes the new item was drawn by: the fine type, then the other P31 classes it shares with the entity's item (linked only) |
| catch_all | the entity item's classes the catch-all rule set aside (``core.types.CATCH_ALL_CLASSES``); for a ``generic_type`` row its fine type |
| head_noun | the head noun the draw kept (old and new name end in it), else null |
| adjectival | the adjectival forms given to adjectival mention names ("Danish" for "American"), in old-name order |
| written | the new names written from another new name of the entity rather than taken from the new item, in old-name order: short names ("Long Tom" of "Long Tom River", "SFL"; ``rename.short_names``), other spellings ("U.A.E." of "UAE") and surnames ("LaMarr" of "Phil LaMarr") |
| gender, gender_from, new_gender | a drawn PER entity's gender (male, female or null), where it came from (p21, document, document_over_p21: the document showed the other gender than P21; context: neither spoke, and every pronoun near its mentions has this gender; null when unknown), and the new item's gender from its P21 (``envbench.rename.gender``) |
| value_rule | a NUM or TIME entity's role in its document, why its value was kept, derived or drawn (``envbench.core.reasons.ValueRule``: date, drawn, age, interval, listed_count, tied_count, fixed_form, share; ``envbench.rename.coherence``), also on a row kept for a reason; else null |
| built_on | a derived entity's leaders: the entities whose new names its names hold ("USS Comte de Boulainvilliers" of "Comte de Boulainvilliers"; ``rename.built_on``), else empty |
| unannotated | where a renamed name was also written outside every annotated mention, as "sentence:start-end" of the source document (Re-DocRED misses mentions; ``rename.unannotated``) |

The last eleven say why a substitution is what it is; a file written before them lacks them, and the
readers here do not need them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from envbench.core.errors import DataError, first_line
from envbench.formats.hf import check_exported

FILE_NAME = "substitutions.parquet"
COLUMNS: tuple[tuple[str, str], ...] = (
    ("title", "string"), ("source_title", "string"), ("seed", "int32"), ("entity", "int32"),
    ("coarse_type", "string"), ("kind", "string"), ("reason", "string"), ("qid", "string"),
    ("fine_type", "string"), ("new_qid", "string"), ("old_names", "list<string>"), ("new_names", "list<string>"),
    ("drawn_by", "list<string>"), ("catch_all", "list<string>"), ("head_noun", "string"),
    ("adjectival", "list<string>"), ("written", "list<string>"), ("gender", "string"), ("gender_from", "string"),
    ("new_gender", "string"), ("value_rule", "string"), ("built_on", "list<int32>"), ("unannotated", "list<string>"),
)


def schema() -> Any:
    """The pyarrow schema of the file."""
    import pyarrow as pa

    types = {"string": pa.string(), "int32": pa.int32(), "list<string>": pa.list_(pa.string()),
             "list<int32>": pa.list_(pa.int32())}
    return pa.schema([(name, types[kind]) for name, kind in COLUMNS])


def write_substitutions(rows: dict[str, list[Any]], path: str | os.PathLike[str]) -> None:
    """Write column lists (every name of ``COLUMNS``) as the file, zstd-compressed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(rows, schema=schema()), path, compression="zstd")


def read_substitutions(path: str | os.PathLike[str]) -> dict[str, dict[int, dict[str, str]]]:
    """``{output title: {entity index: {new name: old name}}}``."""
    import pyarrow.parquet as pq

    p = Path(path)
    if not p.exists():
        raise DataError(f"no substitutions file at {p}; pass the substitutions.parquet that "
                        "`envbench generate` wrote beside the Env gold file (--substitutions)")
    cols = ["title", "entity", "old_names", "new_names"]
    if p.is_file():
        check_exported(p)  # the substitutions config of an exported folder, as its manifest lists it
    try:
        if p.is_dir():
            raise IsADirectoryError("a folder")
        names = pq.read_schema(p).names
        missing = [c for c in cols if c not in names]
        if missing:
            raise DataError(f"{p}: has columns {', '.join(names) or 'none'}; a substitutions.parquet needs "
                            f"{', '.join(cols)}; pass the one `envbench generate` wrote beside the Env gold file")
        table = pq.read_table(p, columns=cols)
    except DataError:
        raise
    except Exception as exc:  # pyarrow raises several types for a bad or foreign file
        raise DataError(f"{p}: not a readable substitutions.parquet with columns {', '.join(cols)} "
                        f"({first_line(exc)}); regenerate it with `envbench generate`") from None
    out: dict[str, dict[int, dict[str, str]]] = {}
    for title, entity, old, new in zip(*(table.column(c).to_pylist() for c in cols)):
        old, new = old or [], new or []
        if len(old) != len(new):
            raise DataError(f"{p}: row for {title!r} entity {entity} has {len(old)} old_names but {len(new)} "
                            "new_names; they pair by position; regenerate the file with `envbench generate`")
        out.setdefault(title, {})[int(entity)] = dict(zip(new, old))
    return out


def read_substitution_rows(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows (title, entity, coarse_type, kind, qid, new_qid and reason when present) as dicts."""
    import pyarrow.parquet as pq

    try:
        if Path(path).is_dir():  # pyarrow reads a folder as a dataset (an empty one: no columns)
            raise IsADirectoryError("a folder")
        table = pq.read_table(path)
    except Exception as exc:  # a bad or foreign file
        raise DataError(f"{path}: not a readable substitutions.parquet ({first_line(exc)}); regenerate it with "
                        "`envbench generate`") from None
    need = {"title", "entity", "coarse_type", "kind", "qid", "new_qid"}
    missing = need - set(table.column_names)
    if missing:
        raise DataError(f"{path}: lacks columns {', '.join(sorted(missing))}; regenerate it with `envbench generate`")
    cols = sorted(need | ({"reason"} & set(table.column_names)))
    return table.select(cols).to_pylist()


__all__ = ["COLUMNS", "FILE_NAME", "read_substitution_rows", "read_substitutions", "schema", "write_substitutions"]
