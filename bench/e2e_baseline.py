"""A pipeline baseline for end-to-end DocRE on the Env benchmarks (issue 36): what the scores mean.

1. **Entities**: every token sequence that a training document annotates as a mention is a name, typed
   as the training documents type it most often (ties: the order of COARSE_TYPES). Each sentence of a
   test document is scanned left to right; at each token the longest name that starts there is a
   mention, and the scan goes on after it (so mentions never overlap).
2. **Clusters**: mentions with identical token sequences are one entity.
3. **Relations**: the baseline's entities are written as the ``vertexSet`` of a DocRED-format copy of
   each document, labelled by a given-entities checkpoint with ``envbench predict``, and the predicted
   ``h_idx``/``t_idx`` become relations over the baseline's entities.

Then ``envbench evaluate --end-to-end`` scores the result on the original test file beside its Env
copies. On Env the names are new (``generate --exclude-names-from dev``), so exact matching of the
training names should find next to nothing of the renamed entities: that collapse is what it measures.

    python bench/e2e_baseline.py --train dev.json --gold test.json --env-gold test_env.json \\
        --run runs/e2e/atlop --out runs/e2e/baseline [--max-docs N] [--no-relations]

Without ``--run`` (or with ``--no-relations``) the relations are left out: the entity and coreference
figures are then the baseline's, and the relation figures are 0 by construction.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from envbench.core.types import COARSE_TYPES
from envbench.formats.docred import read_docs
from envbench.formats.end_to_end import DocPrediction, Entity, Relation, write_rows

Names = dict[tuple[str, ...], str]


def training_names(train_docs: Iterable[Mapping[str, Any]]) -> Names:
    """Every annotated mention's token sequence, with the type annotated most often for it."""
    votes: dict[tuple[str, ...], Counter[str]] = {}
    for doc in train_docs:
        sents = doc["sents"]
        for ent in doc["vertexSet"]:
            for m in ent:
                toks = tuple(sents[m["sent_id"]][m["pos"][0]:m["pos"][1]])
                if toks:
                    votes.setdefault(toks, Counter())[m["type"]] += 1
    order = {t: i for i, t in enumerate(COARSE_TYPES)}
    return {toks: min(c, key=lambda t: (-c[t], order.get(t, len(order)), t)) for toks, c in votes.items()}


def find_entities(doc: Mapping[str, Any], names: Names, lengths: Sequence[int]) -> list[Entity]:
    """The longest-match mentions of ``names`` in ``doc``, clustered by identical tokens, in order of first mention."""
    clusters: dict[tuple[str, ...], list[tuple[int, int, int]]] = {}
    for sid, sent in enumerate(doc["sents"]):
        i = 0
        while i < len(sent):
            for n in lengths:
                toks = tuple(sent[i:i + n])
                if len(toks) == n and toks in names:
                    clusters.setdefault(toks, []).append((sid, i, i + n))
                    i += n
                    break
            else:
                i += 1
    return [Entity(tuple(spans), names[toks]) for toks, spans in clusters.items()]


def as_docred(doc: Mapping[str, Any], entities: Sequence[Entity]) -> dict[str, Any]:
    """A DocRED-format copy of ``doc`` whose vertexSet is the baseline's entities (no labels), for `predict`."""
    sents = doc["sents"]
    vs = [[{"name": " ".join(sents[s][a:b]), "sent_id": s, "pos": [a, b], "type": e.type} for s, a, b in e.mentions]
          for e in entities]
    return {"title": doc["title"], "sents": sents, "vertexSet": vs, "labels": []}


def predict(run: str, docs_path: Path, out: Path) -> list[dict[str, Any]]:
    cmd = [sys.executable, "-m", "envbench", "predict", "--run", run, "--docs", str(docs_path), "--out", str(out),
           "--threads", "1", "--skip-invalid"]
    subprocess.run(cmd, check=True)
    return json.loads(out.read_text())


def baseline(gold: str, names: Names, out_dir: Path, stem: str, run: str | None, max_docs: int) -> tuple[Path, dict]:
    docs = read_docs(gold).docs
    if max_docs:
        docs = docs[:max_docs]
    lengths = sorted({len(k) for k in names}, reverse=True)
    t0 = time.time()
    found = {d["title"]: find_entities(d, names, lengths) for d in docs}
    info: dict[str, Any] = {"docs": len(docs), "entities": sum(map(len, found.values())),
                            "mentions": sum(len(e.mentions) for es in found.values() for e in es),
                            "find_s": round(time.time() - t0, 2)}
    rels: dict[str, list[Relation]] = {t: [] for t in found}
    if run is not None:
        docred_path = out_dir / f"{stem}_entities_docred.json"
        # predict needs two entities to make a pair; a document with fewer has no relation to predict
        docred_path.write_text(json.dumps([as_docred(d, found[d["title"]]) for d in docs
                                           if len(found[d["title"]]) >= 2]))
        t0 = time.time()
        for p in predict(run, docred_path, out_dir / f"{stem}_given_entities_pred.json"):
            rels[p["title"]].append(Relation(p["h_idx"], p["t_idx"], p["r"]))
        info["predict_s"] = round(time.time() - t0, 1)
    preds = [DocPrediction(d["title"], tuple(found[d["title"]]), tuple(rels[d["title"]])) for d in docs]
    path = out_dir / f"{stem}_e2e.json"
    path.write_text(json.dumps(write_rows(preds)))
    gold_subset = out_dir / f"{stem}_gold.json"
    gold_subset.write_text(json.dumps(docs))
    return path, info | {"gold": str(gold_subset)}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", required=True, help="training documents whose mention names are the lexicon")
    ap.add_argument("--gold", required=True, help="the original test documents")
    ap.add_argument("--env-gold", required=True, help="their Env file from `envbench generate`")
    ap.add_argument("--run", help="a given-entities run (`envbench train`) for the relations")
    ap.add_argument("--no-relations", action="store_true", help="entities and clusters only")
    ap.add_argument("--max-docs", type=int, default=0, help="only the first N original documents and their twins")
    ap.add_argument("--out", required=True, help="output folder")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = training_names(read_docs(args.train).docs)
    run = None if args.no_relations else args.run
    test_pred, test_info = baseline(args.gold, names, out, "test", run, args.max_docs)
    env_docs = read_docs(args.env_gold).docs
    if args.max_docs:
        keep = {d["title"] for d in json.loads(Path(test_info["gold"]).read_text())}
        env_docs = [d for d in env_docs if d["title"].rsplit("-", 1)[0] in keep]
        env_path = out / "env_subset.json"
        env_path.write_text(json.dumps(env_docs))
    else:
        env_path = Path(args.env_gold)
    env_pred, env_info = baseline(str(env_path), names, out, "env", run, 0)
    print(json.dumps({"names": len(names), "test": test_info, "env": env_info}, indent=1))
    cmd = [sys.executable, "-m", "envbench", "evaluate", "--end-to-end", "--gold", test_info["gold"],
           "--pred", str(test_pred), "--env-gold", env_info["gold"], "--env-pred", str(env_pred),
           "--out", str(out / "scores.json")]
    return subprocess.run(cmd).returncode


if __name__ == "__main__":
    raise SystemExit(main())
