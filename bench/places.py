"""Places that still contain each other after renaming: "born in Leipzig , Germany" -> "in Göttingen , Myanmar"?

    .venv/bin/python bench/places.py ENV_DIR SOURCE.json --index INDEX [--show 12]

A pair is two LOC entities of a source document written "A , B" (A's mention, a comma, B's mention) whose
gold triples put A inside B (P131 or P17). In each renamed copy where both have an item (the new one, or
their own where kept), the pair is *contradicted* when the index knows containers of A's item (its P131 and
P17 values, theirs, and so on: ``envbench.rename.places.fetch_containers``) and B's item is none of them. On
an offline KB the index's containers are the corpus's gold triples, so a pair the source itself writes is
seldom known to contradict; the share is a lower bound of what a reader who knows the places sees. The 95%
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
from typing import Any

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from numbers_agree import bootstrap  # noqa: E402  (the document bootstrap of the other reading scripts)

from envbench.rename.places import CONTAINED_IN, fetch_containers  # noqa: E402  (one definition of "inside", the engine's)


def comma_pairs(doc: dict[str, Any]) -> list[tuple[int, int, int]]:
    """(inner entity, outer entity, sentence) of each "A , B" place pair the gold triples put A inside B."""
    coarse = [e[0]["type"] for e in doc["vertexSet"]]
    inside = {(lab["h"], lab["t"]) for lab in doc["labels"] if lab["r"] in CONTAINED_IN}
    starts = {(m["sent_id"], m["pos"][0]): ei for ei, e in enumerate(doc["vertexSet"]) for m in e}
    out = set()
    for ei, ent in enumerate(doc["vertexSet"]):
        for m in ent:
            sent, b = doc["sents"][m["sent_id"]], m["pos"][1]
            other = starts.get((m["sent_id"], b + 1)) if b < len(sent) and sent[b] == "," else None
            if other is not None and (ei, other) in inside and coarse[ei] == coarse[other] == "LOC":
                out.add((ei, other, m["sent_id"]))
    return sorted(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("env_dir", type=Path, help="an output folder of `envbench generate`")
    ap.add_argument("source", type=Path, help="the DocRED-format file it renamed")
    ap.add_argument("--index", type=Path, required=True, help="the index `generate` drew from")
    ap.add_argument("--show", type=int, default=12, help="contradicted sentences to print")
    args = ap.parse_args()
    envs = sorted(args.env_dir.glob("*_env.json"))
    if len(envs) != 1:
        sys.exit(f"{args.env_dir}: expected one *_env.json file of `envbench generate`, found {len(envs)}")
    source = {d["title"]: d for d in json.loads(args.source.read_text(encoding="utf-8"))}
    con = duckdb.connect()
    rows = con.execute(f"SELECT title, entity, coalesce(new_qid, qid) FROM "
                       f"read_parquet('{args.env_dir / 'substitutions.parquet'}')").fetchall()
    item = {(t, e): q for t, e, q in rows if q is not None}
    idx = duckdb.connect(str(args.index / "index.duckdb"), read_only=True)
    # where each item lies, up the P131/P17 chain as the engine reads it: Groton lies in the United States
    containers = fetch_containers(idx, sorted(set(item.values())))
    per_doc: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])  # (contradicted, pairs)
    shown: list[str] = []
    for copy in json.loads(envs[0].read_text(encoding="utf-8")):
        title = copy["title"].rpartition("-")[0]
        for a, b, sid in comma_pairs(source[title]):
            qa, qb = item.get((copy["title"], a)), item.get((copy["title"], b))
            if qa is None or qb is None:
                continue
            per_doc[title][1] += 1
            if qa in containers and qb not in containers[qa]:
                per_doc[title][0] += 1
                shown.append(" ".join(copy["sents"][sid]))
    bad, total = int(sum(v[0] for v in per_doc.values())), int(sum(v[1] for v in per_doc.values()))
    lo, hi = bootstrap([tuple(v) for v in per_doc.values()]) if per_doc else (0.0, 0.0)
    print(f"{args.env_dir}: 'A , B' place pairs with a gold P131/P17 of A in B: {total} in {len(per_doc)} source "
          f"documents; renamed A placed by the index outside renamed B: {bad} = {bad / max(total, 1):.3f} (95% CI "
          f"{lo:.3f}-{hi:.3f}, source documents resampled)")
    for s in random.Random(0).sample(shown, min(args.show, len(shown))):
        print("  ", s[:220])


if __name__ == "__main__":
    main()
