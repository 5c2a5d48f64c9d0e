"""report.md: every table of report.json as Markdown, percentages with two decimals."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envbench.scoring.evaluate import mean_std_text, spread_label
from envbench.scoring.report.analyses import TABLE2_KEYS, type_order

LABELS = {"precision": "Precision", "recall": "Recall", "f1": "F1", "ign_f1": "Ign F1",
          "name_independent_ign_f1": "Ign F1 (name-indep.)", "intra_f1": "Intra F1", "inter_f1": "Inter F1"}


POOLED_NOTE = ("Mean ± std: each renaming seed's copy scored alone, then averaged (Tables 2 and 3 here); the ± is "
               "the spread over renaming seeds for this one model, not the paper's ±, which is over 5 training "
               "runs. Pooled: all copies scored as one file, as the Env-DocRE/EVRT reference code prints it.")


def pct(x: float | None) -> str:
    """A fraction as a percentage with two decimals; an undefined value as a dash."""
    return "–" if x is None else f"{100 * x:.2f}"


def _slope(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:+.3f}"


def code(text: str) -> str:
    """``text`` (a path the user gave) as inline code that cannot end early or start a new block: a
    backtick or a line break in a folder name had put "## injected" as a heading into report.md."""
    return "`" + text.replace("`", "'").replace("\r", "\\r").replace("\n", "\\n") + "`"


def _header(rep: Mapping[str, Any]) -> list[str]:
    inp = rep["inputs"]
    return ["# envbench report: original vs Env", "",
            f"Original: {code(inp['original_gold'])} with {code(inp['original_pred'])}; "
            f"Env: {code(inp['env_gold'])} with {code(inp['env_pred'])} (seeds {', '.join(map(str, rep['seeds']))}).",
            *([f"Benchmark made from {prov['source']}; {prov['names']}."] if (prov := rep.get("provenance")) else []),
            ""]


def mean_std(mean: float | None, std: float | None, n: int) -> str:
    """"mean ± std" over ``n`` seeds, or the mean alone for one (``evaluate.has_spread``; its std is None)."""
    return mean_std_text(pct(mean), None if std is None else pct(std), n)


def _table2(rows: Mapping[str, Any], n: int) -> list[str]:
    head = spread_label(n, "Env (mean ± std over seeds)", "Env (one seed)")
    lines = ["## Precision, recall and F1 (Table 2)", "",
             f"| | original | {head} | change (points) | relative |", "|---|---:|---:|---:|---:|"]
    for k, row in rows.items():
        rel = "–" if row["relative_change"] is None else f"{100 * row['relative_change']:+.1f}%"
        lines.append(f"| {LABELS[k]} | {pct(row['original'])} | {mean_std(row['env_mean'], row['env_std'], n)} | "
                     f"{100 * row['change']:+.2f} | {rel} |")
    return lines


def _interval(boot: Mapping[str, Any] | None) -> list[str]:
    """The F1 fall with its interval (``compare.fall_intervals``), below Table 2."""
    if not boot:
        return []
    if "skipped" in boot:
        return ["", f"F1 fall: no interval ({boot['skipped']})."]
    f = boot["fall_f1"]
    return ["", f"F1 fall (original minus Env mean): {pct(f['estimate'])} points, {round(100 * f['level'])}% CI "
                f"[{pct(f['low'])}, {pct(f['high'])}] (bootstrap over the {boot['documents']} original documents, "
                f"each with its {boot['env_copies']} renamed copies; {boot['samples']} samples, `envbench compare`'s)."]


def _table3(rows: Mapping[str, Any], n: int) -> list[str]:
    head = spread_label(n, "Env (mean ± std)", "Env (one seed)")
    lines = ["## Intra- and inter-sentence F1 (Table 3)", "",
             f"| | original | {head} | change (points) |", "|---|---:|---:|---:|"]
    for k, row in rows.items():
        lines.append(f"| {LABELS[k]} | {pct(row['original'])} | {mean_std(row['env_mean'], row['env_std'], n)} | "
                     f"{100 * row['change']:+.2f} |")
    return lines


def _seeds(env: Mapping[str, Any]) -> list[str]:
    keys = [*TABLE2_KEYS, *(["name_independent_ign_f1"] if "name_independent_ign_f1" in env["mean"] else [])]
    lines = ["## Env scores per seed", "", "| seed | " + " | ".join(LABELS[k] for k in keys) + " |",
             "|---|" + "---:|" * len(keys)]
    for seed, s in env["seeds"].items():
        lines.append(f"| {seed} | " + " | ".join(pct(s.get(k)) for k in keys) + " |")
    n = len(env["seeds"])
    lines.append(f"| {spread_label(n, alone='mean')} | "
                 + " | ".join(mean_std(env["mean"][k], env["std"][k], n) for k in keys) + " |")
    lines.append("| pooled | " + " | ".join(pct(env["pooled"][k]) for k in keys) + " |")
    lines.append(f"\nWorst seed: {env['worst_seed']['seed']} (F1 {pct(env['worst_seed']['f1'])}). {POOLED_NOTE}")
    return lines


def _figure4(f4: Mapping[str, Any]) -> list[str]:
    lines = ["## F1 by number of entities per document (Figure 4)", "",
             "| entities | documents | original F1 | Env F1 |", "|---|---:|---:|---:|"]
    for b in f4["buckets"]:
        lines.append(f"| {b['bucket']} | {b['n_docs_original']} | {pct(b['original_f1'])} | {pct(b['env_f1'])} |")
    lines += ["", f"Linear-fit slope (F1 points per entity): original {_slope(f4['slope_original'])}, "
              f"Env {_slope(f4['slope_env'])}. Plot: `f1_by_entities.png`."]
    return lines


def _per_type(rows: Mapping[str, Any]) -> list[str]:
    lines = ["## F1 by entity type (facts whose head or tail has the type)", "",
             "| type | gold facts (original) | gold facts (Env, all seeds) | original F1 | Env F1 | drop (points) |",
             "|---|---:|---:|---:|---:|---:|"]
    for ty, row in rows.items():
        drop = "–" if row["drop"] is None else f"{100 * row['drop']:.2f}"
        lines.append(f"| {ty} | {row.get('n_gold_original', 0):,} | {row.get('n_gold_env', 0):,} | "
                     f"{pct(row['original_f1'])} | {pct(row['env_f1'])} | {drop} |")
    return lines + ["", "A type with few gold facts has a wide F1: read its drop with its count. Plot: `type_drop.png` "
                        "(the fact count under each type)."]


def _table4(t4: Mapping[str, Any] | None) -> list[str]:
    lines = ["## Popularity of renamed entities (Table 4)", ""]
    if t4 is None:
        return lines + ["Skipped (needs --index and substitutions.parquet)."]
    lines += ["| type | renamed | not in index | original Q1 / Q2 / Q3 | renamed Q1 / Q2 / Q3 "
              "| Env F1 by new-name quartile Q1 / Q2 / Q3 / Q4 |",
              "|---|---:|---:|---|---|---|"]
    for ty, row in t4["per_type"].items():
        old = " / ".join(f"{q:g}" for q in row["original_quartiles"] or []) or "–"
        qs = " / ".join(f"{q:g}" for q in row["new_quartiles"] or []) or "–"
        f1s = " / ".join(pct(v) for v in row["env_f1_by_new_popularity_quartile"].values())
        lines.append(f"| {ty} | {row['renamed']} | {row['missing_in_index']} | {old} | {qs} | {f1s} |")
    return lines + ["", t4["note"] + "."]


def _table5(t5: Mapping[str, Any] | None) -> list[str]:
    lines = ["## Mentions whose name occurs in training (Table 5)", ""]
    if t5 is None:
        return lines + ["Skipped (needs --train)."]
    lines += ["| type | original | Env |", "|---|---:|---:|"]
    for ty in t5["original"]:
        e = t5["env"].get(ty, {"share": None})
        lines.append(f"| {ty} | {pct(t5['original'][ty]['share'])} | {pct(e['share'])} |")
    return lines


def _table1(t1: Mapping[str, Any] | None) -> list[str]:
    lines = ["## Substitution rates (Table 1)", ""]
    if t1 is None:
        return lines + ["Skipped (needs stats.json or substitutions.parquet)."]
    lines += ["| type | substituted |", "|---|---:|"]
    rates = t1["substitution_rate"]
    for ty in sorted(rates, key=lambda k: (k == "total", type_order(k))):
        lines.append(f"| {ty} | {pct(rates[ty])} |")
    if t1["kept_reasons"]:
        lines += ["", "Kept entities by reason: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(t1["kept_reasons"].items())) + "."]
    if (g := t1.get("gender")) and g.get("persons"):  # stats.json of a generate that kept genders
        lines += ["", f"Persons drawn for: {g['persons']}; gender from P21 {g['from_p21']}, from the document "
                      f"{g['from_document']} ({g['document_over_p21']} against P21), from the pronouns near them "
                      f"{g.get('from_context', 0)}, unknown {g['unknown']}; "
                      f"{g['matched']} of {g['renamed']} substitutions matched on gender, "
                      f"{g['kept_no_gender']} kept for want of one (no_gender)."]
    return lines


def _consistency(c: Mapping[str, Any]) -> list[str]:
    lines = ["## Consistency rate", "",
             "Of the facts predicted correctly on an original document, the share still predicted correctly on "
             "each renamed twin.", "",
             f"Overall: {pct(c['overall']['rate'])}% ({c['overall']['still_correct']} of "
             f"{c['overall']['original_correct']}).", "",
             "| relation | name | correct on original (× twins) | still correct | rate |", "|---|---|---:|---:|---:|"]
    for r, row in c["per_relation"].items():
        lines.append(f"| {r} | {row['name']} | {row['original_correct']} | {row['still_correct']} | "
                     f"{pct(row['rate'])} |")
    return lines


def _notes(rep: Mapping[str, Any]) -> list[str]:
    if not (rep["notes"] or rep["warnings"]):
        return []
    return ["", "## Notes", ""] + [f"- {n}" for n in rep["notes"]] + [f"- Warning: {w}" for w in rep["warnings"]]


def render_markdown(rep: Mapping[str, Any]) -> str:
    """report.md: every table of report.json, percentages with two decimals."""
    sections = [
        _table2(rep["table2_precision_recall"], len(rep["seeds"])) + _interval(rep.get("bootstrap")),
        _table3(rep["table3_intra_inter"], len(rep["seeds"])),
        _seeds(rep["env"]),
        _figure4(rep["figure4_f1_by_entities"]),
        _per_type(rep["per_type_f1"]),
        _table4(rep["table4_popularity"]),
        _table5(rep["table5_names_in_train"]),
        _table1(rep["table1_substitution_rates"]),
        _consistency(rep["consistency"]),
    ]
    lines = _header(rep)
    for i, section in enumerate(sections):
        lines += ([] if i == 0 else [""]) + section
    return "\n".join(lines + _notes(rep)) + "\n"
