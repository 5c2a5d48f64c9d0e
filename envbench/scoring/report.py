"""The robustness report: a model on the original benchmark versus its renamed (Env) twin.

Reproduces the paper's analyses side by side: precision/recall change (Table 2), intra/inter
F1 (Table 3), F1 by number of entities with linear-fit slopes (Figure 4), popularity of the
renamed entities per type (Table 4), names seen in training per type (Table 5), substitution
rates (Table 1), plus the consistency rate per relation.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import DataError
from envbench.core.relations import RELATIONS
from envbench.core.types import COARSE_TYPES
from envbench.formats.docred import Doc, entity_type
from envbench.formats.linked_docred import read_documents, read_json_file
from envbench.formats.substitutions import read_substitution_rows, read_substitutions
from envbench.scoring.evaluate import (
    check_outputs_differ,
    env_seeds,
    load_predictions,
    original_names,
    read_gold,
    score_env,
    split_seed,
)
from envbench.scoring.metrics import CheckedPredictions, check_predictions, prf, score, train_facts
from etl.io import write_bytes_atomic, write_json_atomic

# Figure 4's buckets of entities per document: (label, lowest, highest) inclusive.
ENTITY_BUCKETS: tuple[tuple[str, int, int], ...] = (
    ("1-10", 1, 10),
    ("11-15", 11, 15),
    ("16-20", 16, 20),
    ("21-25", 21, 25),
    ("26-30", 26, 30),
    ("31+", 31, 10**9),
)
TYPES = COARSE_TYPES
REPORT_FILES = ("report.json", "report.md", "f1_by_entities.png", "type_drop.png")
TABLE2_KEYS = ("precision", "recall", "f1", "ign_f1")
TABLE3_KEYS = ("intra_f1", "inter_f1")


# --------------------------------------------------------------------------- slices
def slice_scores(
    gold_docs: Sequence[Mapping[str, Any]],
    checked: CheckedPredictions,
    keys: Callable[[str, int, int, str], Iterable[Hashable]],
) -> dict[Hashable, dict[str, float]]:
    """P/R/F1 within slices of facts: ``keys(title, h, t, r)`` names the slices a fact belongs to.

    Gold facts and predictions on known titles are sliced alike (as the official intra/inter
    split does); predictions on unknown titles belong to no slice.
    """
    gold: set[tuple[str, int, int, str]] = set()
    counts: dict[Hashable, list[int]] = {}  # key -> [submitted, correct, gold]
    titles = set()
    for doc in gold_docs:
        titles.add(doc["title"])
        for lab in doc.get("labels", []) or []:
            fact = (doc["title"], lab["h"], lab["t"], lab["r"])
            if fact in gold:
                continue
            gold.add(fact)
            for k in keys(*fact):
                counts.setdefault(k, [0, 0, 0])[2] += 1
    for fact in checked.facts:
        if fact[0] not in titles:
            continue
        hit = fact in gold
        for k in keys(*fact):
            c = counts.setdefault(k, [0, 0, 0])
            c[0] += 1
            c[1] += hit
    out: dict[Hashable, dict[str, float]] = {}
    for k, (sub, cor, gol) in counts.items():
        p, r, f = prf(cor, sub, gol)
        out[k] = {"precision": p, "recall": r, "f1": f, "n_pred": sub, "n_correct": cor, "n_gold": gol}
    return out


def _checked(docs: Sequence[Mapping[str, Any]], preds: Sequence[Any], source: str) -> CheckedPredictions:
    return check_predictions(preds, {d["title"]: len(d["vertexSet"]) for d in docs}, source=source)


def _bucket(n: int) -> str:
    for label, lo, hi in ENTITY_BUCKETS:
        if lo <= n <= hi:
            return label
    return ENTITY_BUCKETS[0][0]  # a document without entities has no facts either


def linear_slope(xs: Sequence[float], ys: Sequence[float], ws: Sequence[float]) -> float | None:
    """Weighted least-squares slope of y on x (None with fewer than two distinct x)."""
    sw = sum(ws)
    if len({x for x, w in zip(xs, ws) if w > 0}) < 2 or sw <= 0:
        return None
    mx = sum(w * x for x, w in zip(xs, ws)) / sw
    my = sum(w * y for y, w in zip(ys, ws)) / sw
    sxx = sum(w * (x - mx) ** 2 for x, w in zip(xs, ws))
    sxy = sum(w * (x - mx) * (y - my) for x, y, w in zip(xs, ys, ws))
    return sxy / sxx


# --------------------------------------------------------------------------- popularity
def popularity(index: str | os.PathLike[str], qids: Iterable[str]) -> dict[str, int]:
    """Popularity of each item id in the index (missing ids are left out), by one SQL join."""
    ids = sorted(set(qids))
    if not ids:
        return {}
    query = ("SELECT e.id, e.popularity FROM entities e "
             "JOIN (SELECT unnest($ids::VARCHAR[]) AS id) q ON e.id = q.id ORDER BY e.id")
    from wikidata_index.index import WikidataIndex

    with WikidataIndex(index) as ix:
        ix.require("entities")
        rows = ix.con.execute(query, {"ids": ids}).fetchall()
    return {qid: int(pop or 0) for qid, pop in rows}


def quartiles(values: Sequence[float]) -> list[float] | None:
    """25th, 50th and 75th percentiles (inclusive method; None for no values)."""
    if not values:
        return None
    if len(values) == 1:
        return [float(values[0])] * 3
    return [float(q) for q in statistics.quantiles(values, n=4, method="inclusive")]


# --------------------------------------------------------------------------- result
@dataclass
class ReportResult:
    """The report's numbers (report.json) and the files written."""

    report: dict[str, Any]
    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        t2 = self.report["table2_precision_recall"]
        lines = ["             original   env (mean ± std)   change"]
        for k in TABLE2_KEYS:
            row = t2[k]
            lines.append(f"{_LABEL[k]:<12} {100 * row['original']:8.2f}   {100 * row['env_mean']:7.2f} ± "
                         f"{100 * row['env_std']:5.2f}   {100 * row['change']:+7.2f}")
        c = self.report["consistency"]["overall"]
        if c["rate"] is not None:
            lines.append(f"consistency rate: {100 * c['rate']:.2f}% of {c['original_correct']} facts "
                         "correct on the original stay correct on the renamed twins")
        return "\n".join(lines)


_LABEL = {"precision": "Precision", "recall": "Recall", "f1": "F1", "ign_f1": "Ign F1",
          "name_independent_ign_f1": "Ign F1 (name-indep.)", "intra_f1": "Intra F1", "inter_f1": "Inter F1"}


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.2f}"


# --------------------------------------------------------------------------- main
def make_report(
    original_gold: str | os.PathLike[str],
    original_pred: str | os.PathLike[str],
    env_gold: str | os.PathLike[str],
    env_pred: str | os.PathLike[str],
    *,
    out: str | os.PathLike[str],
    index: str | os.PathLike[str] | None = None,
    train: Sequence[str | os.PathLike[str]] = (),
    substitutions: str | os.PathLike[str] | None = None,
    stats: str | os.PathLike[str] | None = None,
    scorer: str = "docred",
) -> ReportResult:
    """Compute every analysis, write report.json, report.md and the plots into ``out``."""
    out_dir = Path(out)
    check_outputs_differ([out_dir / name for name in REPORT_FILES],
                         [original_gold, original_pred, env_gold, env_pred, *train, substitutions, stats])
    og: list[Doc] = read_gold(original_gold)
    eg: list[Doc] = read_gold(env_gold)
    op = load_predictions(original_pred)
    ep = load_predictions(env_pred)
    seeds = env_seeds(eg)
    if seeds is None:
        raise DataError(f"{env_gold}: titles lack the seed suffix -k (e.g. 'Loud Tour-1'); pass the Env file "
                        "written by `envbench generate` as --env-gold")
    train_docs: list[Doc] = []
    for p in train:
        train_docs.extend(read_documents(p, skip_flag=None).docs)
    facts = train_facts(train_docs) if train else None
    warnings: list[str] = []
    notes: list[str] = []
    env_dir = Path(env_gold).parent
    sub_path = Path(substitutions) if substitutions else env_dir / "substitutions.parquet"
    subs_rows = read_substitution_rows(sub_path) if sub_path.exists() else None
    if subs_rows is None:
        notes.append(f"no substitutions.parquet at {sub_path}: Table 4 and the name-independent Ign F1 are "
                     "skipped; pass --substitutions FILE from `envbench generate`")

    ign_names = None
    if subs_rows is not None and facts is not None:
        ign_names, _ = original_names(eg, read_substitutions(sub_path))
    orig_scores = score(og, op, facts=facts, scorer=scorer, source=str(original_pred))
    env_pooled, env_summary = score_env(eg, ep, seeds=seeds, facts=facts, original_names=ign_names,
                                        scorer=scorer, source=str(env_pred))
    for s, name, gold_path in ((orig_scores, original_pred, original_gold), (env_pooled, env_pred, env_gold)):
        s.pop("notes")  # the report states its own notes once
        if not s["n_gold"]:
            warnings.append(f"{gold_path} has no gold facts (no labels), so its scores are 0; pass a labelled file")
        if s["n_unknown_title_preds"]:
            warnings.append(f"{name}: {s['n_unknown_title_preds']} predictions name {s['n_unknown_titles']} titles "
                            "that are not in the gold file; they count against precision")
    if facts is None:
        notes.append("Ign F1 equals F1: no training documents were given (--train), so no correct fact can be "
                     "discounted as seen in training; Table 5 is skipped too")

    # Table 2 and 3: original vs env mean ± std over seeds.
    def compare(keys: Sequence[str]) -> dict[str, Any]:
        rows: dict[str, Any] = {}
        for k in keys:
            o, m = orig_scores[k], env_summary["mean"][k]
            rows[k] = {"original": o, "env_mean": m, "env_std": env_summary["std"][k], "env_pooled": env_pooled[k],
                       "change": m - o, "relative_change": (m - o) / o if o > 0 else None}
        return rows

    table2 = compare(TABLE2_KEYS)
    if ign_names is not None:
        m = env_summary["mean"]["name_independent_ign_f1"]
        o = orig_scores["ign_f1"]
        table2["name_independent_ign_f1"] = {
            "original": o, "env_mean": m, "env_std": env_summary["std"]["name_independent_ign_f1"],
            "env_pooled": None, "change": m - o, "relative_change": (m - o) / o if o > 0 else None,
        }
    table3 = compare(TABLE3_KEYS)

    oc = _checked(og, op, str(original_pred))
    ec = _checked(eg, ep, str(env_pred))

    # Figure 4: F1 by number of entities per document.
    n_ent = {d["title"]: len(d["vertexSet"]) for d in og}
    n_ent_env = {d["title"]: len(d["vertexSet"]) for d in eg}
    ob = slice_scores(og, oc, lambda t, h, tt, r: (_bucket(n_ent[t]),))
    eb = slice_scores(eg, ec, lambda t, h, tt, r: (_bucket(n_ent_env[t]),))
    buckets = []
    for label, lo, hi in ENTITY_BUCKETS:
        docs_o = [n for n in n_ent.values() if lo <= n <= hi]
        docs_e = [n for n in n_ent_env.values() if lo <= n <= hi]
        buckets.append({
            "bucket": label, "n_docs_original": len(docs_o), "n_docs_env": len(docs_e),
            "mean_entities": statistics.fmean(docs_o) if docs_o else None,
            "original_f1": ob[label]["f1"] if label in ob else None,
            "env_f1": eb[label]["f1"] if label in eb else None,
        })
    used = [b for b in buckets if b["mean_entities"] is not None and b["original_f1"] is not None]
    xs = [b["mean_entities"] for b in used]
    figure4 = {
        "buckets": buckets,
        "slope_original": linear_slope(xs, [b["original_f1"] for b in used], [b["n_docs_original"] for b in used]),
        "slope_env": linear_slope(xs, [b["env_f1"] or 0.0 for b in used], [b["n_docs_env"] for b in used]),
        "slope_unit": "F1 (fraction) per additional entity; least squares over buckets weighted by documents",
    }

    # Per-type F1 (facts whose head or tail has the type): the per-type drop plot.
    def type_keys(types: Mapping[str, list[str]]) -> Callable[[str, int, int, str], Iterable[Hashable]]:
        return lambda t, h, tt, r: {types[t][h], types[t][tt]}

    otypes = {d["title"]: [entity_type(e) for e in d["vertexSet"]] for d in og}
    etypes = {d["title"]: [entity_type(e) for e in d["vertexSet"]] for d in eg}
    ot = slice_scores(og, oc, type_keys(otypes))
    et = slice_scores(eg, ec, type_keys(etypes))
    def typed_f1(sl: Mapping[Hashable, Mapping[str, float]], ty: str) -> float | None:
        return sl[ty]["f1"] if ty in sl and sl[ty]["n_gold"] > 0 else None  # no gold fact: F1 is undefined

    per_type = {
        ty: {"original_f1": typed_f1(ot, ty), "env_f1": typed_f1(et, ty),
             "n_gold_original": int(ot[ty]["n_gold"]) if ty in ot else 0,
             "n_gold_env": int(et[ty]["n_gold"]) if ty in et else 0}
        for ty in TYPES if ty in ot or ty in et
    }
    for row in per_type.values():
        o, e = row["original_f1"], row["env_f1"]
        row["drop"] = (o - e) if o is not None and e is not None else None

    # Table 5: share of mentions whose name occurs in the training documents.
    table5 = None
    if train_docs:
        train_names = {m["name"] for d in train_docs for e in d["vertexSet"] for m in e}
        table5 = {"original": _name_overlap(og, train_names), "env": _name_overlap(eg, train_names)}

    # Table 1: substitution rates.
    table1 = _substitution_rates(stats, env_dir, subs_rows, notes)

    # Table 4: popularity of the renamed entities per type.
    table4 = None
    if subs_rows is not None:
        if index is None:
            notes.append("Table 4 (popularity) skipped: pass --index DIR (from `envbench ingest-dump`)")
        else:
            table4 = _popularity_table(subs_rows, index, eg, ec)

    consistency = consistency_rate(og, oc, eg, ec)
    if consistency["n_twins_without_original"]:
        warnings.append(f"{consistency['n_twins_without_original']} Env documents have no original document "
                        f"in {original_gold}; they are left out of the consistency rate")

    report = {
        "inputs": {"original_gold": str(original_gold), "original_pred": str(original_pred),
                   "env_gold": str(env_gold), "env_pred": str(env_pred), "train": [str(t) for t in train],
                   "index": str(index) if index else None, "substitutions": str(sub_path) if subs_rows else None},
        "seeds": seeds,
        "original": orig_scores,
        "env": {"pooled": env_pooled, **env_summary},
        "table1_substitution_rates": table1,
        "table2_precision_recall": table2,
        "table3_intra_inter": table3,
        "table4_popularity": table4,
        "table5_names_in_train": table5,
        "figure4_f1_by_entities": figure4,
        "per_type_f1": per_type,
        "consistency": consistency,
        "notes": notes,
        "warnings": warnings,
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    files = [out_dir / "report.json", out_dir / "report.md"]
    result = ReportResult(report=report, files=files, warnings=warnings, notes=notes)
    markdown = render_markdown(report).encode("utf-8")
    plots = _plots(out_dir, figure4, per_type)  # first: matplotlib is what most likely fails
    write_bytes_atomic(files[1], markdown)
    write_json_atomic(files[0], report, indent=True)  # last: its presence means the report is complete
    files += plots
    return result


def _name_overlap(docs: Sequence[Mapping[str, Any]], names: set[str]) -> dict[str, Any]:
    per: dict[str, list[int]] = {}
    for d in docs:
        for e in d["vertexSet"]:
            ty = entity_type(e)
            c = per.setdefault(ty, [0, 0])
            for m in e:
                c[0] += 1
                c[1] += m["name"] in names
    total = [sum(c[0] for c in per.values()), sum(c[1] for c in per.values())]
    rows = {ty: {"mentions": c[0], "in_train": c[1], "share": c[1] / c[0] if c[0] else None}
            for ty, c in sorted(per.items(), key=lambda kv: _type_order(kv[0]))}
    rows["total"] = {"mentions": total[0], "in_train": total[1], "share": total[1] / total[0] if total[0] else None}
    return rows


def _type_order(ty: str) -> tuple[int, str]:
    return (TYPES.index(ty) if ty in TYPES else len(TYPES), ty)


def _substitution_rates(stats: str | os.PathLike[str] | None, env_dir: Path,
                        rows: list[dict[str, Any]] | None, notes: list[str]) -> dict[str, Any] | None:
    path = Path(stats) if stats else env_dir / "stats.json"
    if path.exists():
        data = read_json_file(path, "stats.json")
        if not isinstance(data, dict) or not isinstance(data.get("substitution_rate"), dict):
            raise DataError(f"{path}: has no 'substitution_rate' object; pass the stats.json of `envbench generate`")
        return {"source": str(path), "substitution_rate": data["substitution_rate"],
                "kept_reasons": data.get("kept_reasons", {})}
    if rows is not None:
        per: dict[str, list[int]] = {}
        reasons: dict[str, int] = {}
        for r in rows:
            c = per.setdefault(r["coarse_type"] or "MISC", [0, 0])
            c[0] += 1
            if r["kind"] != "kept":
                c[1] += 1
            else:
                key = r.get("reason") or "unspecified"
                reasons[key] = reasons.get(key, 0) + 1
        rate = {ty: c[1] / c[0] for ty, c in sorted(per.items(), key=lambda kv: _type_order(kv[0]))}
        n = sum(c[0] for c in per.values())
        rate["total"] = sum(c[1] for c in per.values()) / n if n else 0.0
        notes.append(f"no stats.json at {path}: Table 1 computed from substitutions.parquet")
        return {"source": "substitutions.parquet", "substitution_rate": rate, "kept_reasons": reasons}
    notes.append(f"Table 1 skipped: no stats.json at {path}; pass --stats FILE from `envbench generate`")
    return None


def _popularity_table(rows: list[dict[str, Any]], index: str | os.PathLike[str],
                      env_docs: Sequence[Mapping[str, Any]], env_checked: CheckedPredictions) -> dict[str, Any]:
    titles = {d["title"] for d in env_docs}
    linked = [r for r in rows if r["title"] in titles and r["kind"] == "linked" and r["qid"] and r["new_qid"]]
    pop = popularity(index, [r["qid"] for r in linked] + [r["new_qid"] for r in linked])
    per_type: dict[str, Any] = {}
    members: dict[tuple[str, int], tuple[str, int]] = {}  # (title, entity) -> (type, quartile 1-4)
    by_type: dict[str, list[dict[str, Any]]] = {}
    for r in linked:
        by_type.setdefault(r["coarse_type"] or "MISC", []).append(r)
    for ty, rs in sorted(by_type.items(), key=lambda kv: _type_order(kv[0])):
        old = [pop.get(r["qid"], 0) for r in rs]
        new = [pop.get(r["new_qid"], 0) for r in rs]
        qs = quartiles(new)
        for r, p in zip(rs, new):
            q = 1 + sum(p > b for b in qs) if qs else 1  # type: ignore[union-attr]
            members[(r["title"], int(r["entity"]))] = (ty, q)
        per_type[ty] = {"renamed": len(rs), "original_quartiles": quartiles(old), "new_quartiles": qs,
                        "original_median": statistics.median(old), "new_median": statistics.median(new),
                        "missing_in_index": sum(1 for r in rs if r["new_qid"] not in pop or r["qid"] not in pop)}

    def keys(t: str, h: int, tt: int, r: str) -> Iterable[Hashable]:
        return {members[k] for k in ((t, h), (t, tt)) if k in members}

    sl = slice_scores(env_docs, env_checked, keys)
    for ty, row in per_type.items():
        row["env_f1_by_new_popularity_quartile"] = {
            f"Q{q}": (sl[(ty, q)]["f1"] if (ty, q) in sl else None) for q in (1, 2, 3, 4)
        }
    return {"per_type": per_type,
            "note": "popularity = item-valued statements with the item as subject or object; quartiles of the "
                    "replacement items per type; F1 over Env facts whose head or tail is such a renamed entity"}


def consistency_rate(
    orig_docs: Sequence[Mapping[str, Any]], orig_checked: CheckedPredictions,
    env_docs: Sequence[Mapping[str, Any]], env_checked: CheckedPredictions,
) -> dict[str, Any]:
    """Of the facts predicted correctly on an original document, the share still correct on each twin."""
    def correct_by_title(docs: Sequence[Mapping[str, Any]], checked: CheckedPredictions) -> dict[str, set]:
        gold = {(d["title"], lab["h"], lab["t"], lab["r"]) for d in docs for lab in d.get("labels", []) or []}
        out: dict[str, set] = {}
        for f in checked.facts:
            if f in gold:
                out.setdefault(f[0], set()).add(f[1:])
        return out

    oc = correct_by_title(orig_docs, orig_checked)
    ec = correct_by_title(env_docs, env_checked)
    orig_titles = {d["title"] for d in orig_docs}
    per_rel: dict[str, list[int]] = {}
    total = [0, 0]
    missing = 0
    for d in env_docs:
        base = split_seed(d["title"])
        if base is None or base[0] not in orig_titles:
            missing += 1
            continue
        kept = ec.get(d["title"], set())
        for h, t, r in oc.get(base[0], ()):
            c = per_rel.setdefault(r, [0, 0])
            c[0] += 1
            total[0] += 1
            if (h, t, r) in kept:
                c[1] += 1
                total[1] += 1
    rel_rows = {
        r: {"name": RELATIONS[r], "original_correct": c[0], "still_correct": c[1], "rate": c[1] / c[0]}
        for r, c in sorted(per_rel.items(), key=lambda kv: (-kv[1][0], int(kv[0][1:])))
    }
    return {
        "overall": {"original_correct": total[0], "still_correct": total[1],
                    "rate": total[1] / total[0] if total[0] else None},
        "per_relation": rel_rows,
        "n_twins_without_original": missing,
    }


# --------------------------------------------------------------------------- output
def render_markdown(rep: Mapping[str, Any]) -> str:
    """report.md: every table of report.json, percentages with two decimals."""
    L: list[str] = ["# envbench report: original vs Env", ""]
    inp = rep["inputs"]
    L += [f"Original: `{inp['original_gold']}` with `{inp['original_pred']}`; "
          f"Env: `{inp['env_gold']}` with `{inp['env_pred']}` (seeds {', '.join(map(str, rep['seeds']))}).", ""]
    L += ["## Precision, recall and F1 (Table 2)", "",
          "| | original | Env (mean ± std over seeds) | change (points) | relative |", "|---|---:|---:|---:|---:|"]
    for k, row in rep["table2_precision_recall"].items():
        rel = "–" if row["relative_change"] is None else f"{100 * row['relative_change']:+.1f}%"
        L.append(f"| {_LABEL[k]} | {_pct(row['original'])} | {_pct(row['env_mean'])} ± {_pct(row['env_std'])} | "
                 f"{100 * row['change']:+.2f} | {rel} |")
    L += ["", "## Intra- and inter-sentence F1 (Table 3)", "",
          "| | original | Env (mean ± std) | change (points) |", "|---|---:|---:|---:|"]
    for k, row in rep["table3_intra_inter"].items():
        L.append(f"| {_LABEL[k]} | {_pct(row['original'])} | {_pct(row['env_mean'])} ± {_pct(row['env_std'])} | "
                 f"{100 * row['change']:+.2f} |")
    env = rep["env"]
    L += ["", "## Env scores per seed", "", "| seed | " + " | ".join(_LABEL[k] for k in TABLE2_KEYS) + " |",
          "|---|" + "---:|" * len(TABLE2_KEYS)]
    for seed, s in env["seeds"].items():
        L.append(f"| {seed} | " + " | ".join(_pct(s[k]) for k in TABLE2_KEYS) + " |")
    L.append(f"\nWorst seed: {env['worst_seed']['seed']} (F1 {_pct(env['worst_seed']['f1'])}).")
    f4 = rep["figure4_f1_by_entities"]
    L += ["", "## F1 by number of entities per document (Figure 4)", "",
          "| entities | documents | original F1 | Env F1 |", "|---|---:|---:|---:|"]
    for b in f4["buckets"]:
        L.append(f"| {b['bucket']} | {b['n_docs_original']} | {_pct(b['original_f1'])} | {_pct(b['env_f1'])} |")
    def slope(x: float | None) -> str:
        return "–" if x is None else f"{100 * x:+.3f}"
    L += ["", f"Linear-fit slope (F1 points per entity): original {slope(f4['slope_original'])}, "
          f"Env {slope(f4['slope_env'])}. Plot: `f1_by_entities.png`."]
    L += ["", "## F1 by entity type (facts whose head or tail has the type)", "",
          "| type | original F1 | Env F1 | drop (points) |", "|---|---:|---:|---:|"]
    for ty, row in rep["per_type_f1"].items():
        drop = "–" if row["drop"] is None else f"{100 * row['drop']:.2f}"
        L.append(f"| {ty} | {_pct(row['original_f1'])} | {_pct(row['env_f1'])} | {drop} |")
    L += ["", "Plot: `type_drop.png`."]
    t4 = rep["table4_popularity"]
    L += ["", "## Popularity of renamed entities (Table 4)", ""]
    if t4 is None:
        L.append("Skipped (needs --index and substitutions.parquet).")
    else:
        L += ["| type | renamed | not in index | original median | new median | new Q1 / Q2 / Q3 "
              "| Env F1 by new-name quartile Q1 / Q2 / Q3 / Q4 |",
              "|---|---:|---:|---:|---:|---|---|"]
        for ty, row in t4["per_type"].items():
            qs = " / ".join(f"{q:g}" for q in row["new_quartiles"] or [])
            f1s = " / ".join(_pct(v) for v in row["env_f1_by_new_popularity_quartile"].values())
            L.append(f"| {ty} | {row['renamed']} | {row['missing_in_index']} | {row['original_median']:g} | "
                     f"{row['new_median']:g} | {qs} | {f1s} |")
        L += ["", t4["note"] + "."]
    t5 = rep["table5_names_in_train"]
    L += ["", "## Mentions whose name occurs in training (Table 5)", ""]
    if t5 is None:
        L.append("Skipped (needs --train).")
    else:
        L += ["| type | original | Env |", "|---|---:|---:|"]
        for ty in t5["original"]:
            e = t5["env"].get(ty, {"share": None})
            L.append(f"| {ty} | {_pct(t5['original'][ty]['share'])} | {_pct(e['share'])} |")
    t1 = rep["table1_substitution_rates"]
    L += ["", "## Substitution rates (Table 1)", ""]
    if t1 is None:
        L.append("Skipped (needs stats.json or substitutions.parquet).")
    else:
        L += ["| type | substituted |", "|---|---:|"]
        rates = t1["substitution_rate"]
        for ty in sorted(rates, key=lambda k: (k == "total", _type_order(k))):
            L.append(f"| {ty} | {_pct(rates[ty])} |")
        if t1["kept_reasons"]:
            L += ["", "Kept entities by reason: " + ", ".join(f"{k} {v}" for k, v in sorted(t1["kept_reasons"].items()))
                  + "."]
    c = rep["consistency"]
    L += ["", "## Consistency rate", "",
          "Of the facts predicted correctly on an original document, the share still predicted correctly on "
          "each renamed twin.", "",
          f"Overall: {_pct(c['overall']['rate'])}% ({c['overall']['still_correct']} of "
          f"{c['overall']['original_correct']}).", "",
          "| relation | name | correct on original (× twins) | still correct | rate |", "|---|---|---:|---:|---:|"]
    for r, row in c["per_relation"].items():
        L.append(f"| {r} | {row['name']} | {row['original_correct']} | {row['still_correct']} | {_pct(row['rate'])} |")
    if rep["notes"] or rep["warnings"]:
        L += ["", "## Notes", ""] + [f"- {n}" for n in rep["notes"]] + [f"- Warning: {w}" for w in rep["warnings"]]
    return "\n".join(L) + "\n"


def _plots(out: Path, figure4: Mapping[str, Any], per_type: Mapping[str, Any]) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    meta = {"Software": None}  # no version stamp: same inputs give the same bytes
    files = []
    buckets = figure4["buckets"]
    labels = [b["bucket"] for b in buckets]
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    for key, name, style in (("original_f1", "original", "o-"), ("env_f1", "Env", "s--")):
        ys = [100 * b[key] if b[key] is not None else float("nan") for b in buckets]
        ax.plot(labels, ys, style, label=name)
    ax.set_xlabel("entities per document")
    ax.set_ylabel("F1 (%)")
    ax.set_title("F1 by number of entities")
    ax.legend()
    fig.tight_layout()
    path = out / "f1_by_entities.png"
    _save(fig, path, meta)
    plt.close(fig)
    files.append(path)

    types = [t for t, row in per_type.items() if row["original_f1"] is not None and row["env_f1"] is not None]
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    xs = range(len(types))
    o = [100 * (per_type[t]["original_f1"] or 0.0) for t in types]
    e = [100 * (per_type[t]["env_f1"] or 0.0) for t in types]
    ax.bar([x - 0.2 for x in xs], o, width=0.4, label="original")
    ax.bar([x + 0.2 for x in xs], e, width=0.4, label="Env")
    for x, a, b in zip(xs, o, e):
        ax.annotate(f"{b - a:+.1f}", (x + 0.2, b), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(list(xs), types)
    ax.set_ylabel("F1 (%)")
    ax.set_title("F1 by entity type (head or tail), original vs Env")
    ax.set_ylim(0, 110)
    ax.legend(loc="upper right", ncols=2)
    fig.tight_layout()
    path = out / "type_drop.png"
    _save(fig, path, meta)
    plt.close(fig)
    files.append(path)
    return files


def _save(fig: Any, path: Path, meta: Mapping[str, Any]) -> None:
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata=dict(meta))
    write_bytes_atomic(path, buf.getvalue())
