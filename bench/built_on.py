"""Measurement: names built on other names (issue 58, target: a pair in at most 2% of renamed documents).

    .venv/bin/python bench/built_on.py runs/lock/env ../shared/data/re-docred/test_revised.json
    .venv/bin/python bench/built_on.py ENV_DIR SOURCE.json [--show 20] [--salt S]

A *pair* is two entities A and B of one source document, neither NUM nor TIME, of different items (their
links differ, or one has none), where a mention name of A holds a mention name of B as a shorter run of
whole tokens ("USS Lyndon B. Johnson" holds "Lyndon B. Johnson", "Lee Hall" holds "Lee"). Counted in the
renamed copies (one per seed), by what became of it (``substitutions.parquet``):

* **broken**: in the renamed copy a mention name of A still holds an original name of B as a run of whole
  tokens, and B was renamed ("USS Lyndon B. Johnson" beside "Comte de Boulainvilliers"): the property
  of issue 58; or A was renamed by a draw of its own and B kept ("the Ashikaga Shogunate , Tokugawa
  Ieyasu"): only one of the two renamed;
* **derived**: A's names were written from B's new names (``kind`` derived, ``built_on`` names B);
* **both kept**, **both drawn** (each its own new item), **other** (anything else).

A renamed document *with a pair* holds at least one broken pair. Also counted: mentions of renamed names
left in the text outside every annotated mention (a renamed name's tokens, as a whole-token run with a
capital letter or of two tokens or more, that no mention covers, in a sentence of the renamed copy).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

RULE = frozenset({"NUM", "TIME"})


def holds(outer: tuple[str, ...], inner: tuple[str, ...]) -> bool:
    n = len(inner)
    return 0 < n < len(outer) and any(outer[i:i + n] == inner for i in range(len(outer) - n + 1))


def names(doc: dict[str, Any], ei: int) -> set[tuple[str, ...]]:
    return {tuple(doc["sents"][m["sent_id"]][m["pos"][0]:m["pos"][1]]) for m in doc["vertexSet"][ei]}


def pairs_of(doc: dict[str, Any], qids: list[str | None]) -> list[tuple[int, int]]:
    out = []
    ents = doc["vertexSet"]
    own = [names(doc, ei) for ei in range(len(ents))]
    for a in range(len(ents)):
        if ents[a][0]["type"] in RULE:
            continue
        for b in range(len(ents)):
            if a == b or ents[b][0]["type"] in RULE or (qids[a] is not None and qids[a] == qids[b]):
                continue
            if any(holds(x, y) for x in own[a] for y in own[b]):
                out.append((a, b))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("env", help="a generate output folder (the Env JSON and substitutions.parquet)")
    ap.add_argument("source", help="the DocRED-format file it was generated from")
    ap.add_argument("--show", type=int, default=10, help="print this many pairs of --kind (default 10)")
    ap.add_argument("--salt", default="built-on", help="salt of the md5 order the broken pairs are shown in")
    ap.add_argument("--kind", default="broken", help="which pairs to print (broken, drawn beside kept, ...)")
    args = ap.parse_args()
    import pyarrow.parquet as pq

    env = Path(args.env)
    source = {d["title"]: d for d in json.loads(Path(args.source).read_text("utf-8"))}
    outs = [p for p in env.glob("*_env.json")]
    renamed = {d["title"]: d for d in json.loads(outs[0].read_text("utf-8"))}
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    for r in pq.read_table(env / "substitutions.parquet").to_pylist():
        rows[(r["title"], r["entity"])] = r
    by_title: dict[str, list[dict[str, Any]]] = {}
    for (t, _), r in rows.items():
        by_title.setdefault(t, []).append(r)
    fates: Counter[str] = Counter()
    docs_with = 0
    docs_renamed = 0
    strays = 0
    docs_strays = 0
    broken: list[tuple[str, str, str]] = []
    for title, out in renamed.items():
        rs = sorted(by_title.get(title, []), key=lambda r: r["entity"])
        src = source[rs[0]["source_title"]]
        qids = [r["qid"] for r in rs]
        changed = [r["kind"] != "kept" and r["old_names"] != r["new_names"] for r in rs]
        if not any(changed):
            continue
        docs_renamed += 1
        hit = False
        for a, b in pairs_of(src, qids):
            ra, rb = rs[a], rs[b]
            now_a = names(out, a)
            old_b = names(src, b)
            if changed[b] and any(holds(x, y) or x == y for x in now_a for y in old_b if y not in names(out, b)):
                fate = "broken"
            elif ra["kind"] == "linked" and not changed[b]:
                fate = "drawn beside kept"
            elif ra["kind"] == "derived":
                fate = "derived"
            elif not changed[a] and not changed[b]:
                fate = "both kept"
            elif ra["kind"] == "linked" and rb["kind"] != "kept":
                fate = "both drawn"
            else:
                fate = "other"
            fates[fate] += 1
            hit = hit or fate == "broken"
            if fate == args.kind:
                name_a = " / ".join(" ".join(x) for x in sorted(now_a))
                name_b = " / ".join(" ".join(x) for x in sorted(old_b))
                new_b = " / ".join(" ".join(x) for x in sorted(names(out, b)))
                broken.append((title, f"A {a} ({ra['kind']}/{ra['reason']}): {name_a}",
                               f"B {b} ({rb['kind']}/{rb['reason']}): {name_b} -> {new_b}"))
        docs_with += hit
        # renamed names left outside every mention
        covered = {(m["sent_id"], i) for e in out["vertexSet"] for m in e for i in range(*m["pos"])}
        left = 0
        for b, r in enumerate(rs):
            if not changed[b] or r["coarse_type"] in RULE:
                continue
            for old in names(src, b) - names(out, b):
                if len(old) < 2 and not any(ch.isupper() for ch in old[0]):
                    continue
                for sid, sent in enumerate(out["sents"]):
                    for i in range(len(sent) - len(old) + 1):
                        if tuple(sent[i:i + len(old)]) == old and not any((sid, j) in covered
                                                                           for j in range(i, i + len(old))):
                            left += 1
        strays += left
        docs_strays += left > 0
    total = sum(fates.values())
    print(f"renamed documents: {docs_renamed}; pairs (A holds B) in them: {total}")
    for k, v in fates.most_common():
        print(f"  {k}: {v} ({v / total:.1%})" if total else f"  {k}: {v}")
    print(f"renamed documents with a broken pair: {docs_with} ({docs_with / max(docs_renamed, 1):.2%})")
    print(f"renamed names left outside every mention: {strays} in {docs_strays} documents "
          f"({docs_strays / max(docs_renamed, 1):.2%})")
    broken.sort(key=lambda x: hashlib.md5((args.salt + x[0] + x[1]).encode()).hexdigest())
    for t, a, b in broken[:args.show]:
        print(f"- {t}: {a} | {b}")


if __name__ == "__main__":
    main()
