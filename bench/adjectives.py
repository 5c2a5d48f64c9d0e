"""Does a renamed place's adjective still name it? "an American writer ... in the United States" -> "a Nepalese
writer ... in the State of Qatar"?

    .venv/bin/python bench/adjectives.py ENV_DIR SOURCE.json --index INDEX [--show 12]

A pair is an adjective and its place as ``envbench.rename.adjective_of`` finds them (one definition, the
engine's): an entity every name of which is a demonym (P1549) of another entity's item, or its plural. In each
renamed copy the pair *agrees* when the adjective's names, as renamed, are demonyms of the item its place names
now (its new item, or its own where kept), and both are kept counts apart; it *disagrees* otherwise. The 95%
interval is Wilson's over pairs (the five copies of one document are not independent, so it is narrow).
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import random
import sys
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from envbench.rename.adjective_of import adjectives_of  # noqa: E402  (the engine's definition of the pairs)
from envbench.rename.demonyms import adjectival_names, fetch_demonyms  # noqa: E402
from envbench.rename.engine import DocInfo  # noqa: E402


def _wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 0.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("env_dir", type=Path, help="an output folder of `envbench generate`")
    ap.add_argument("source", type=Path, help="the DocRED-format file it renamed")
    ap.add_argument("--index", type=Path, required=True, help="the index `generate` drew from")
    ap.add_argument("--show", type=int, default=12, help="disagreeing pairs to print")
    args = ap.parse_args()
    con = duckdb.connect()
    rows = con.execute(f"SELECT title, source_title, entity, qid, new_qid, old_names, new_names FROM "
                       f"read_parquet('{args.env_dir / 'substitutions.parquet'}')").fetchall()
    by_copy: dict[str, dict[int, tuple]] = collections.defaultdict(dict)
    for title, source_title, entity, qid, new_qid, old, new in rows:
        by_copy[title][entity] = (source_title, qid, new_qid, old, new)
    source = {d["title"]: d for d in json.loads(args.source.read_text(encoding="utf-8"))}
    idx = duckdb.connect(str(args.index / "index.duckdb"), read_only=True)
    items = {q for ents in by_copy.values() for r in ents.values() for q in r[1:3] if q is not None}
    own = fetch_demonyms(idx, sorted(items))
    pairs_of: dict[str, dict[int, int]] = {}
    counts: collections.Counter[str] = collections.Counter()
    shown: list[str] = []
    for title in sorted(by_copy):
        ents = by_copy[title]
        src = next(iter(ents.values()))[0]
        if src not in pairs_of:
            qids = [ents[e][1] if e in ents else None for e in range(len(source[src]["vertexSet"]))]
            info = DocInfo(0, source[src], qids, {})
            pairs_of[src] = adjectives_of(info.names, info.coarse, qids, own)
        for a, j in pairs_of[src].items():
            _, _, new_a, old_a, names_a = ents[a]
            _, qj, new_j, old_j, names_j = ents[j]
            if names_a == old_a and names_j == old_j:
                counts["both kept"] += 1
                continue
            place = new_j or qj
            ok = len(adjectival_names(names_a, own.get(place, ()))) == len(names_a)
            counts["agree" if ok else "disagree"] += 1
            if not ok:
                shown.append(f"{title}: {old_a} / {old_j} -> {names_a} / {names_j}")
    total = sum(counts.values())
    lo, hi = _wilson(counts["disagree"], total)
    print(f"{args.env_dir}: adjective-place pairs {total}; both kept {counts['both kept']}, agree {counts['agree']}, "
          f"disagree {counts['disagree']} = {counts['disagree'] / max(total, 1):.3f} (95% CI {lo:.3f}-{hi:.3f}); "
          f"documents with a pair {len({t.rpartition('-')[0] for t in by_copy if pairs_of.get(by_copy[t][next(iter(by_copy[t]))][0])})} "
          f"of {len(pairs_of)}")
    for s in random.Random(0).sample(shown, min(args.show, len(shown))):
        print("  ", s[:220])


if __name__ == "__main__":
    main()
