"""Measurement: CovEReD's plausibility rule as a candidate filter (issue 58), tried and not adopted.

    .venv/bin/python bench/plausible.py                 # arms off, prefer, filter; 5 seeds; Env dev and test
    .venv/bin/python bench/plausible.py --seeds 10 --arms off prefer --no-test

The rule (``envbench/rename/plausible.py``): a new item must have played the role (subject or value) of one of
the relation types the entity plays in its document. ``engine.PLAUSIBLE`` applies it: ``off`` (the default),
``prefer`` (among the first ``engine.HEAD_WINDOWS`` windows a candidate that has such a role, else the first
fit) or ``filter`` (only such a candidate; kept ``no_candidate`` when none is). Over one README offline KB
(kb-from-corpus dev + test), each arm renames dev (names kept off test) and, without ``--no-test``, test (names
kept off dev), and prints:

* the substitution-level type agreement of ``bench/kb_types.py``: of the non-person substitutions whose source
  entity and new item both carry a hand-annotated dev entity (``tests/envbench/data/redocred_dev_types.tsv``),
  how many keep the annotated head noun, with a Wilson 95% interval;
* the substitution rate of Env test and Env dev, and the kept reasons of Env test.

Use ``bench/kind_nouns.py`` on the arms' Env dev folders (OUT/env-ARM) for the kind-noun agreement.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from kb_types import COARSE, SHARED, read_gold  # noqa: E402
from kind_nouns import wilson  # noqa: E402

ARMS = ("off", "prefer", "filter")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(REPO / "runs" / "bench" / "plausible"), help="working folder")
    ap.add_argument("--arms", nargs="+", choices=ARMS, default=list(ARMS), help="the arms to run")
    ap.add_argument("--seeds", type=int, default=5, help="seeds per document (1..N)")
    ap.add_argument("--no-test", action="store_true", help="rename dev only (no Env test rate)")
    args = ap.parse_args()
    import pyarrow.parquet as pq

    from envbench.rename import engine
    from envbench.rename.generate import generate
    from envbench.worlds.kb_from_corpus import kb_from_corpus
    from wikidata_index.ingest import ingest_dump

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dev, test = SHARED / "dev_revised.json", SHARED / "test_revised.json"
    kb, links = out / "kb.json.gz", out / "links.json"
    kb_from_corpus([dev, test], kb, links)
    ingest_dump(kb, out / "index", workers=2, progress=False)
    gold = read_gold()
    link_rows = json.loads(links.read_text())
    head_of = {(g["title"], int(g["entity"])): g["head_noun"] for g in gold}
    item_heads: dict[str, set[str]] = defaultdict(set)
    for (title, ei), head in head_of.items():
        item_heads[link_rows[title][ei]].add(head)
    saved = engine.PLAUSIBLE
    try:
        for arm in args.arms:
            engine.PLAUSIBLE = arm
            generate(dev, out / "index", out / f"env-{arm}", links=links, seeds=args.seeds, progress=False, force=True,
                     exclude_names_from=[test])
            if not args.no_test:
                generate(test, out / "index", out / f"envtest-{arm}", links=links, seeds=args.seeds, progress=False,
                         force=True, exclude_names_from=[dev])
            sub = pq.read_table(out / f"env-{arm}" / "substitutions.parquet").to_pylist()
            pairs = [(r["coarse_type"], head_of[(r["source_title"], r["entity"])] in item_heads[r["new_qid"]])
                     for r in sub if r["kind"] == "linked" and r["coarse_type"] in COARSE and r["new_qid"]
                     and (r["source_title"], r["entity"]) in head_of and r["new_qid"] in item_heads]
            k, n = sum(ok for _, ok in pairs), len(pairs)
            lo, hi = wilson(k, n)
            by = ", ".join(f"{c} {sum(ok for cc, ok in pairs if cc == c)}/{sum(cc == c for cc, _ in pairs)}" for c in COARSE)
            dev_rate = json.loads((out / f"env-{arm}" / "stats.json").read_text())["substitution_rate"]["total"]
            line = (f"{arm}: type kept {k}/{n} = {k / max(1, n):.1%} (95% CI {lo:.1%}-{hi:.1%}; {by}); "
                    f"Env dev rate {dev_rate:.4f}")
            if not args.no_test:
                st = json.loads((out / f"envtest-{arm}" / "stats.json").read_text())
                line += f"; Env test rate {st['substitution_rate']['total']:.4f}, kept {st['kept_reasons']}"
            print(line, flush=True)
    finally:
        engine.PLAUSIBLE = saved


if __name__ == "__main__":
    main()
