"""Places that still contain each other after renaming: "born in Leipzig , Germany" -> "in Göttingen , Myanmar"?

    .venv/bin/python bench/places.py ENV_DIR SOURCE.json --index INDEX [--show 12] [--vs OTHER_ENV_DIR]

A pair is two LOC entities of a source document written "A , B" (A's mention, a comma, B's mention) whose
gold triples put A inside B (P131 or P17). In each renamed copy where both have an item (the new one, or
their own where kept), the pair is *contradicted* when the index knows containers of A's item (its P131 and
P17 values, theirs, and so on: ``envbench.rename.places.fetch_containers``) and B's item is none of them. On
an offline KB the index's containers are the corpus's gold triples, so a pair the source itself writes is
seldom known to contradict; the share is a lower bound of what a reader who knows the places sees. The 95%
interval draws source documents with replacement (a document with all its renamed copies), as
``bench/numbers_agree.py`` does. With ``--vs`` a second output of the same source is read against the same
index (item ids of a corpus KB are hashes of the clusters, so two builds share them) and the difference of the
two shares is given with its interval, documents drawn with replacement and paired.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/: its sibling scripts, when imported as a module
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


def count_pairs(env_dir: Path, source: dict[str, dict[str, Any]], idx: Any) -> tuple[dict[str, list[float]], list[str]]:
    """Per source document, [contradicted pairs, pairs] over its renamed copies in ``env_dir``, and the renamed
    sentences of the contradicted ones."""
    envs = sorted(env_dir.glob("*_env.json"))
    if len(envs) != 1:
        sys.exit(f"{env_dir}: expected one *_env.json file of `envbench generate`, found {len(envs)}")
    rows = duckdb.connect().execute(f"SELECT title, entity, coalesce(new_qid, qid) FROM "
                                    f"read_parquet('{env_dir / 'substitutions.parquet'}')").fetchall()
    item = {(t, e): q for t, e, q in rows if q is not None}
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
    return per_doc, shown


def paired_difference(a: dict[str, list[float]], b: dict[str, list[float]]) -> tuple[float, float, float]:
    """The contradicted share of ``a`` less that of ``b``, with its 95% interval: source documents drawn with
    replacement, each with its pairs in both runs (the design is paired by document; ``bootstrap``)."""
    rows = [(*a.get(t, [0.0, 0.0]), *b.get(t, [0.0, 0.0])) for t in sorted(set(a) | set(b))]

    def diff(s: list[float]) -> float | None:
        return s[0] / s[1] - s[2] / s[3] if s[1] and s[3] else None

    point = diff([sum(r[i] for r in rows) for i in range(4)])
    lo, hi = bootstrap(rows, stat=diff)
    return (point if point is not None else 0.0), lo, hi


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("env_dir", type=Path, help="an output folder of `envbench generate`")
    ap.add_argument("source", type=Path, help="the DocRED-format file it renamed")
    ap.add_argument("--index", type=Path, required=True, help="the index `generate` drew from (both runs' with --vs)")
    ap.add_argument("--show", type=int, default=12, help="contradicted sentences to print")
    ap.add_argument("--vs", type=Path, default=None,
                    help="another output folder of the same source: the difference of the two shares, paired by document")
    args = ap.parse_args()
    source = {d["title"]: d for d in json.loads(args.source.read_text(encoding="utf-8"))}
    idx = duckdb.connect(str(args.index / "index.duckdb"), read_only=True)
    per_doc, shown = count_pairs(args.env_dir, source, idx)
    bad, total = int(sum(v[0] for v in per_doc.values())), int(sum(v[1] for v in per_doc.values()))
    lo, hi = bootstrap([tuple(v) for v in per_doc.values()]) if per_doc else (0.0, 0.0)
    print(f"{args.env_dir}: 'A , B' place pairs with a gold P131/P17 of A in B: {total} in {len(per_doc)} source "
          f"documents; renamed A placed by the index outside renamed B: {bad} = {bad / max(total, 1):.3f} (95% CI "
          f"{lo:.3f}-{hi:.3f}, source documents resampled)")
    if args.vs is not None:
        other, _ = count_pairs(args.vs, source, idx)
        d, dlo, dhi = paired_difference(per_doc, other)
        print(f"  less {args.vs} ({int(sum(v[0] for v in other.values()))} of {int(sum(v[1] for v in other.values()))}, "
              f"same index): {d:+.3f} (95% CI {dlo:+.3f} to {dhi:+.3f}, paired by source document)")
    for s in random.Random(0).sample(shown, min(args.show, len(shown))):
        print("  ", s[:220])


if __name__ == "__main__":
    main()
