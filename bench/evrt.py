"""bench/evrt: vanilla ATLOP+NCRL vs EVRT, on Re-DocRED test and Env-Re-DocRED test (per seed).

Re-DocRED's train split is absent here, so the model trains on Re-DocRED dev: the first
``--train-docs`` documents train, the rest select the checkpoint (dev F1 + Ign F1). Test sets:
Re-DocRED test and its Env version (5 renamed copies per document, titles "<title>-k").

Stages (each skips work already done, so the script can be rerun after an interruption):

    python bench/evrt.py split
    python bench/evrt.py data      # kb-from-corpus -> ingest-dump -> generate (twins of dev, Env test)
    python bench/evrt.py train --variant vanilla [--epochs 2]
    python bench/evrt.py train --variant evrt --twins runs/evrt/env/twins/dev_revised_twins.json [--epochs 2]
    python bench/evrt.py eval --env-test runs/evrt/env/test/test_revised_env.json [--test-docs 100]
    python bench/evrt.py report

Everything is written under runs/evrt/ (logs: runs/evrt/*.log); ``report`` prints the table
and writes runs/evrt/results-<checkpoint>.json.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from envbench.formats.docred import read_docs  # noqa: E402
from etl.io import write_json_atomic  # noqa: E402

SHARED = REPO.parent / "shared" / "data" / "re-docred"
RUNS = REPO / "runs" / "evrt"
PY = sys.executable


def _run(cmd: list[str], log: Path) -> float:
    """Run a command, appending its output to ``log``; return the wall time."""
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"$ {shlex.join(cmd)}\n")
        fh.flush()
        rc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=REPO).returncode
    dt = time.time() - t0
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"# exit {rc} after {dt:.0f}s\n")
    if rc:
        raise SystemExit(f"command failed (exit {rc}), see {log}: {shlex.join(cmd)}")
    return dt


def split(args: argparse.Namespace) -> None:
    docs = read_docs(SHARED / "dev_revised.json").docs
    data = RUNS / "data"
    write_json_atomic(data / "train.json", docs[: args.train_docs])
    write_json_atomic(data / "heldout.json", docs[args.train_docs :])
    print(f"{data}/train.json: {args.train_docs} docs; heldout.json: {len(docs) - args.train_docs} docs")


def data(args: argparse.Namespace) -> None:
    """Env-Re-DocRED test (5 seeds, eval pool) and EVRT twins of dev (1 seed, train pool) from a corpus KB."""
    env = RUNS / "env"
    dev, test = str(SHARED / "dev_revised.json"), str(SHARED / "test_revised.json")
    kb, links, index = env / "redocred-kb.json.gz", env / "redocred-links.json", env / "index"
    log = RUNS / "data.log"
    if not kb.is_file():
        _run([PY, "-m", "envbench", "kb-from-corpus", dev, test, "--out", str(kb), "--links", str(links)], log)
    if not (index / "manifest.json").is_file():
        _run([PY, "-m", "envbench", "ingest-dump", str(kb), "--out", str(index)], log)
    common = ["--index", str(index), "--links", str(links), "--no-progress"]
    _run([PY, "-m", "envbench", "generate", dev, *common, "--pool", "train", "--seeds", "1", "--twins",
          "--out", str(env / "twins")], log)
    _run([PY, "-m", "envbench", "generate", test, *common, "--pool", "eval", "--seeds", "5",
          "--out", str(env / "test")], log)
    print(f"twins: {env / 'twins' / 'dev_revised_twins.json'}; Env test: {env / 'test' / 'test_revised_env.json'}")


def train(args: argparse.Namespace) -> None:
    out = RUNS / (args.variant + args.suffix)
    cmd = [PY, "-m", "envbench", "train", "--train", str(RUNS / "data" / "train.json"),
           "--dev", str(RUNS / "data" / "heldout.json"), "--out", str(out), "--epochs", str(args.epochs),
           "--seed", str(args.seed), "--set", "progress=false", "--set", f"threads={args.threads}"]
    if args.variant == "evrt":
        if not args.twins:
            raise SystemExit("--twins TWINS.json is needed for the EVRT run")
        cmd += ["--evrt", "--twins", args.twins]
    for s in args.set or []:
        cmd += ["--set", s]
    dt = _run(cmd, RUNS / f"train-{args.variant}{args.suffix}.log")
    timing = _load(RUNS / "timing.json")
    timing[f"train-{args.variant}{args.suffix}"] = round(dt, 1)
    write_json_atomic(RUNS / "timing.json", timing, indent=True)


def _load(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def _subset(path: Path, titles: list[str] | None, env: bool, out: Path) -> Path:
    """The documents of ``path`` whose (source) title is among ``titles``; all when titles is None."""
    if titles is None:
        return path
    keep = set(titles)
    docs = read_docs(path).docs
    sel = [d for d in docs if (d["title"].rsplit("-", 1)[0] if env else d["title"]) in keep]
    write_json_atomic(out, sel)
    return out


def evaluate(args: argparse.Namespace) -> None:
    test = SHARED / "test_revised.json"
    titles = None
    if args.test_docs:
        titles = [d["title"] for d in read_docs(test).docs[: args.test_docs]]
    sets = {"test": _subset(test, titles, False, RUNS / "data" / "test_subset.json")}
    if args.env_test:
        sets["env"] = _subset(Path(args.env_test), titles, True, RUNS / "data" / "env_subset.json")
    timing = _load(RUNS / "timing.json")
    for variant in args.variants:
        run = RUNS / variant
        ckpt = run / args.checkpoint if args.checkpoint in ("best", "last") else run / "checkpoints" / args.checkpoint
        if not (ckpt / "model.pt").is_file():
            print(f"skip {variant}: no {ckpt}/model.pt yet")
            continue
        for name, docs in sets.items():
            pred = run / f"pred-{name}-{args.checkpoint}.json"
            if pred.is_file() and not args.force:
                continue
            cmd = [PY, "-m", "envbench", "predict", "--run", str(run), "--docs", str(docs), "--out", str(pred),
                   "--checkpoint", args.checkpoint, "--threads", str(args.threads)]
            timing[f"predict-{variant}-{name}-{args.checkpoint}"] = round(_run(cmd, RUNS / f"predict-{variant}.log"), 1)
            write_json_atomic(RUNS / "timing.json", timing, indent=True)
    write_json_atomic(RUNS / "sets.json", {k: str(v) for k, v in sets.items()}, indent=True)


def _score(gold: list[dict], preds: list[dict], train_docs: list[dict]) -> dict:
    from envbench.scoring.metrics import score

    s = score(gold, preds, train_docs)
    return {k: round(100 * float(s[k]), 2) for k in ("f1", "ign_f1", "precision", "recall")}


def report(args: argparse.Namespace) -> None:
    sets = _load(RUNS / "sets.json")
    train_docs = read_docs(RUNS / "data" / "train.json").docs
    results: dict = {"timing_s": _load(RUNS / "timing.json"), "sets": sets}
    for variant in args.variants:
        run = RUNS / variant
        ck = args.checkpoint
        if not (run / f"pred-test-{ck}.json").is_file():
            continue
        ck_dir = run / ck if ck in ("best", "last") else run / "checkpoints" / ck
        res: dict = {"checkpoint": ck, "dev": _load(ck_dir / "metrics.json"), "features": _load(run / "features.json")}
        res["config"] = {k: v for k, v in _load(run / "config.json").items() if k in (
            "epochs", "batch_size", "lr_encoder", "lr_classifier", "evrt", "alpha", "beta", "shift", "seed", "loss")}
        res["test"] = _score(read_docs(sets["test"]).docs, json.loads((run / f"pred-test-{ck}.json").read_text()), train_docs)
        if "env" in sets and (run / f"pred-env-{ck}.json").is_file():
            gold = read_docs(sets["env"]).docs
            preds = json.loads((run / f"pred-env-{ck}.json").read_text())
            seeds = sorted({d["title"].rsplit("-", 1)[1] for d in gold}, key=int)
            per_seed = {}
            for k in seeds:
                g = [d for d in gold if d["title"].rsplit("-", 1)[1] == k]
                p = [x for x in preds if x["title"].rsplit("-", 1)[-1] == k]
                per_seed[k] = _score(g, p, train_docs)
            agg = {}
            for m in ("f1", "ign_f1", "precision", "recall"):
                vals = [v[m] for v in per_seed.values()]
                agg[m] = {"mean": round(statistics.mean(vals), 2),
                          "std": round(statistics.stdev(vals), 2) if len(vals) > 1 else 0.0,
                          "min": min(vals), "max": max(vals)}
            res["env_per_seed"] = per_seed
            res["env"] = agg
            res["drop_f1"] = round(res["test"]["f1"] - agg["f1"]["mean"], 2)
            res["drop_f1_relative_pct"] = round(100 * res["drop_f1"] / res["test"]["f1"], 1) if res["test"]["f1"] else None
        results[variant] = res
    write_json_atomic(RUNS / f"results-{args.checkpoint}.json", results, indent=True)
    print("| model | test F1 | test Ign F1 | test P | test R | Env F1 (mean ± sd over seeds) | Env Ign F1 | Env P | Env R | F1 drop |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for variant in args.variants:
        r = results.get(variant)
        if not r:
            continue
        t = r["test"]
        row = [variant, t["f1"], t["ign_f1"], t["precision"], t["recall"]]
        if "env" in r:
            e = r["env"]
            row += [f"{e['f1']['mean']} ± {e['f1']['std']}", f"{e['ign_f1']['mean']} ± {e['ign_f1']['std']}",
                    f"{e['precision']['mean']} ± {e['precision']['std']}", f"{e['recall']['mean']} ± {e['recall']['std']}",
                    f"{r['drop_f1']} ({r['drop_f1_relative_pct']}%)"]
        else:
            row += ["n/a"] * 5
        print("| " + " | ".join(str(x) for x in row) + " |")
    print(json.dumps(results["timing_s"], indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="stage", required=True)
    p = sub.add_parser("split", help="split Re-DocRED dev into training and checkpoint-selection documents")
    p.add_argument("--train-docs", type=int, default=450, help="first N dev documents train; the rest select")
    sub.add_parser("data", help="build the EVRT twins of dev and Env-Re-DocRED test (kb-from-corpus, ingest-dump, generate)")
    p = sub.add_parser("train", help="train one variant")
    p.add_argument("--variant", choices=["vanilla", "evrt"], required=True, help="vanilla or EVRT")
    p.add_argument("--twins", help="renamed twins of Re-DocRED dev (generate --pool train --seeds 1 --twins)")
    p.add_argument("--epochs", type=float, default=2.0, help="training epochs")
    p.add_argument("--seed", type=int, default=66, help="training seed")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 is fastest on a busy shared CPU)")
    p.add_argument("--set", action="append", help="extra FIELD=VALUE config overrides")
    p.add_argument("--suffix", default="", help="run directory suffix, e.g. -cycle2 (runs/evrt/<variant><suffix>)")
    p = sub.add_parser("eval", help="predict the test sets with each trained variant")
    p.add_argument("--env-test", help="Env-Re-DocRED test (generate test_revised.json --seeds 5)")
    p.add_argument("--test-docs", type=int, default=0, help="only the first N test documents (and their Env copies)")
    p.add_argument("--variants", nargs="+", default=["vanilla", "evrt"], help="which runs to evaluate")
    p.add_argument("--force", action="store_true", help="predict again even if predictions exist")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads for predict")
    p.add_argument("--checkpoint", default="best", help="best, last or epoch-N")
    p = sub.add_parser("report", help="score and print the comparison table")
    p.add_argument("--variants", nargs="+", default=["vanilla", "evrt"], help="which runs to report")
    p.add_argument("--checkpoint", default="best", help="best, last or epoch-N")
    args = ap.parse_args()
    {"split": split, "data": data, "train": train, "eval": evaluate, "report": report}[args.stage](args)


if __name__ == "__main__":
    main()
