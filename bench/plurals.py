"""Measurement: plural people's names stay plural people's names (issue 58 §3, target <= 2% broken).

    .venv/bin/python bench/plurals.py runs/lock/env ../shared/data/re-docred/test_revised.json
    .venv/bin/python bench/plurals.py ENV_DIR SOURCE.json [--show 20]

For every mention of a non-person entity whose old name is a plural people's name ("Americans", "Germans",
"Poles": a plural form of the bundled lexicon, ``envbench.worlds.gazetteers``, or the regular plural of a
singular form of it, ``core.demonym_plurals``), in every renamed copy: **kept** (the entity kept its names),
**plural** (the new name is a plural people's name again: a plural form of the lexicon, the regular plural of
a form of it, a form that is its own plural, "Chinese", or a name ending in "people"), or **broken** (anything
else: "Many Australian Guinea have stayed here", "the Shingini language"). Prints the shares and the first
``--show`` broken ones. Mentions are counted, once per seed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from envbench.core.demonym_plurals import same_in_plural, singular_of  # noqa: E402
from envbench.formats.docred import read_docred  # noqa: E402
from envbench.worlds.gazetteers import load_gazetteer  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("env", help="a generate output folder (substitutions.parquet)")
    ap.add_argument("source", help="the DocRED-format file it was generated from")
    ap.add_argument("--show", type=int, default=15, help="broken ones to print")
    args = ap.parse_args()
    import pyarrow.parquet as pq

    gz = load_gazetteer()

    def plural_people(name: str) -> bool:
        if name.split()[:1] == ["The"]:
            return False  # a title: "The Scotsman", a newspaper
        if any(a.kind.endswith("_plural") for a in gz.adjectival_for(name)):
            return True
        single = singular_of(name)
        return single is not None and bool(gz.adjectival_for(single)) and not gz.places_for(name)

    def reads_plural_people(name: str) -> bool:
        return (plural_people(name) or name.endswith(" people")
                or (same_in_plural(name) and bool(gz.adjectival_for(name))))

    docs = {d["title"]: d for d in read_docred(args.source).docs}
    rows = pq.read_table(Path(args.env) / "substitutions.parquet").to_pylist()
    verdicts: Counter[str] = Counter()
    broken: list[str] = []
    for r in rows:
        if r["coarse_type"] in ("PER", "NUM", "TIME"):
            continue
        ent = docs[r["source_title"]]["vertexSet"][r["entity"]]
        per_name = Counter(m["name"] for m in ent)
        for old, new in zip(r["old_names"], r["new_names"]):
            if not plural_people(old):
                continue
            if r["kind"] == "kept" or old == new:
                v = "kept"
            elif reads_plural_people(new):
                v = "plural"
            else:
                v = "broken"
                if len(broken) < args.show:
                    broken.append(f"  {r['title']}: {old} -> {new} ({r['coarse_type']}, {r['kind']})")
            verdicts[v] += per_name[old]
    renamed = verdicts["plural"] + verdicts["broken"]
    print(f"{args.env}: {sum(verdicts.values())} mentions of plural people's names; kept {verdicts['kept']}, "
          f"renamed {renamed}: plural {verdicts['plural']}, broken {verdicts['broken']} "
          f"({verdicts['broken'] / max(1, renamed):.2%} of the renamed)")
    print("\n".join(broken))
    print(json.dumps(dict(verdicts)))


if __name__ == "__main__":
    main()
