"""The attacks side by side on one benchmark, with two cheap given-entities systems (issue 61's demonstration).

1. ``envbench generate`` writes one Env folder per attack of the same documents: ``env`` (the Env
   benchmark: rename at rate 1.0), ``env-r0.2`` .. ``env-r0.8`` (``--rate``), ``env-mask``,
   ``env-shuffle``, ``env-type-swap`` (the negative control), ``env-pop-low`` / ``env-pop-high``
   (``--popularity``), each with ``--exclude-names-from TRAIN``.
2. Two systems that need no training run, fitted on ``--train``, predict on the original and on every folder:

   - ``memorized``: ``(h, t, r)`` whenever ``(a head mention name, a tail mention name, r)`` is a fact of the
     training documents (Ign F1's "seen in train"): it knows entities by name and nothing else;
   - ``type-prior``: every ordered pair of entities that share a sentence takes the relation most often
     annotated between same-sentence training entities of its two coarse types, where that rule held for at
     least a fifth of such pairs (``bench/e2e_baseline.py``'s rule): it never reads a name.

3. ``envbench report --env ... --system ...`` sets them side by side (``OUT/report``).

    python bench/attacks.py --docs test_revised.json --train dev_revised.json --index runs/lock/index \\
        --links runs/lock/redocred-links.json --out runs/attacks

What to expect: ``type-prior`` reads no name, so no attack moves it (its falls are 0 by construction, a
check of the report); ``memorized`` falls with every name it no longer finds, most under mask.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from e2e_baseline import type_prior  # noqa: E402

from envbench.formats.docred import read_docs  # noqa: E402
from envbench.rename.generate import generate  # noqa: E402
from envbench.scoring.metrics import train_facts  # noqa: E402
from envbench.scoring.report.robustness import robustness_report  # noqa: E402

RATES = (0.2, 0.4, 0.6, 0.8)


def folders(rates: Sequence[float]) -> dict[str, dict[str, Any]]:
    """Folder name -> generate's attack arguments."""
    out: dict[str, dict[str, Any]] = {"env": {}}
    out |= {f"env-r{r:g}": {"rate": r} for r in rates}
    out |= {"env-mask": {"attack": "mask"}, "env-shuffle": {"attack": "shuffle"},
            "env-type-swap": {"attack": "type-swap"},
            "env-pop-low": {"popularity": "low"}, "env-pop-high": {"popularity": "high"}}
    return out


def memorized(docs: Sequence[Mapping[str, Any]], facts: frozenset[tuple[str, str, str]]) -> list[dict[str, Any]]:
    by_pair: dict[tuple[str, str], set[str]] = {}
    for a, b, r in facts:
        by_pair.setdefault((a, b), set()).add(r)
    out = []
    for doc in docs:
        names = [{m["name"] for m in e} for e in doc["vertexSet"]]
        for h, hn in enumerate(names):
            for t, tn in enumerate(names):
                if h != t:
                    for r in sorted({r for a in hn for b in tn for r in by_pair.get((a, b), ())}):
                        out.append({"title": doc["title"], "h_idx": h, "t_idx": t, "r": r})
    return out


def prior(docs: Sequence[Mapping[str, Any]], rules: Mapping[tuple[str, str], str]) -> list[dict[str, Any]]:
    out = []
    for doc in docs:
        vs = doc["vertexSet"]
        sents = [{m["sent_id"] for m in e} for e in vs]
        types = [e[0]["type"] for e in vs]
        for h in range(len(vs)):
            for t in range(len(vs)):
                if h != t and sents[h] & sents[t] and (types[h], types[t]) in rules:
                    out.append({"title": doc["title"], "h_idx": h, "t_idx": t, "r": rules[(types[h], types[t])]})
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", required=True, help="original benchmark (DocRED format), e.g. test_revised.json")
    ap.add_argument("--train", required=True, help="training documents the systems are fitted on, e.g. dev_revised.json")
    ap.add_argument("--index", required=True, help="index of `envbench ingest-dump`")
    ap.add_argument("--links", required=True, help="link file of the documents")
    ap.add_argument("--out", required=True, help="folder for the Env folders, predictions and report")
    ap.add_argument("--seeds", type=int, default=5, help="renamed copies per document (mask: one, it ignores the seed)")
    ap.add_argument("--replicates", type=int, default=2000, help="bootstrap resamples of the report")
    args = ap.parse_args(argv)
    out = Path(args.out)
    t0 = time.perf_counter()
    made = {}
    for name, kwargs in folders(RATES).items():
        seeds = 1 if kwargs.get("attack") == "mask" else args.seeds
        res = generate(args.docs, args.index, out / name, links=args.links, seeds=seeds,
                       exclude_names_from=[args.train], progress=False, **kwargs)
        made[name] = out / name
        print(f"{name}: {'up to date' if res.up_to_date else f'{res.seconds:.1f} s'}", flush=True)
    train = read_docs(args.train).docs
    facts, rules = train_facts(train), type_prior(train)
    systems = {"memorized": lambda docs: memorized(docs, facts), "type-prior": lambda docs: prior(docs, rules)}
    for system, predict in systems.items():
        folder = out / "preds" / system
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "original.json").write_text(json.dumps(predict(read_docs(args.docs).docs)))
        for name, env in made.items():
            (folder / f"{name}.json").write_text(json.dumps(predict(read_docs(env / next(
                p.name for p in env.glob("*_env.json"))).docs)))
    rob = robustness_report(args.docs, list(made.values()), [(s, out / "preds" / s) for s in systems],
                            out=out / "report", train=[args.train], replicates=args.replicates)
    print(rob.summary())
    for n in rob.notes:
        print(f"Note: {n}")
    print(f"wrote {out / 'report'} in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
