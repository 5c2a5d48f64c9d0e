"""Measurement: does a renamed mention's new name fit the kind noun beside it? (issue 58, section 2)

    .venv/bin/python bench/kind_nouns.py ENV_DIR [ENV_DIR ...]     # agreement of each Env dev run
    .venv/bin/python bench/kind_nouns.py --unjudged ENV_DIR        # the new names still to judge

Gold: ``bench/kind_nouns_dev.tsv``, 160 mentions of Re-DocRED **dev** (ORG, LOC, MISC, not adjectival) with a
candidate kind word beside them (``core.kind_nouns``; the first 160 by a hash of their keys), each judged by
hand: ``reader_kind`` is the kind a reader takes the entity to be from the words around the mention ("film"
of "the horror film Epitaph", "state" of "Summit County , Colorado"), ``-`` where they say none.
``bench/kind_nouns_dev_judged.tsv`` holds the new names those entities took in Env dev runs, each judged by
hand against that kind (``fits``: y / n), keyed by (title, entity, new name), so a rerun that draws the same
name needs no new judgement.

What is printed, per ENV_DIR (an Env dev run: ``generate dev_revised.json`` over the README's offline KB,
``--exclude-names-from test``, as ``bench/kb_types.py`` builds it), over every seed:

1. **Extraction**: of the 160 rows, how many hold the reader's kind among their words, by pattern.
2. **Agreement**: of the renamed mentions whose entity has a reader kind, the share whose new name is of
   that kind (judged), with a Wilson 95% interval; kept entities are counted apart (by reason).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOLD = REPO / "bench" / "kind_nouns_dev.tsv"
JUDGED = REPO / "bench" / "kind_nouns_dev_judged.tsv"


def read_tsv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        lines = [ln for ln in fh if not ln.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 0.0
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return c - h, c + h


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("env", nargs="+", help="Env dev output folders (with substitutions.parquet)")
    ap.add_argument("--unjudged", action="store_true", help="print the new names no judgement covers yet")
    ap.add_argument("--misses", action="store_true", help="print the entities whose new names missed their kind")
    args = ap.parse_args()
    import pyarrow.parquet as pq

    gold = read_tsv(GOLD)
    judged = {(r["title"], r["entity"], r["new_name"]): r["fits"] for r in read_tsv(JUDGED)} if JUDGED.exists() else {}
    by_pattern, held = Counter(), Counter()
    for g in gold:
        by_pattern[g["pattern"]] += 1
        held[g["pattern"]] += g["reader_kind"] in g["words"].split()
    print(f"{len(gold)} judged dev mentions; reader's kind among the extracted words, by pattern: "
          + ", ".join(f"{p} {held[p]}/{n}" for p, n in by_pattern.most_common()))
    kinds = {(g["title"], g["entity"]): g["reader_kind"] for g in gold if g["reader_kind"] != "-"}
    print(f"{len(set(kinds))} entities with a reader's kind")
    todo: dict[tuple[str, str, str], str] = {}
    for env in args.env:
        rows = pq.read_table(Path(env) / "substitutions.parquet").to_pylist()
        fit = miss = unknown = 0
        kept: Counter[str] = Counter()
        misses: Counter[tuple[str, str]] = Counter()
        for r in rows:
            key = (r["source_title"], str(r["entity"]))
            if key not in kinds:
                continue
            if r["kind"] != "linked":
                kept[r["reason"] or r["kind"]] += 1
                continue
            new = r["new_names"][0]
            verdict = judged.get((*key, new))
            if verdict == "y":
                fit += 1
            elif verdict == "n":
                miss += 1
                misses[key] += 1
            elif verdict is None:
                todo[(*key, new)] = kinds[key]
            else:
                unknown += 1
        lo, hi = wilson(fit, fit + miss)
        print(f"{env}: new name of the kind {fit}/{fit + miss} = {fit / max(1, fit + miss):.1%} "
              f"(95% CI {lo:.1%}-{hi:.1%}); names the judge did not know {unknown}; kept {sum(kept.values())} "
              f"({dict(sorted(kept.items()))}); unjudged {len(todo)}")
        if args.misses:
            print("  misses by entity:", ", ".join(f"{t} #{e} ({kinds[(t, e)]}) {k}" for (t, e), k in misses.most_common()))
    if args.unjudged:
        for (title, ei, new), kind in sorted(todo.items()):
            print(f"{title}\t{ei}\t{new}\t{kind}", file=sys.stdout)


if __name__ == "__main__":
    main()
