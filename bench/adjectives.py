"""Does a renamed place's adjective still name it? "an American writer ... in the United States" -> "a Nepalese
writer ... in the State of Qatar"?

    .venv/bin/python bench/adjectives.py ENV_DIR SOURCE.json --index INDEX [--show 12]

A pair is an adjective and its place as ``envbench.rename.adjective_of`` finds them (one definition, the
engine's): an entity every name of which is a demonym (P1549) of another entity's item, or its plural. In each
renamed copy the pair *agrees* when the adjective's names, as renamed, are demonyms of the item its place names
now (its new item, or its own where kept), and both are kept counts apart; it *disagrees* otherwise. The 95%
interval draws source documents with replacement (a document with all its renamed copies), as
``bench/numbers_agree.py`` does.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from numbers_agree import bootstrap  # noqa: E402  (the document bootstrap of the other reading scripts)

from envbench.formats.docred import distinct_names, entity_type  # noqa: E402
from envbench.rename.adjective_of import adjectives_of  # noqa: E402  (the engine's definition of the pairs)
from envbench.rename.demonyms import adjectival_names, fetch_demonyms  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("env_dir", type=Path, help="an output folder of `envbench generate`")
    ap.add_argument("source", type=Path, help="the DocRED-format file it renamed")
    ap.add_argument("--index", type=Path, required=True, help="the index `generate` drew from")
    ap.add_argument("--show", type=int, default=12, help="disagreeing pairs to print")
    args = ap.parse_args()
    table = args.env_dir / "substitutions.parquet"
    if not table.is_file():
        sys.exit(f"{args.env_dir}: no substitutions.parquet; pass an output folder of `envbench generate`")
    rows = duckdb.connect().execute(f"SELECT title, source_title, entity, qid, new_qid, old_names, new_names "
                                    f"FROM read_parquet('{table}')").fetchall()
    source = {d["title"]: d for d in json.loads(args.source.read_text(encoding="utf-8"))}
    by_copy: dict[str, dict[int, tuple]] = collections.defaultdict(dict)
    for title, source_title, entity, qid, new_qid, old, new in rows:
        if source_title not in source:
            sys.exit(f"{args.source}: has no document {source_title!r} of {table}; pass the file it renamed")
        by_copy[title][entity] = (source_title, qid, new_qid, old, new)
    idx = duckdb.connect(str(args.index / "index.duckdb"), read_only=True)
    own = fetch_demonyms(idx, sorted({q for ents in by_copy.values() for r in ents.values() for q in r[1:3] if q}))
    pairs_of: dict[str, dict[int, int]] = {}
    counts: collections.Counter[str] = collections.Counter()
    per_doc: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])  # (disagreeing, pairs)
    shown: list[str] = []
    for title in sorted(by_copy):
        ents = by_copy[title]
        src = next(iter(ents.values()))[0]
        if src not in pairs_of:
            vertex = source[src]["vertexSet"]
            qids = [ents[e][1] if e in ents else None for e in range(len(vertex))]
            pairs_of[src] = adjectives_of([distinct_names(e) for e in vertex], [entity_type(e) for e in vertex],
                                          qids, own)
        for a, j in pairs_of[src].items():
            _, _, _, old_a, names_a = ents[a]
            _, qj, new_j, old_j, names_j = ents[j]
            per_doc[src][1] += 1
            if names_a == old_a and names_j == old_j:
                counts["both kept"] += 1
                continue
            ok = len(adjectival_names(names_a, own.get(new_j or qj, ()))) == len(names_a)
            counts["agree" if ok else "disagree"] += 1
            if not ok:
                per_doc[src][0] += 1
                shown.append(f"{title}: {old_a} / {old_j} -> {names_a} / {names_j}")
    total = sum(counts.values())
    lo, hi = bootstrap([tuple(v) for v in per_doc.values()]) if per_doc else (0.0, 0.0)
    print(f"{args.env_dir}: adjective-place pairs {total} in {len(per_doc)} of {len(pairs_of)} source documents; "
          f"both kept {counts['both kept']}, agree {counts['agree']}, disagree {counts['disagree']} = "
          f"{counts['disagree'] / max(total, 1):.3f} (95% CI {lo:.3f}-{hi:.3f}, source documents resampled)")
    for s in random.Random(0).sample(shown, min(args.show, len(shown))):
        print("  ", s[:220])


if __name__ == "__main__":
    main()
