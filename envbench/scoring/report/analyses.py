"""The report's analyses, one function each; every one takes documents or scores and returns plain data.

Nothing here reads or writes files (except :func:`popularity`, which queries the index): the
orchestration is in :mod:`envbench.scoring.report.build`, the rendering in ``markdown`` and ``plots``.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

from envbench.core.relations import RELATIONS
from envbench.core.types import COARSE_TYPES
from envbench.formats.docred import entity_type
from envbench.formats.predictions import CheckedPredictions, check_predictions
from envbench.scoring.evaluate import split_seed
from envbench.scoring.metrics import prf

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
TABLE2_KEYS = ("precision", "recall", "f1", "ign_f1")
TABLE3_KEYS = ("intra_f1", "inter_f1")
POPULARITY_NOTE = ("popularity = item-valued statements with the item as subject or object; quartiles of the "
                   "replacement items per type; F1 over Env facts whose head or tail is such a renamed entity")
SLOPE_UNIT = "F1 (fraction) per additional entity; least squares over buckets weighted by documents"


# --------------------------------------------------------------------------- building blocks
def checked(docs: Sequence[Mapping[str, Any]], preds: Sequence[Any], source: str) -> CheckedPredictions:
    """Predictions validated against ``docs`` and de-duplicated (the input of every slice)."""
    return check_predictions(preds, {d["title"]: len(d["vertexSet"]) for d in docs}, source=source)


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


def entity_bucket(n: int) -> str:
    """Figure 4's bucket label for a document with ``n`` entities."""
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


def quartiles(values: Sequence[float]) -> list[float] | None:
    """25th, 50th and 75th percentiles (inclusive method; None for no values)."""
    if not values:
        return None
    if len(values) == 1:
        return [float(values[0])] * 3
    return [float(q) for q in statistics.quantiles(values, n=4, method="inclusive")]


def type_order(ty: str) -> tuple[int, str]:
    """Coarse types in their canonical order, then any other type by name."""
    return (TYPES.index(ty) if ty in TYPES else len(TYPES), ty)


def has_popularity(index: str | os.PathLike[str]) -> bool:
    """Whether the index knows any item's popularity: an index made from a dump without item-valued
    statements has it null for every item (``wikidata_index.ingest``)."""
    from wikidata_index.index import WikidataIndex

    with WikidataIndex(index) as ix:
        ix.require("entities")
        return bool(ix.con.execute("SELECT count(popularity) FROM entities").fetchall()[0][0])


def popularity(index: str | os.PathLike[str], qids: Iterable[str]) -> dict[str, int]:
    """Popularity of each item id in the index (missing ids, and ids whose popularity the index does not
    know, are left out), by one SQL join."""
    ids = sorted(set(qids))
    if not ids:
        return {}
    query = ("SELECT e.id, e.popularity FROM entities e "
             "JOIN (SELECT unnest($ids::VARCHAR[]) AS id) q ON e.id = q.id ORDER BY e.id")
    from wikidata_index.index import WikidataIndex

    with WikidataIndex(index) as ix:
        ix.require("entities")
        rows = ix.con.execute(query, {"ids": ids}).fetchall()
    return {qid: int(pop) for qid, pop in rows if pop is not None}


def _relative(change: float, original: float) -> float | None:
    return change / original if original > 0 else None


# --------------------------------------------------------------------------- Tables 2 and 3
def compare(original: Mapping[str, Any], env_summary: Mapping[str, Any], env_pooled: Mapping[str, Any],
            keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per score: original, Env mean ± std over seeds, Env pooled, and the change of the mean."""
    rows: dict[str, Any] = {}
    for k in keys:
        o, m = original[k], env_summary["mean"][k]
        rows[k] = {"original": o, "env_mean": m, "env_std": env_summary["std"][k], "env_pooled": env_pooled[k],
                   "change": m - o, "relative_change": _relative(m - o, o)}
    return rows


def precision_recall_table(original: Mapping[str, Any], env_summary: Mapping[str, Any],
                           env_pooled: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Table 2: P, R, F1, Ign F1, and the name-independent Ign F1 of Env against the original's Ign F1."""
    table = compare(original, env_summary, env_pooled, TABLE2_KEYS)
    if "name_independent_ign_f1" in env_summary["mean"]:
        m, o = env_summary["mean"]["name_independent_ign_f1"], original["ign_f1"]
        table["name_independent_ign_f1"] = {
            "original": o, "env_mean": m, "env_std": env_summary["std"]["name_independent_ign_f1"],
            "env_pooled": env_pooled["name_independent_ign_f1"], "change": m - o,
            "relative_change": _relative(m - o, o),
        }
    return table


def intra_inter_table(original: Mapping[str, Any], env_summary: Mapping[str, Any],
                      env_pooled: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Table 3: intra- and inter-sentence F1."""
    return compare(original, env_summary, env_pooled, TABLE3_KEYS)


# --------------------------------------------------------------------------- Figure 4 and per-type F1
def f1_by_entities(orig_docs: Sequence[Mapping[str, Any]], orig_checked: CheckedPredictions,
                   env_docs: Sequence[Mapping[str, Any]], env_checked: CheckedPredictions) -> dict[str, Any]:
    """Figure 4: F1 per bucket of entities per document, and the document-weighted linear-fit slopes."""
    n_ent = {d["title"]: len(d["vertexSet"]) for d in orig_docs}
    n_ent_env = {d["title"]: len(d["vertexSet"]) for d in env_docs}
    ob = slice_scores(orig_docs, orig_checked, lambda t, h, tt, r: (entity_bucket(n_ent[t]),))
    eb = slice_scores(env_docs, env_checked, lambda t, h, tt, r: (entity_bucket(n_ent_env[t]),))
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
    return {
        "buckets": buckets,
        "slope_original": linear_slope(xs, [b["original_f1"] for b in used], [b["n_docs_original"] for b in used]),
        "slope_env": linear_slope(xs, [b["env_f1"] or 0.0 for b in used], [b["n_docs_env"] for b in used]),
        "slope_unit": SLOPE_UNIT,
    }


def _type_keys(docs: Sequence[Mapping[str, Any]]) -> Callable[[str, int, int, str], Iterable[Hashable]]:
    types = {d["title"]: [entity_type(e) for e in d["vertexSet"]] for d in docs}
    return lambda t, h, tt, r: {types[t][h], types[t][tt]}


def per_type_f1(orig_docs: Sequence[Mapping[str, Any]], orig_checked: CheckedPredictions,
                env_docs: Sequence[Mapping[str, Any]], env_checked: CheckedPredictions) -> dict[str, Any]:
    """F1 over the facts whose head or tail has each type, original and Env, and the drop."""
    ot = slice_scores(orig_docs, orig_checked, _type_keys(orig_docs))
    et = slice_scores(env_docs, env_checked, _type_keys(env_docs))

    def typed_f1(sl: Mapping[Hashable, Mapping[str, float]], ty: str) -> float | None:
        return sl[ty]["f1"] if ty in sl and sl[ty]["n_gold"] > 0 else None  # no gold fact: F1 is undefined

    rows = {
        ty: {"original_f1": typed_f1(ot, ty), "env_f1": typed_f1(et, ty),
             "n_gold_original": int(ot[ty]["n_gold"]) if ty in ot else 0,
             "n_gold_env": int(et[ty]["n_gold"]) if ty in et else 0}
        for ty in TYPES if ty in ot or ty in et
    }
    for row in rows.values():
        o, e = row["original_f1"], row["env_f1"]
        row["drop"] = (o - e) if o is not None and e is not None else None
    return rows


# --------------------------------------------------------------------------- Table 5
def name_overlap(docs: Sequence[Mapping[str, Any]], names: set[str]) -> dict[str, Any]:
    """Per type and in total: mentions, how many have a name in ``names``, and the share."""
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
            for ty, c in sorted(per.items(), key=lambda kv: type_order(kv[0]))}
    rows["total"] = {"mentions": total[0], "in_train": total[1], "share": total[1] / total[0] if total[0] else None}
    return rows


def names_in_train(orig_docs: Sequence[Mapping[str, Any]], env_docs: Sequence[Mapping[str, Any]],
                   train_docs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Table 5: the share of mentions whose name occurs in the training documents."""
    train_names = {m["name"] for d in train_docs for e in d["vertexSet"] for m in e}
    return {"original": name_overlap(orig_docs, train_names), "env": name_overlap(env_docs, train_names)}


# --------------------------------------------------------------------------- Table 1
def substitution_rates_from_stats(stats: Mapping[str, Any], source: str) -> dict[str, Any]:
    """Table 1 from a stats.json of `envbench generate` (already checked to have substitution_rate)."""
    return {"source": source, "substitution_rate": stats["substitution_rate"],
            "kept_reasons": stats.get("kept_reasons", {}), "gender": stats.get("gender")}


def substitution_rates_from_rows(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Table 1 counted from the rows of substitutions.parquet: renamed share per type, kept reasons."""
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
    rate = {ty: c[1] / c[0] for ty, c in sorted(per.items(), key=lambda kv: type_order(kv[0]))}
    n = sum(c[0] for c in per.values())
    rate["total"] = sum(c[1] for c in per.values()) / n if n else 0.0
    return {"source": "substitutions.parquet", "substitution_rate": rate, "kept_reasons": reasons}


# --------------------------------------------------------------------------- Table 4
def popularity_table(rows: Sequence[Mapping[str, Any]], index: str | os.PathLike[str],
                     env_docs: Sequence[Mapping[str, Any]], env_checked: CheckedPredictions) -> dict[str, Any]:
    """Table 4: popularity quartiles of the original and the replacement items per type, and Env F1
    by the replacement's popularity quartile."""
    titles = {d["title"] for d in env_docs}
    linked = [r for r in rows if r["title"] in titles and r["kind"] == "linked" and r["qid"] and r["new_qid"]]
    pop = popularity(index, [r["qid"] for r in linked] + [r["new_qid"] for r in linked])
    per_type: dict[str, Any] = {}
    members: dict[tuple[str, int], tuple[str, int]] = {}  # (title, entity) -> (type, quartile 1-4)
    by_type: dict[str, list[Mapping[str, Any]]] = {}
    for r in linked:
        by_type.setdefault(r["coarse_type"] or "MISC", []).append(r)
    for ty, rs in sorted(by_type.items(), key=lambda kv: type_order(kv[0])):
        old = [pop.get(r["qid"], 0) for r in rs]
        new = [pop.get(r["new_qid"], 0) for r in rs]
        qs = quartiles(new)
        for r, p in zip(rs, new):
            q = 1 + sum(p > b for b in qs) if qs else 1
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
    return {"per_type": per_type, "note": POPULARITY_NOTE}


# --------------------------------------------------------------------------- consistency
def covered_originals(orig_docs: list[Any], orig_preds: list[Any], env_docs: Sequence[Mapping[str, Any]],
                      ) -> tuple[list[Any], list[Any], list[str]]:
    """The original documents (and their predictions) that the Env file has renamed copies of, and the
    titles of the others: a report compares both sides over the same documents."""
    renamed = {base[0] for d in env_docs if (base := split_seed(d["title"])) is not None}
    uncovered = [d["title"] for d in orig_docs if d["title"] not in renamed]
    if not uncovered:
        return orig_docs, orig_preds, []
    kept = [d for d in orig_docs if d["title"] in renamed]
    dropped = set(uncovered)
    preds = [p for p in orig_preds if not (isinstance(p, Mapping) and p.get("title") in dropped)]
    return kept, preds, uncovered


def twins_without_original(orig_docs: Sequence[Mapping[str, Any]],
                           env_docs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Titles of the Env documents whose source title is not an original document, in file order."""
    orig_titles = {d["title"] for d in orig_docs}
    out = []
    for d in env_docs:
        base = split_seed(d["title"])
        if base is None or base[0] not in orig_titles:
            out.append(d["title"])
    return out


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
