"""Measurement: how well `kb-from-corpus` types entities, signal by signal, and what that does to substitutions.

    .venv/bin/python bench/kb_types.py            # timing, per-signal type accuracy, chance, substitution level
    .venv/bin/python bench/kb_types.py --quick    # timing and type accuracy only (no ingest/generate)
    .venv/bin/python bench/kb_types.py --curve    # issue 31: type agreement against substitution rate, per rule

Gold: ``tests/envbench/data/redocred_dev_types.tsv``, 360 hand-annotated Re-DocRED **dev** entities (120
LOC, 120 ORG, 120 MISC) with their real Wikidata class and its head noun (how the file was made, and the
head-noun rules, are in ``redocred_dev_types.md`` beside it). Test documents are only read as part of the
KB (``kb-from-corpus dev + test``, the README's offline flow); nothing about them is printed or scored.

What is printed:

1. **Timing**: `kb-from-corpus` on Re-DocRED dev + test (1,000 documents), wall time in this process.
2. **Type accuracy**: the share of annotated entities whose KB class has the annotated head noun
   (``head`` in ``envbench/data/fine_classes.json``), per coarse type; for all signals, for each signal
   alone (plus the fallback), and for all signals but one. Rows whose head noun is ``none`` (generic
   phrases that name no item) count as misses everywhere.
3. **Chance**: the same share for a random other annotated entity of the same coarse type (exact
   expectation: for each entity, the share of the other entities of its coarse type with its head noun).
4. **Purity** (what ``generate`` draws from): for each annotated entity, the share of the *other* annotated
   entities of its KB class that have its head noun; the mean over entities whose class has another
   annotated member is the expected share of same-type substitutions when candidates are drawn uniformly
   from the class.
5. **Substitution level** (not with ``--quick``): the README's offline flow (kb-from-corpus dev + test,
   ingest-dump, generate dev --seeds 5); for every non-person substitution whose source entity and whose
   replacement item both carry an annotated entity, whether the head nouns agree; and a fixed sample of 60
   non-person substitutions (source, new name, KB classes) written to ``OUT/sample60.tsv`` to read by eye.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from envbench.formats.docred import read_docred  # noqa: E402
from envbench.worlds.fine_typing import SIGNALS, FineTyper, load_fine_classes  # noqa: E402
from envbench.worlds.kb_from_corpus import cluster_corpus, corpus_evidence, kb_from_corpus  # noqa: E402

SHARED = REPO.parent / "shared" / "data" / "re-docred"
GOLD = REPO / "tests" / "envbench" / "data" / "redocred_dev_types.tsv"
COARSE = ("LOC", "ORG", "MISC")


def read_gold(path: Path = GOLD) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def chance(gold: list[dict[str, str]]) -> dict[str, float]:
    out = {}
    for c in (*COARSE, "all"):
        rows = [g for g in gold if c in ("all", g["coarse"])]
        hits = []
        for g in rows:
            others = [o for o in rows if o is not g and o["coarse"] == g["coarse"]]
            hits.append(sum(o["head_noun"] == g["head_noun"] and g["head_noun"] != "none" for o in others) / len(others))
        out[c] = sum(hits) / len(hits)
    return out


def head_of(typer: FineTyper | None, qid: str) -> str:
    """A class's head noun: fine_classes.json's, or the head of a KB-made head-noun class of ``typer``."""
    info = typer.class_info(qid) if typer is not None else load_fine_classes().classes.get(qid)
    return info.head if info is not None else ""


def accuracy(pred: dict[tuple[str, int], str], gold: list[dict[str, str]],
             typer: FineTyper | None = None) -> dict[str, float]:
    out = {}
    for c in (*COARSE, "all"):
        rows = [g for g in gold if c in ("all", g["coarse"])]
        ok = [head_of(typer, pred[(g["title"], int(g["entity"]))]) == g["head_noun"] for g in rows]
        out[c] = sum(ok) / len(ok)
    return out


def purity(pred: dict[tuple[str, int], str], gold: list[dict[str, str]]) -> tuple[float, int]:
    by_class: dict[str, list[dict[str, str]]] = defaultdict(list)
    for g in gold:
        by_class[pred[(g["title"], int(g["entity"]))]].append(g)
    shares = []
    for g in gold:
        others = [o for o in by_class[pred[(g["title"], int(g["entity"]))]] if o is not g]
        if others:
            shares.append(sum(o["head_noun"] == g["head_noun"] for o in others) / len(others))
    return (sum(shares) / len(shares) if shares else 0.0), len(shares)


def predictions(corpus, typer: FineTyper, gold: list[dict[str, str]]) -> dict[tuple[str, int], str]:
    ordered, evidences = corpus_evidence(corpus)
    typed = typer.type_all(evidences)
    by_cluster = {id(cl): t.qid for cl, t in zip(ordered, typed)}
    return {(g["title"], int(g["entity"])): by_cluster[id(corpus.slots[g["title"]][int(g["entity"])])] for g in gold}


def fmt(acc: dict[str, float]) -> str:
    return "  ".join(f"{acc[c]:6.1%}" for c in (*COARSE, "all"))


def substitution_level(out: Path, gold: list[dict[str, str]]) -> None:
    import pyarrow.parquet as pq

    from envbench.rename.generate import generate
    from wikidata_index.ingest import ingest_dump

    dev, test = SHARED / "dev_revised.json", SHARED / "test_revised.json"
    kb, links = out / "kb.json.gz", out / "links.json"
    kb_from_corpus([dev, test], kb, links)
    t0 = time.perf_counter()
    res = ingest_dump(kb, out / "index", workers=2, progress=False, force=True)
    if res.errors:
        print(f"ingest-dump: {len(res.errors)} errors, the first: {res.errors[0]}")
    t1 = time.perf_counter()
    # dev is renamed with names kept off test, as the README's Env test is built with names kept off dev
    generate(dev, out / "index", out / "env", links=links, seeds=5, progress=False, force=True,
             exclude_names_from=[test])
    t2 = time.perf_counter()
    print(f"ingest-dump {t1 - t0:.1f} s, generate dev --seeds 5 --exclude-names-from test {t2 - t1:.1f} s")
    generate(test, out / "index", out / "env-test", links=links, seeds=5, progress=False, force=True,
             exclude_names_from=[dev])
    st = json.loads((out / "env-test" / "stats.json").read_text())
    rate = st["substitution_rate"]
    print("README flow, Env test (--exclude-names-from dev): substitution rate",
          ", ".join(f"{k} {v:.3f}" for k, v in rate.items()), "| kept:", st["kept_reasons"],
          "| names seen:", json.dumps(st.get("names_seen"))[:300])
    link_rows = json.loads(links.read_text())
    head_of_member = {(g["title"], int(g["entity"])): g["head_noun"] for g in gold}
    item_heads: dict[str, set[str]] = defaultdict(set)
    for (title, ei), head in head_of_member.items():
        item_heads[link_rows[title][ei]].add(head)
    sub = pq.read_table(out / "env" / "substitutions.parquet").to_pylist()
    fine = load_fine_classes()
    rows = [r for r in sub if r["kind"] == "linked" and r["coarse_type"] in COARSE and r["new_qid"]]
    pairs = [(r, head_of_member[(r["source_title"], r["entity"])], item_heads[r["new_qid"]]) for r in rows
             if (r["source_title"], r["entity"]) in head_of_member and r["new_qid"] in item_heads]
    kept = [h in hs for _, h, hs in pairs]
    n_non_person = len(rows)
    print(f"non-person substitutions: {n_non_person}; with source and replacement both annotated: {len(pairs)}; "
          f"same head noun: {sum(kept)}/{len(kept)} = {sum(kept) / max(1, len(kept)):.1%}")
    for c in COARSE:
        ks = [h in hs for r, h, hs in pairs if r["coarse_type"] == c]
        print(f"  {c}: {sum(ks)}/{len(ks)} = {sum(ks) / max(1, len(ks)):.1%}")
    rng = random.Random(20)
    sample = rng.sample(rows, min(60, len(rows)))
    with open(out / "sample60.tsv", "w", encoding="utf-8") as fh:
        fh.write("coarse\tsource_title\tentity\told_names\tnew_names\tclass\tsame_type\n")
        for r in sample:
            fh.write(f"{r['coarse_type']}\t{r['source_title']}\t{r['entity']}\t{' | '.join(r['old_names'])}\t"
                     f"{' | '.join(r['new_names'])}\t{fine.classes[r['fine_type']].label if r['fine_type'] in fine.classes else r['fine_type']}\t\n")
    print(f"60 non-person substitutions to judge by eye: {out / 'sample60.tsv'}")
    stats = json.loads((out / "env" / "stats.json").read_text())
    rate = stats["substitution_rate"]
    print("substitution rate:", ", ".join(f"{k} {v:.3f}" for k, v in rate.items()),
          f"| audit: {stats['audit']['total']['held_after']} of {stats['audit']['total']['held_before']} checks "
          f"still hold (preserved: {stats['audit']['preserved']})")


# the rules whose trade-off --curve measures: (label, catch-alls kept, HEAD_LEARNED_MIN, HEAD_MIN_ITEMS);
# None turns a part of the head signal off
CURVE = (("catch-alls renamed (before issue 31)", False, None, None),
         ("catch-alls kept (generic_type)", True, None, None),
         ("+ head noun, learned class (>= 2 typed names, 60% agree)", True, 2, None),
         ("+ head-noun classes of >= 3 names (default)", True, 2, 3),
         ("+ head-noun classes of >= 3 names, learned from 1", True, 1, 3),
         ("+ head-noun classes of >= 2 names", True, 2, 2),
         ("+ head-noun classes of >= 2 names, learned from 1", True, 1, 2))


def curve(corpus, gold: list[dict[str, str]], out: Path, env: bool, only: str = "") -> None:
    """Type agreement against substitution rate, rule by rule (issue 31): on the annotated dev entities,
    the share renamed (class not a catch-all) and, of those, the share whose class has the annotated head
    noun; with ``env``, also the README flow's Env test substitution rate under each rule."""
    from envbench.core.types import CATCH_ALL_CLASSES
    from envbench.worlds import fine_typing

    saved = (fine_typing.HEAD_LEARNED_MIN, fine_typing.HEAD_MIN_ITEMS)
    print("\nrule                                                   renamed  agree (LOC / ORG / MISC / all)   Env test rate")
    try:
        for label, kept, learned_min, min_items in CURVE:
            if only and only not in label:
                continue
            fine_typing.HEAD_LEARNED_MIN = learned_min if learned_min is not None else 10**9
            fine_typing.HEAD_MIN_ITEMS = min_items if min_items is not None else 10**9
            signals = SIGNALS if learned_min is not None else tuple(s for s in SIGNALS if s != "head")
            typer = FineTyper(signals)
            pred = predictions(corpus, typer, gold)
            renamed = [g for g in gold if not (kept and pred[(g["title"], int(g["entity"]))] in CATCH_ALL_CLASSES)]
            agree = {}
            for c in (*COARSE, "all"):
                rows = [g for g in renamed if c in ("all", g["coarse"])]
                info = [typer.class_info(pred[(g["title"], int(g["entity"]))]) for g in rows]
                agree[c] = sum(i is not None and i.head == g["head_noun"] for i, g in zip(info, rows)) / max(1, len(rows))
            rate = "(generate keeps catch-alls)" if not kept else ""
            if env and kept:
                rate = f"{env_rate(out / 'curve', signals):.3f}"
            print(f"  {label:<54} {len(renamed) / len(gold):6.1%}  {fmt(agree)}   {rate}")
    finally:
        fine_typing.HEAD_LEARNED_MIN, fine_typing.HEAD_MIN_ITEMS = saved


def env_rate(out: Path, signals: tuple[str, ...]) -> float:
    """The README flow's Env test substitution rate (KB from dev + test, names kept off dev), 5 seeds."""
    from envbench.rename.generate import generate
    from wikidata_index.ingest import ingest_dump

    dev, test = SHARED / "dev_revised.json", SHARED / "test_revised.json"
    kb, links = out / "kb.json.gz", out / "links.json"
    kb_from_corpus([dev, test], kb, links, signals=signals, force=True)
    ingest_dump(kb, out / "index", workers=2, progress=False, force=True)
    generate(test, out / "index", out / "env-test", links=links, seeds=5, progress=False, force=True,
             exclude_names_from=[dev])
    return json.loads((out / "env-test" / "stats.json").read_text())["substitution_rate"]["total"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="timing and type accuracy only")
    ap.add_argument("--out", default=str(REPO / "runs" / "bench" / "kb_types"), help="working folder")
    ap.add_argument("--curve", action="store_true",
                    help="only the trade-off of issue 31's rules: type agreement against substitution rate")
    ap.add_argument("--no-env", action="store_true", help="with --curve: skip the Env test runs (about 90 s each)")
    ap.add_argument("--only", default="", help="with --curve: only the rules whose label contains this text")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dev, test = SHARED / "dev_revised.json", SHARED / "test_revised.json"
    gold = read_gold()
    if args.curve:
        curve(cluster_corpus([read_docred(dev), read_docred(test)]), gold, out, env=not args.no_env, only=args.only)
        return

    t0 = time.perf_counter()
    res = kb_from_corpus([dev, test], out / "time" / "kb.json.gz", out / "time" / "links.json", force=True)
    print(f"kb-from-corpus, Re-DocRED dev + test ({res.documents} documents, {res.items} items): "
          f"{time.perf_counter() - t0:.1f} s wall (target < 60 s on 2 cores)")

    corpus = cluster_corpus([read_docred(dev), read_docred(test)])
    print(f"\n{len(gold)} annotated dev entities; head-noun agreement   LOC     ORG     MISC    all")
    ch = chance(gold)
    print(f"  chance (random entity, same coarse type)  {fmt(ch)}")
    configs = [("fallback only (no signal)", ())]
    configs += [(f"{s} alone", (s,)) for s in SIGNALS]
    configs += [(f"all but {s}", tuple(x for x in SIGNALS if x != s)) for s in SIGNALS]
    configs += [("relations only, old rule (type table, one vote decides)", "old")]
    configs += [("all signals", SIGNALS)]
    results = {}
    for label, signals in configs:
        if signals == "old":
            from envbench.worlds.type_table import load_type_table

            table = load_type_table()
            pred = {(g["title"], int(g["entity"])): table.infer(corpus.slots[g["title"]][int(g["entity"])].roles,
                                                                 g["coarse"]) for g in gold}
        else:
            typer = FineTyper(signals)
            pred = predictions(corpus, typer, gold)
        acc = accuracy(pred, gold, typer if signals != "old" else None)
        p, n = purity(pred, gold)
        results[label] = (acc, p)
        print(f"  {label:<42} {fmt(acc)}   purity {p:6.1%} ({n})")
    (out / "accuracy.json").write_text(json.dumps({k: {"accuracy": a, "purity": p} for k, (a, p) in results.items()},
                                                  indent=1) + "\n")
    misses = Counter()
    typer = FineTyper()
    pred = predictions(corpus, typer, gold)
    with open(out / "misses.tsv", "w", encoding="utf-8") as fh:
        for g in gold:
            q = pred[(g["title"], int(g["entity"]))]
            if head_of(typer, q) != g["head_noun"]:
                misses[(g["head_noun"], head_of(typer, q))] += 1
                info = typer.class_info(q)
                fh.write(f"{g['coarse']}\t{g['names']}\t{g['head_noun']}\t{info.label if info else q}\n")
    print("most frequent misses (annotated head -> KB head):", misses.most_common(12))
    if not args.quick:
        substitution_level(out / "flow", gold)


if __name__ == "__main__":
    main()
