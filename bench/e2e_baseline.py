"""A pipeline baseline for end-to-end DocRE on the Env benchmarks (issue 36): what the scores mean.

1. **Entities**: every token sequence that a training document annotates as a mention is a name, typed
   as the training documents type it most often (ties: the order of COARSE_TYPES). Each sentence of a
   test document is scanned left to right; at each token the longest name that starts there is a
   mention, and the scan goes on after it (so mentions never overlap).
2. **Clusters**: mentions with identical token sequences are one entity.
3. **Relations** over the baseline's entities, one of (``--relations``):

   - ``checkpoint``: the entities are written as the ``vertexSet`` of a DocRED-format copy of each
     document, labelled by a given-entities checkpoint (``--run``) with ``envbench predict``, and the
     predicted ``h_idx``/``t_idx`` become relations over the baseline's entities;
   - ``memorized`` (gold-free): ``(head name, tail name, r)`` whenever that triple is a fact of the
     training documents (over all mention-name pairs of their labels, as Ign F1's "in train", with
     names read from the tokens);
   - ``type-prior`` (gold-free): every ordered pair of entities that share a sentence gets the relation
     most often annotated in the training documents between same-sentence entities of its two types,
     where that rule was right for at least ``PRIOR_PRECISION`` of such training pairs;
   - ``none``: entities and clusters only (the relation figures are then 0 by construction).

Then ``envbench evaluate --end-to-end`` scores the result on the original test file beside its Env
copies. On Env the names are new (``generate --exclude-names-from dev``), so exact matching of the
training names should find next to nothing of the renamed entities: that collapse is what it measures.

    python bench/e2e_baseline.py --train dev.json --gold test.json --env-gold test_env.json \\
        --relations checkpoint --run runs/e2e/atlop --out runs/e2e/baseline [--max-docs N]
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
RELATION_SOURCES = ("checkpoint", "memorized", "type-prior", "none")
PRIOR_PRECISION = 0.2  # a type-pair rule is kept when it was right this often on the training pairs


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


def _name(doc: Mapping[str, Any], span: tuple[int, int, int]) -> str:
    return " ".join(doc["sents"][span[0]][span[1]:span[2]])


def token_facts(train_docs: Iterable[Mapping[str, Any]]) -> frozenset[tuple[str, str, str]]:
    """The training facts as (head name, tail name, r), names read from the tokens as the baseline reads them
    (Ign F1's ``train_facts`` uses the ``name`` fields, which can differ from the tokens)."""
    facts: set[tuple[str, str, str]] = set()
    for doc in train_docs:
        vs = doc["vertexSet"]
        names = [{_name(doc, (m["sent_id"], m["pos"][0], m["pos"][1])) for m in e} for e in vs]
        for lab in doc.get("labels", []) or []:
            facts.update((a, b, lab["r"]) for a in names[lab["h"]] for b in names[lab["t"]])
    return frozenset(facts)


def facts_by_pair(facts: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str], list[str]]:
    by_pair: dict[tuple[str, str], list[str]] = {}
    for n1, n2, r in facts:
        by_pair.setdefault((n1, n2), []).append(r)
    return by_pair


def memorized_relations(doc: Mapping[str, Any], entities: Sequence[Entity],
                        by_pair: Mapping[tuple[str, str], Sequence[str]]) -> list[Relation]:
    """``(h, t, r)`` for every pair whose mention names form a training fact (``facts_by_pair``)."""
    names = [{_name(doc, s) for s in e.mentions} for e in entities]
    out = []
    for h, hn in enumerate(names):
        for t, tn in enumerate(names):
            if h != t:
                rs = {r for a in hn for b in tn for r in by_pair.get((a, b), ())}
                out += [Relation(h, t, r) for r in sorted(rs)]
    return out


def type_prior(train_docs: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """Per ordered type pair, the relation most often annotated between same-sentence training entities,
    kept where it held for at least PRIOR_PRECISION of the same-sentence pairs of those types."""
    pairs: Counter[tuple[str, str]] = Counter()
    hits: dict[tuple[str, str], Counter[str]] = {}
    for doc in train_docs:
        vs = doc["vertexSet"]
        sents = [{m["sent_id"] for m in e} for e in vs]
        types = [e[0]["type"] for e in vs]
        labels: dict[tuple[int, int], set[str]] = {}
        for lab in doc.get("labels", []) or []:
            labels.setdefault((lab["h"], lab["t"]), set()).add(lab["r"])
        for h in range(len(vs)):
            for t in range(len(vs)):
                if h != t and sents[h] & sents[t]:
                    key = (types[h], types[t])
                    pairs[key] += 1
                    hits.setdefault(key, Counter()).update(labels.get((h, t), ()))
    rules = {}
    for key, c in hits.items():
        if c:
            r, n = min(c.items(), key=lambda kv: (-kv[1], kv[0]))
            if n >= PRIOR_PRECISION * pairs[key]:
                rules[key] = r
    return rules


def prior_relations(entities: Sequence[Entity], rules: Mapping[tuple[str, str], str]) -> list[Relation]:
    sents = [{s[0] for s in e.mentions} for e in entities]
    return [Relation(h, t, rules[(entities[h].type, entities[t].type)])
            for h in range(len(entities)) for t in range(len(entities))
            if h != t and sents[h] & sents[t] and (entities[h].type, entities[t].type) in rules]


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


def baseline(gold: str, names: Names, out_dir: Path, stem: str, how: str, train: Sequence[Mapping[str, Any]],
             run: str | None, max_docs: int) -> tuple[Path, dict]:
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
    if how == "memorized":
        by_pair = facts_by_pair(token_facts(train))
        rels = {d["title"]: memorized_relations(d, found[d["title"]], by_pair) for d in docs}
    elif how == "type-prior":
        rules = type_prior(train)
        info["type_prior_rules"] = {f"{h}-{t}": r for (h, t), r in sorted(rules.items())}
        rels = {d["title"]: prior_relations(found[d["title"]], rules) for d in docs}
    elif how == "checkpoint":
        if run is None:
            raise SystemExit("--relations checkpoint needs --run (a given-entities run of `envbench train`)")
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
    ap.add_argument("--relations", choices=RELATION_SOURCES, default="checkpoint", help="where relations come from")
    ap.add_argument("--run", help="a given-entities run (`envbench train`), for --relations checkpoint")
    ap.add_argument("--max-docs", type=int, default=0, help="only the first N original documents and their twins")
    ap.add_argument("--out", required=True, help="output folder")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    train = read_docs(args.train).docs
    names = training_names(train)
    test_pred, test_info = baseline(args.gold, names, out, "test", args.relations, train, args.run, args.max_docs)
    env_docs = read_docs(args.env_gold).docs
    if args.max_docs:
        keep = {d["title"] for d in json.loads(Path(test_info["gold"]).read_text())}
        env_docs = [d for d in env_docs if d["title"].rsplit("-", 1)[0] in keep]
        env_path = out / "env_subset.json"
        env_path.write_text(json.dumps(env_docs))
    else:
        env_path = Path(args.env_gold)
    env_pred, env_info = baseline(str(env_path), names, out, "env", args.relations, train, args.run, 0)
    print(json.dumps({"names": len(names), "test": test_info, "env": env_info}, indent=1))
    cmd = [sys.executable, "-m", "envbench", "evaluate", "--end-to-end", "--gold", test_info["gold"],
           "--pred", str(test_pred), "--env-gold", env_info["gold"], "--env-pred", str(env_pred),
           "--out", str(out / "scores.json")]
    return subprocess.run(cmd).returncode


if __name__ == "__main__":
    raise SystemExit(main())
