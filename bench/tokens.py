"""Measurement (issue 13): renamed mentions carry the corpus's own tokens for their new name.

    .venv/bin/python bench/tokens.py runs/lock/env            # the lock (Env-Re-DocRED test)
    .venv/bin/python bench/tokens.py runs/envdev --docs ../shared/data/re-docred/dev_revised.json

For every renamed PER/ORG/LOC/MISC mention of the Env file whose new name is a mention name of Re-DocRED
dev or test, whether its tokens are exactly a tokenisation the corpus gives that name (the tokens at the
``pos`` of one of the corpus's mentions of it). A renamed mention whose name the corpus never writes is
not counted (the corpus cannot say how it is tokenised). Prints the share and the first mismatches.
"""

from __future__ import annotations

import argparse
import glob
import json
from collections import defaultdict
from pathlib import Path

import polars as pl

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "re-docred"


def corpus_tokens() -> dict[str, set[tuple[str, ...]]]:
    out: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for split in ("dev_revised.json", "test_revised.json"):
        for d in json.loads((SHARED / split).read_text(encoding="utf-8")):
            for ent in d["vertexSet"]:
                for m in ent:
                    a, b = m["pos"]
                    out[m["name"]].add(tuple(d["sents"][m["sent_id"]][a:b]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="a generate --out folder")
    ap.add_argument("--show", type=int, default=10, help="mismatches to print")
    args = ap.parse_args()
    known = corpus_tokens()
    env = {d["title"]: d for d in json.loads(Path(glob.glob(f"{args.run}/*_env.json")[0]).read_text("utf-8"))}
    subs = pl.read_parquet(Path(args.run) / "substitutions.parquet").filter(
        (pl.col("kind") != "kept") & pl.col("coarse_type").is_in(["PER", "ORG", "LOC", "MISC"]))
    counted = same = 0
    bad: list[tuple[str, tuple[str, ...]]] = []
    for r in subs.iter_rows(named=True):
        changed = {n for o, n in zip(r["old_names"], r["new_names"]) if o != n}
        d = env[r["title"]]
        for m in d["vertexSet"][r["entity"]]:
            if m["name"] not in changed or m["name"] not in known:
                continue
            a, b = m["pos"]
            toks = tuple(d["sents"][m["sent_id"]][a:b])
            counted += 1
            if toks in known[m["name"]]:
                same += 1
            elif len(bad) < args.show:
                bad.append((m["name"], toks))
    print(f"{args.run}: {same} of {counted} renamed mentions with a corpus name carry the corpus's tokens "
          f"({same / max(counted, 1):.2%})")
    for name, toks in bad:
        print(f"  {name!r}: {list(toks)}")


if __name__ == "__main__":
    main()
